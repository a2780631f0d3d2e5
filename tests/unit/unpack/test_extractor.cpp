// unpack/extractor.hpp's extract(), through its interface alone: what it writes into each staging folder (bytes,
// modes, symlinks, empty files and folders, a read-only folder filled before its mode is set), the counts it returns, a component
// given no folder (-1) or not named at all (checked, never written), the same result for any number of jobs, an entry whose
// bytes do not hash as the manifest says, named by its index and path (with file digests: verify, sign, merge, a stream),
// and a frame whose compressed bytes are not the manifest's, refused before any of it is decoded.
#include <fcntl.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "cli/helpers/archive_builder.hpp"
#include "pack/packer.hpp"
#include "unit/support.hpp"
#include "unpack/archive.hpp"
#include "unpack/extractor.hpp"
#include "unpack/frame_stream.hpp"
#include "unpack/payload_source.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"

using namespace ccpack;
namespace fs = std::filesystem;

namespace {

// Inductor: two files (one executable), an empty file, a nested folder, a symlink, a folder of mode 0750;
// Triton: one kernel file and an empty folder. Six files, 5,031 bytes.
void make_cache(const fs::path& root) {
  test::write_file(root / "ind/a.py", "print('a')\n");                      // 11 bytes
  test::write_file(root / "ind/run.sh", "#!/bin/sh\n", 0755);               // 10 bytes
  test::write_file(root / "ind/empty", "");                                 // 0 bytes
  test::write_file(root / "ind/deep/er/x.bin", std::string(5000, '\x07'));  // 5000 bytes
  fs::create_symlink("deep/er/x.bin", root / "ind/link");
  test::write_file(root / "ind/ro/frozen", "cold\n");  // 5 bytes
  fs::permissions(root / "ind/ro", fs::perms(0750));
  test::write_file(root / "tri/k/kernel.cubin", "CUBIN");  // 5 bytes
  fs::create_directories(root / "tri/none");
}
constexpr std::uint64_t kFiles = 6;
constexpr std::uint64_t kBytes = 11 + 10 + 0 + 5000 + 5 + 5;

UniqueFd open_folder(const fs::path& p) {
  fs::create_directories(p);
  UniqueFd fd(::open(p.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  REQUIRE(fd.valid());
  return fd;
}

// A tree with a read-only folder: its folders given back their owner's bits so that ScratchDir can remove it.
void make_removable(const fs::path& root) {
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.is_directory() && !e.is_symlink()) fs::permissions(e.path(), fs::perms::owner_all, fs::perm_options::add);
  }
}

}  // namespace

TEST_CASE("extract writes each component into its staging folder as packed, and counts what it wrote") {
  test::ScratchDir t;
  make_cache(t / "src");
  (void)pack::create_archive(test::dirs_of(t / "src/ind", t / "src/tri"), t / "a.ccpack", {});
  unpack::Archive a = unpack::Archive::open(t / "a.ccpack");
  for (unsigned jobs : {1u, 3u}) {
    const fs::path out = t / ("out" + std::to_string(jobs));
    UniqueFd ind = open_folder(out / "ind");
    UniqueFd tri = open_folder(out / "tri");
    unpack::ExtractStats s = unpack::extract(a, {{"inductor", ind.get(), nullptr}, {"triton", tri.get(), nullptr}},
                                             unpack::ExtractOptions{jobs, false});
    CHECK(s.files == kFiles);
    CHECK(s.bytes == kBytes);
    CHECK(s.written_files == kFiles);
    CHECK(test::snapshot(out / "ind") == test::snapshot(t / "src/ind"));
    CHECK(test::snapshot(out / "tri") == test::snapshot(t / "src/tri"));
    CHECK(fs::read_symlink(out / "ind/link") == "deep/er/x.bin");
    CHECK((fs::status(out / "ind/run.sh").permissions() & fs::perms::all) == fs::perms(0755));
    CHECK((fs::status(out / "ind/ro").permissions() & fs::perms::all) == fs::perms(0750));
    CHECK(test::slurp(out / "ind/ro/frozen") == "cold\n");
    make_removable(out);
  }
  make_removable(t / "src");
}

