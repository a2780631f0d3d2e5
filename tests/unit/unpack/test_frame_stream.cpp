// unpack/frame_stream.cpp: one frame decoded (whole, or through zstd's window) into chunks whose pieces give each
// file's bytes at their offsets, a file larger than a chunk in pieces with one LargeFile, the last piece marked;
// a tar header that the manifest does not match, and a frame whose bytes do not hash as recorded, named exactly.
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <string>

#include "cli/helpers/archive_builder.hpp"
#include "unit/support.hpp"
#include "unpack/archive.hpp"
#include "unpack/frame_stream.hpp"
#include "util/error.hpp"
#include "util/progress.hpp"

using namespace ccpack;
using manifest::Entry;
using manifest::EntryType;
namespace fs = std::filesystem;

namespace {

Entry entry(std::string path, EntryType type, unsigned mode, const std::string& bytes, std::string link = {}) {
  Entry e;
  e.path = std::move(path);
  e.type = type;
  e.mode = mode;
  e.size = type == EntryType::file ? bytes.size() : 0;
  e.link_target = std::move(link);
  if (type == EntryType::file) e.sha256 = Sha256::of(bytes);
  return e;
}

const std::string kBig = [] {
  std::string s;
  for (int i = 0; s.size() < (unpack::kChunkBytes + (1u << 20)); ++i) s += std::to_string(i) + ";";
  return s;
}();

std::map<std::string, std::string> contents() {
  return {{"inductor/hello", "hello\n"}, {"inductor/big", kBig}, {"inductor/empty", ""}};
}

std::vector<Entry> entries() {
  auto c = contents();
  return {entry("inductor", EntryType::dir, 0755, ""), entry("inductor/hello", EntryType::file, 0644, c["inductor/hello"]),
          entry("inductor/big", EntryType::file, 0600, kBig), entry("inductor/empty", EntryType::file, 0644, ""),
          entry("inductor/link", EntryType::symlink, 0777, "", "hello")};
}

fs::path write_archive(const test::ScratchDir& t, const std::string& name,
                       const std::function<void(manifest::Manifest&)>& edit = {}) {
  test::BuiltArchive b =
      test::build_archive({{"inductor", manifest::ComponentKind::inductor, "/src", 0, 0}}, entries(), contents());
  if (edit) edit(b.manifest);
  test::write_file(t / name, test::archive_file(b.manifest.to_json(), b.payload, b.payload.size()));
  return t / name;
}

// Every piece of every chunk of frame 0: each file's bytes put together at their offsets, and the pieces' shape.
struct Decoded {
  std::map<std::uint32_t, std::string> files;
  std::map<std::uint32_t, int> pieces;
  std::map<std::uint32_t, int> last_pieces;
  std::map<std::uint32_t, bool> large;
  int chunks = 0;
};

Decoded decode_with(unpack::FrameDecoder& decoder, const unpack::Archive& a, bool whole) {
  Progress progress("test", 0, false);
  unpack::FrameStream stream(a, decoder, 0, 0, progress, whole ? unpack::kWholeFrameBytes : 0);
  Decoded d;
  unpack::Chunk chunk;
  while (stream.next(chunk)) {
    ++d.chunks;
    for (const unpack::Piece& p : chunk.pieces) {
      std::string& f = d.files[p.entry];
      if (f.size() < p.file_offset + p.length) f.resize(p.file_offset + p.length);
      f.replace(p.file_offset, p.length, chunk.data() + p.at, p.length);
      ++d.pieces[p.entry];
      d.last_pieces[p.entry] += p.last ? 1 : 0;
      d.large[p.entry] = p.large != nullptr;
    }
  }
  return d;
}

Decoded decode(const unpack::Archive& a, bool whole) {
  unpack::FrameDecoder decoder;
  return decode_with(decoder, a, whole);
}

using test::integrity_error;

}  // namespace

TEST_CASE("FrameStream: each file's bytes, in pieces at their offsets, whole or through the window") {
  test::ScratchDir t;
  unpack::Archive a = unpack::Archive::open(write_archive(t, "a.ccpack"));
  for (bool whole : {false, true}) {
    INFO((whole ? "decoded whole" : "through the window"));
    Decoded d = decode(a, whole);
    CHECK(d.chunks == 2);  // 5 MiB of tar: one chunk of kChunkBytes, then the rest
    CHECK(d.files[1] == "hello\n");
    CHECK(d.files[2] == kBig);
    CHECK(d.pieces[1] == 1);
    CHECK(d.pieces[2] == 2);  // the big file spans the two chunks
    CHECK(d.large[1] == false);
    CHECK(d.large[2] == true);
    CHECK(d.last_pieces[1] == 1);
    CHECK(d.last_pieces[2] == 1);
    CHECK(d.files.count(0) == 0);  // folders and links carry no data
    CHECK(d.files.count(4) == 0);
  }
}

TEST_CASE("FrameStream: one decoder's buffer serves a smaller frame after a larger one, and grows for a larger") {
  test::ScratchDir t;
  unpack::Archive big = unpack::Archive::open(write_archive(t, "big.ccpack"));
  test::BuiltArchive b =
      test::build_archive({{"inductor", manifest::ComponentKind::inductor, "/src", 0, 0}},
                          {entry("inductor", EntryType::dir, 0755, ""), entry("inductor/hello", EntryType::file, 0644, "hi\n")},
                          {{"inductor/hello", "hi\n"}});
  test::write_file(t / "small.ccpack", test::archive_file(b.manifest.to_json(), b.payload, b.payload.size()));
  unpack::Archive small = unpack::Archive::open(t / "small.ccpack");
  unpack::FrameDecoder decoder;
  for (const unpack::Archive* a : {&small, &big, &small, &big}) {
    Decoded d = decode_with(decoder, *a, true);
    CHECK(d.files[1] == (a == &small ? "hi\n" : "hello\n"));
    if (a == &big) CHECK(d.files[2] == kBig);
  }
}

TEST_CASE("FrameStream: a tar header the manifest does not match, a frame of other bytes") {
  test::ScratchDir t;
  unpack::Archive mode =
      unpack::Archive::open(write_archive(t, "mode.ccpack", [](manifest::Manifest& m) { m.entries[1].mode = 0640; }));
  CHECK(integrity_error([&] { (void)decode(mode, false); }) ==
        "'" + (t / "mode.ccpack").string() +
            "': tar offset 512: tar header 'inductor/hello' does not match manifest entry 1 'inductor/hello'");
  unpack::Archive hash =
      unpack::Archive::open(write_archive(t, "hash.ccpack", [](manifest::Manifest& m) { m.frames[0].sha256[0] ^= 1; }));
  CHECK(integrity_error([&] { (void)decode(hash, true); }) ==
        "'" + (t / "hash.ccpack").string() + "': frame 0: SHA-256 of the compressed bytes mismatch");
}

TEST_CASE("entry names in messages are quoted and escaped") {
  Entry e;
  e.path = "inductor/a\nb\x1b[2J";
  CHECK(unpack::quoted(e) == "'inductor/a\\nb\\x1b[2J'");
  CHECK(unpack::entry_name(e, 12) == "entry 12 'inductor/a\\nb\\x1b[2J'");
}
