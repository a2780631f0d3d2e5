// Restore of multi-frame archives, frames decoded in parallel (unpack/extractor.cpp, unpack/frame_stream.cpp):
// bytes restored are the bytes packed, a damaged frame is named and nothing reaches the target, the lowest failing
// frame is the one reported, a frame must end where the manifest says, and a streamed payload still reads in order.
#include <catch2/catch.hpp>
#include <fstream>

#include "cli/helpers/archive_builder.hpp"
#include "manifest/cache_dir.hpp"
#include "manifest/format.hpp"
#include "pack/packer.hpp"
#include "unit/support.hpp"
#include "unpack/archive.hpp"
#include "unpack/extractor.hpp"
#include "unpack/installer.hpp"
#include "unpack/payload_source.hpp"
#include "util/error.hpp"

using namespace ccpack;
namespace fs = std::filesystem;

namespace {

using test::dirs_of;

// An FX-graph pickle naming a Triton kernel folder (so the layout splits the archive), 24 files of 100-250 KB in
// nested folders, a file larger than a restore chunk, an empty file and a symlink.
void make_framed_cache(const fs::path& root) {
  std::string kernel(52, 'K');
  test::write_file(root / "ind/fxgraph/ab/fabc/pabc",
                   "\x8c"
                   "4" +
                       kernel + "\x94" + std::string(1 << 20, 'k'));
  test::write_file(root / ("tri/" + kernel + "/k.llir"), std::string(1 << 20, 'k'));
  for (int i = 0; i < 24; ++i) {
    std::string body;
    for (int k = 0; k < 20000 + 1000 * i; ++k) body += std::to_string(k * (i + 7)) + ",";
    test::write_file(root / ("ind/d" + std::to_string(i % 5) + "/f" + std::to_string(i)), body, i % 3 == 0 ? 0755 : 0644);
  }
  std::string big;
  for (int i = 0; i < (5 << 20) / 16; ++i) big += "fedcba987654321\n";
  test::write_file(root / "ind/big/blob", big);
  test::write_file(root / "tri/empty", "");
  fs::create_symlink("d1/f1", root / "ind/alias");
}

// An archive of many frames: the pickle's group, then frames of about 512 KiB.
pack::PackResult pack_frames(const fs::path& out, const fs::path& root) {
  pack::PackOptions o;
  o.layout.split_threshold = 0;
  o.layout.rest_frame_bytes = 512 << 10;
  return pack::create_archive(dirs_of(root / "ind", root / "tri"), out, o);
}

// The archive offset of a byte of frame `k`'s compressed bytes: `at` (0 to 1) of the way through.
std::uint64_t in_frame(const fs::path& archive, std::size_t k, double at) {
  unpack::Archive a = unpack::Archive::open(archive);
  const manifest::Frame& f = a.manifest.frames.at(k);
  return a.header.header_size + f.offset + static_cast<std::uint64_t>(static_cast<double>(f.compressed_size - 1) * at);
}

using test::integrity_error;

}  // namespace

TEST_CASE("frames: a many-frame archive restores every byte with its frames decoded in parallel") {
  test::ScratchDir t;
  make_framed_cache(t / "src");
  pack::PackResult r = pack_frames(t / "a.ccpack", t / "src");
  REQUIRE(r.manifest.frames.size() >= 8);
  unpack::Archive a = unpack::Archive::open(t / "a.ccpack");
  for (unsigned jobs : {1u, 2u, 8u}) {
    fs::path out = t / ("out" + std::to_string(jobs));
    unpack::InstallOptions o;
    o.jobs = jobs;
    (void)unpack::install(a, dirs_of(out / "ind", out / "tri"), o);
    CHECK(test::snapshot(out / "ind") == test::snapshot(t / "src/ind"));
    CHECK(test::snapshot(out / "tri") == test::snapshot(t / "src/tri"));
  }
  CHECK(unpack::extract(a, {}, {}).files == 28);
}

TEST_CASE("frames: a damaged second frame is named, and nothing reaches the target") {
  test::ScratchDir t;
  make_framed_cache(t / "src");
  (void)pack_frames(t / "a.ccpack", t / "src");
  fs::copy_file(t / "a.ccpack", t / "bad.ccpack");
  test::flip_byte(t / "bad.ccpack", in_frame(t / "bad.ccpack", 1, 0.5), 0x5a);
  test::write_file(t / "out/ind/keep.txt", "precious");
  auto before = test::snapshot(t / "out");
  unpack::Archive bad = unpack::Archive::open(t / "bad.ccpack");
  std::string frame1 = "'" + (t / "bad.ccpack").string() + "': frame 1";
  // Either zstd finds the damage or the frame's SHA-256 does: both name frame 1.
  std::string verify_error = integrity_error([&] { (void)unpack::extract(bad, {}, {}); });
  CHECK_THAT(verify_error,
             Catch::StartsWith(frame1 + " is corrupt: ") || Catch::Equals(frame1 + ": SHA-256 of the compressed bytes mismatch"));
  CHECK(integrity_error([&] { (void)unpack::install(bad, dirs_of(t / "out/ind", t / "out/tri"), {}); }) == verify_error);
  // One thread (a quota of one CPU): folders made first, one chunk in flight; the same error, the same targets.
  unpack::InstallOptions one;
  one.jobs = 1;
  CHECK(integrity_error([&] { (void)unpack::install(bad, dirs_of(t / "out/ind", t / "out/tri"), one); }) == verify_error);
  CHECK(test::snapshot(t / "out") == before);
}