TEST_CASE("extract checks but never writes a component given no folder, or not named, or with no targets") {
  test::ScratchDir t;
  make_cache(t / "src");
  (void)pack::create_archive(test::dirs_of(t / "src/ind", t / "src/tri"), t / "a.ccpack", {});
  make_removable(t / "src");
  unpack::Archive a = unpack::Archive::open(t / "a.ccpack");
  UniqueFd tri = open_folder(t / "tri");
  unpack::ExtractStats s = unpack::extract(a, {{"inductor", -1, nullptr}, {"triton", tri.get(), nullptr}}, {});
  CHECK(s.files == kFiles);
  CHECK(s.bytes == kBytes);
  CHECK(s.written_files == 1);  // tri/k/kernel.cubin
  CHECK(test::slurp(t / "tri/k/kernel.cubin") == "CUBIN");
  UniqueFd only = open_folder(t / "only");
  s = unpack::extract(a, {{"triton", only.get(), nullptr}}, {});
  CHECK(s.written_files == 1);
  CHECK(test::snapshot(t / "only") == test::snapshot(t / "src/tri"));
  s = unpack::extract(a, {}, {});  // verify: every byte checked, nothing written
  CHECK(s.files == kFiles);
  CHECK(s.bytes == kBytes);
  CHECK(s.written_files == 0);
}

TEST_CASE("extract names the entry whose bytes do not hash as the manifest says, and fills a read-only folder") {
  using manifest::Entry;
  using manifest::EntryType;
  test::ScratchDir t;
  auto entry = [](std::string path, EntryType type, unsigned mode, std::string bytes) {
    Entry e;
    e.path = std::move(path);
    e.type = type;
    e.mode = mode;
    e.size = bytes.size();
    if (type == EntryType::file) e.sha256 = Sha256::of(bytes);
    return e;
  };
  std::vector<Entry> entries = {
      entry("inductor", EntryType::dir, 0755, ""), entry("inductor/good", EntryType::file, 0644, "good\n"),
      entry("inductor/bad", EntryType::file, 0644, "bad!\n"), entry("inductor/ro", EntryType::dir, 0555, ""),
      entry("inductor/ro/in", EntryType::file, 0600, "in\n")};
  std::map<std::string, std::string> content = {
      {"inductor/good", "good\n"}, {"inductor/bad", "bad?\n"}, {"inductor/ro/in", "in\n"}};
  test::BuiltArchive b = test::build_archive({{"inductor", manifest::ComponentKind::inductor, "/src", 0, 0}}, entries, content);
  test::write_file(t / "bad.ccpack", test::archive_file(b.manifest.to_json(), b.payload, b.payload.size()));
  unpack::Archive a = unpack::Archive::open(t / "bad.ccpack");
  UniqueFd root = open_folder(t / "out");
  std::string what = "(no IntegrityError)";
  try {
    (void)unpack::extract(a, {{"inductor", root.get(), nullptr}}, unpack::ExtractOptions{1, false});
  } catch (const IntegrityError& e) {
    what = e.what();
  }
  CHECK(what == "entry 2 'inductor/bad': SHA-256 mismatch (corrupt or tampered archive)");
  // The same archive with the right bytes restores whole.
  content["inductor/bad"] = "bad!\n";
  b = test::build_archive({{"inductor", manifest::ComponentKind::inductor, "/src", 0, 0}}, entries, content);
  test::write_file(t / "ok.ccpack", test::archive_file(b.manifest.to_json(), b.payload, b.payload.size()));
  unpack::Archive ok = unpack::Archive::open(t / "ok.ccpack");
  UniqueFd root2 = open_folder(t / "out2");
  unpack::ExtractStats s = unpack::extract(ok, {{"inductor", root2.get(), nullptr}}, {});
  CHECK(s.files == 3);
  CHECK(s.bytes == 13);
  CHECK(s.written_files == 3);
  CHECK(test::slurp(t / "out2/bad") == "bad!\n");
  // A read-only folder is filled first and given its mode last.
  CHECK(test::slurp(t / "out2/ro/in") == "in\n");
  CHECK((fs::status(t / "out2/ro").permissions() & fs::perms::all) == fs::perms(0555));
  CHECK((fs::status(t / "out2/ro/in").permissions() & fs::perms::all) == fs::perms(0600));
  make_removable(t / "out2");
}

namespace {

using manifest::Entry;
using manifest::EntryType;

// The archive's payload as a stream delivers it (`restore oci://`): read once, in order; a read anywhere else fails
// the test (a stream cannot be read twice).
class InOrderPayload : public unpack::PayloadSource {
 public:
  InOrderPayload(std::string file, std::uint64_t first) : file_(std::move(file)), next_(first) {}
  std::size_t read(void* data, std::size_t size, std::uint64_t offset) override {
    REQUIRE(offset == next_);
    std::size_t n = offset >= file_.size() ? 0 : std::min<std::size_t>(size, file_.size() - offset);
    std::memcpy(data, file_.data() + offset, n);
    next_ += n;
    return n;
  }

 private:
  std::string file_;
  std::uint64_t next_;
};

// One frame: a 6 MB file (so the frame spans chunks, and its first chunk could be written before the frame's end
// is reached), then small files; `bad_file`: one of them differs from what its manifest entry hashes;
// `frame_sha`: the frame's recorded SHA-256 is flipped. `big`: the first file's bytes instead.
fs::path damaged_archive(const fs::path& dir, const std::string& name, bool bad_file, bool frame_sha,
                         const std::string& big = test::seeded_text(6'000'000, 7, 26)) {
  auto entry = [](std::string path, EntryType type, std::string_view bytes) {
    Entry e;
    e.path = std::move(path);
    e.type = type;
    e.mode = type == EntryType::dir ? 0755 : 0644;
    e.size = type == EntryType::file ? bytes.size() : 0;
    if (type == EntryType::file) e.sha256 = Sha256::of(bytes);
    return e;
  };
  std::vector<Entry> entries = {entry("inductor", EntryType::dir, ""), entry("inductor/a", EntryType::file, big),
                                entry("inductor/sub", EntryType::dir, ""), entry("inductor/sub/b", EntryType::file, "b!\n"),
                                entry("inductor/c", EntryType::file, "c\n")};
  std::map<std::string, std::string> content = {
      {"inductor/a", big}, {"inductor/sub/b", bad_file ? "b?\n" : "b!\n"}, {"inductor/c", "c\n"}};
  test::BuiltArchive b = test::build_archive({{"inductor", manifest::ComponentKind::inductor, "/src", 0, 0}}, entries, content);
  if (frame_sha) b.manifest.frames[0].sha256[0] ^= 1;
  test::write_file(dir / name, test::archive_file(b.manifest.to_json(), b.payload, b.payload.size()));
  return dir / name;
}

std::string integrity_error_of(const unpack::Archive& a, int root, bool file_digests) {
  try {
    (void)unpack::extract(a, {{"inductor", root, nullptr}}, unpack::ExtractOptions{2, false, file_digests});
  } catch (const IntegrityError& e) {
    return e.what();
  }
  return "(no IntegrityError)";
}

}  // namespace

TEST_CASE("extract decodes nothing of a frame whose compressed bytes are not the manifest's") {
  test::ScratchDir t;
  unpack::Archive a = unpack::Archive::open(damaged_archive(t.path(), "frame.ccpack", false, true));
  const std::string refused = "'" + (t / "frame.ccpack").string() + "': frame 0: SHA-256 of the compressed bytes mismatch";
  for (bool file_digests : {false, true}) {
    const fs::path out = t / (file_digests ? "out-files" : "out");
    UniqueFd root = open_folder(out);
    CHECK(integrity_error_of(a, root.get(), file_digests) == refused);
    // Checked before decoding: not one folder or file of the frame was made.
    CHECK(fs::is_empty(out));
  }
}

TEST_CASE("restore writes an archive file's checked frames without hashing each file, verify and streams hash each") {
  test::ScratchDir t;
  // The frame's hash is right, one file's manifest digest is not: only a signer can make this (both are in the
  // signed manifest). Without file digests the frame's bytes, which the signer compressed, are written as they are.
  const fs::path bad = damaged_archive(t.path(), "bad.ccpack", true, false);
  unpack::Archive a = unpack::Archive::open(bad);
  UniqueFd root = open_folder(t / "out");
  unpack::ExtractStats s = unpack::extract(a, {{"inductor", root.get(), nullptr}}, unpack::ExtractOptions{2, false, false});
  CHECK(s.written_files == 3);
  CHECK(test::slurp(t / "out/sub/b") == "b?\n");
  CHECK(test::slurp(t / "out/a") == test::seeded_text(6'000'000, 7, 26));
  // With file digests (verify, sign, merge), the entry is named.
  const std::string named = "entry 3 'inductor/sub/b': SHA-256 mismatch (corrupt or tampered archive)";
  UniqueFd root2 = open_folder(t / "out2");
  CHECK(integrity_error_of(a, root2.get(), true) == named);
  CHECK(integrity_error_of(a, -1, true) == named);
  // A stream is read once, in order: its frames are checked at their end, so each file is hashed whatever is asked.
  {
    unpack::Archive streamed = unpack::Archive::open(bad);
    streamed.payload = std::make_shared<InOrderPayload>(test::slurp(bad), streamed.header.header_size);
    UniqueFd root3 = open_folder(t / "out3");
    CHECK(integrity_error_of(streamed, root3.get(), false) == named);
  }
  // A stream whose frame's recorded hash is wrong, every file intact: the frame's end names it.
  {
    const fs::path frame = damaged_archive(t.path(), "frame.ccpack", false, true);
    unpack::Archive streamed = unpack::Archive::open(frame);
    streamed.payload = std::make_shared<InOrderPayload>(test::slurp(frame), streamed.header.header_size);
    UniqueFd root4 = open_folder(t / "out4");
    CHECK(integrity_error_of(streamed, root4.get(), false) ==
          "'" + frame.string() + "': frame 0: SHA-256 of the compressed bytes mismatch");
  }
  // The same archive with the right bytes, streamed, restores whole.
  const fs::path good = damaged_archive(t.path(), "good.ccpack", false, false);
  unpack::Archive streamed = unpack::Archive::open(good);
  streamed.payload = std::make_shared<InOrderPayload>(test::slurp(good), streamed.header.header_size);
  UniqueFd root5 = open_folder(t / "out5");
  s = unpack::extract(streamed, {{"inductor", root5.get(), nullptr}}, unpack::ExtractOptions{2, false, false});
  CHECK(s.written_files == 3);
  CHECK(test::slurp(t / "out5/sub/b") == "b!\n");
}