TEST_CASE("frames: with several damaged frames, the lowest one is reported, every time") {
  test::ScratchDir t;
  make_framed_cache(t / "src");
  pack::PackResult r = pack_frames(t / "a.ccpack", t / "src");
  REQUIRE(r.manifest.frames.size() >= 6);
  fs::copy_file(t / "a.ccpack", t / "bad.ccpack");
  // Frame 0 (the largest: the pickle's group) fails at its very end; frames 1 and 3 at their first byte (the zstd
  // magic), long before. Frames 0 and 1 start together, one per lane.
  test::flip_byte(t / "bad.ccpack", in_frame(t / "bad.ccpack", 0, 1.0), 0x5a);
  test::flip_byte(t / "bad.ccpack", in_frame(t / "bad.ccpack", 1, 0.0), 0x5a);
  test::flip_byte(t / "bad.ccpack", in_frame(t / "bad.ccpack", 3, 0.0), 0x5a);
  unpack::Archive bad = unpack::Archive::open(t / "bad.ccpack");
  std::string frame0 = "'" + (t / "bad.ccpack").string() + "': frame 0";
  for (int i = 0; i < 10; ++i) {
    unpack::ExtractOptions o;
    o.jobs = i % 2 == 0 ? 16 : 2;  // several lanes; two (two CPUs)
    CHECK_THAT(
        integrity_error([&] { (void)unpack::extract(bad, {}, o); }),
        Catch::StartsWith(frame0 + " is corrupt: ") || Catch::Equals(frame0 + ": SHA-256 of the compressed bytes mismatch"));
  }
}

TEST_CASE("frames: a frame that does not end after the entries the manifest gives it is refused") {
  using manifest::EntryType;
  std::string a_bytes(3000, 'a');
  std::vector<manifest::Entry> entries = {{"inductor", EntryType::dir, 0755, 0, {}, {}, 0},
                                          {"inductor/a", EntryType::file, 0644, 3000, Sha256::of(a_bytes), {}, 0},
                                          {"inductor/b", EntryType::file, 0644, 2, Sha256::of("bb"), {}, 1}};
  test::BuiltArchive built = test::build_archive({{"inductor", manifest::ComponentKind::inductor, "/src", 0, 0}}, entries,
                                                 {{"inductor/a", a_bytes}, {"inductor/b", "bb"}});
  std::string tar(built.manifest.tar_size, '\0');
  REQUIRE(ZSTD_decompress(tar.data(), tar.size(), built.payload.data(), built.payload.size()) == tar.size());
  // Cut inside a's data (tar offset 2048), though the manifest says frame 0 holds the folder and all of a.
  std::string payload;
  built.manifest.frames.clear();
  for (auto [from, to, first, count] :
       {std::tuple<std::size_t, std::size_t, std::uint64_t, std::uint64_t>{0, 2048, 0, 2}, {2048, tar.size(), 2, 1}}) {
    std::string frame(ZSTD_compressBound(to - from), '\0');
    frame.resize(ZSTD_compress(frame.data(), frame.size(), tar.data() + from, to - from, 1));
    built.manifest.frames.push_back({payload.size(), frame.size(), to - from, Sha256::of(frame), first, count});
    payload += frame;
  }
  test::ScratchDir t;
  std::ofstream(t / "cut.ccpack", std::ios::binary) << test::archive_file(built.manifest.to_json(), payload, payload.size());
  unpack::Archive a = unpack::Archive::open(t / "cut.ccpack");
  CHECK(integrity_error([&] { (void)unpack::extract(a, {}, {}); }) ==
        "'" + (t / "cut.ccpack").string() + "': frame 0 does not end after its last entry (entry 1), as the manifest says");
}

TEST_CASE("frames: a streamed payload (restore oci://) is read in order, frame after frame") {
  test::ScratchDir t;
  make_framed_cache(t / "src");
  (void)pack_frames(t / "a.ccpack", t / "src");
  std::string file = test::slurp(t / "a.ccpack");
  unpack::Archive on_disk = unpack::Archive::open(t / "a.ccpack");
  std::uint64_t first = on_disk.header.header_size;
  auto producer = [&](const unpack::StreamedPayload::Push& push, const std::atomic<bool>&) {
    for (std::uint64_t at = first; at < file.size(); at += 100000)
      push(file.data() + at, std::min<std::uint64_t>(100000, file.size() - at));
  };
  auto stream = std::make_shared<unpack::StreamedPayload>(first, producer, 1 << 20);
  unpack::Archive a = unpack::Archive::from_header("streamed", on_disk.header, stream);
  unpack::InstallOptions o;
  o.jobs = 8;
  (void)unpack::install(a, dirs_of(t / "out/ind", t / "out/tri"), o);  // an out-of-order read would throw
  CHECK(test::snapshot(t / "out/ind") == test::snapshot(t / "src/ind"));
}