TEST_CASE("a frame too large to be held is read in pieces, refused before decoding, and restored when intact") {
  test::ScratchDir t;
  // Bytes zstd cannot shrink, so the frame's compressed size passes kHeldFrameBytes: it is hashed through the input
  // buffer first, then read and hashed again as it is decoded.
  const std::string big = test::seeded_text(unpack::kHeldFrameBytes + (1 << 20), 11, 256);
  const fs::path bad = damaged_archive(t.path(), "bad.ccpack", false, true, big);
  unpack::Archive a = unpack::Archive::open(bad);
  REQUIRE(a.manifest.frames.size() == 1);
  REQUIRE(a.manifest.frames[0].compressed_size > unpack::kHeldFrameBytes);
  UniqueFd root = open_folder(t / "out");
  CHECK(integrity_error_of(a, root.get(), false) == "'" + bad.string() + "': frame 0: SHA-256 of the compressed bytes mismatch");
  CHECK(fs::is_empty(t / "out"));
  const fs::path good = damaged_archive(t.path(), "good.ccpack", false, false, big);
  unpack::Archive g = unpack::Archive::open(good);
  UniqueFd root2 = open_folder(t / "out2");
  unpack::ExtractStats s = unpack::extract(g, {{"inductor", root2.get(), nullptr}}, unpack::ExtractOptions{1, false, false});
  CHECK(s.written_files == 3);
  CHECK(test::slurp(t / "out2/a") == big);
  CHECK(test::slurp(t / "out2/sub/b") == "b!\n");
}

TEST_CASE("extract makes each folder when its first entry needs it, and a folder it cannot make stops every thread") {
  test::ScratchDir t;
  // Folders whose first entry is a folder, one holding only a folder, files spread over several 4 MiB chunks
  // (small ones and two that span chunks) and an empty folder last.
  for (int i = 0; i < 40; ++i)
    test::write_file(t / "src/ind/a/b" / ("f" + std::to_string(i)), test::seeded_text(300'000, static_cast<unsigned>(i), 26));
  test::write_file(t / "src/ind/a/b/big1", test::seeded_text(5'000'000, 41, 26));
  test::write_file(t / "src/ind/a/c/d/big2", test::seeded_text(6'000'000, 42, 26));
  test::write_file(t / "src/ind/z/last", "last\n");
  fs::create_directories(t / "src/ind/z/empty/deeper");
  test::write_file(t / "src/tri/k/kernel.cubin", "CUBIN");
  (void)pack::create_archive(test::dirs_of(t / "src/ind", t / "src/tri"), t / "a.ccpack", {});
  unpack::Archive a = unpack::Archive::open(t / "a.ccpack");
  for (unsigned jobs : {1u, 2u, 4u}) {
    INFO("jobs " << jobs);
    const fs::path out = t / ("out" + std::to_string(jobs));
    UniqueFd ind = open_folder(out / "ind");
    UniqueFd tri = open_folder(out / "tri");
    unpack::ExtractStats s = unpack::extract(a, {{"inductor", ind.get(), nullptr}, {"triton", tri.get(), nullptr}},
                                             unpack::ExtractOptions{jobs, false});
    CHECK(s.written_files == 44);
    CHECK(test::snapshot(out / "ind") == test::snapshot(t / "src/ind"));
    CHECK(test::snapshot(out / "tri") == test::snapshot(t / "src/tri"));
    // A name already taken where a folder goes: its creation fails, and the threads whose files wait for it (every
    // chunk holds files of a/b) report that failure, not one of their own.
    const fs::path blocked = t / ("blocked" + std::to_string(jobs));
    UniqueFd broot = open_folder(blocked / "ind");
    test::write_file(blocked / "ind/a", "in the way\n");
    std::string what = "(no error)";
    try {
      (void)unpack::extract(a, {{"inductor", broot.get(), nullptr}}, unpack::ExtractOptions{jobs, false});
    } catch (const Error& e) {
      what = e.what();
    }
    CHECK(what == "cannot create folder 'inductor/a': File exists");
    CHECK(test::slurp(blocked / "ind/a") == "in the way\n");
  }
}
