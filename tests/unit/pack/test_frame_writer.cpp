// pack/frame_writer.cpp: frames that follow each other in the file, each one a whole zstd frame that stock zstd
// decodes back to what was fed, its SHA-256 that of its compressed bytes, no zstd checksum, the same bytes for
// any worker count, an empty frame, and the errors for a refused setting and a write that fails.
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <functional>
#include <string>
#include <vector>

#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "pack/frame_writer.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

using namespace ccpack;
using pack::FrameWriter;

namespace {

using test::ccpack_error;

struct Written {
  std::string bytes;
  std::vector<manifest::Frame> frames;
};

// Feeds each of `pieces` (a frame each, fed in two halves) and returns the file and the frames.
Written write_frames(const std::vector<std::string>& pieces, FrameWriter::Settings settings) {
  test::ScratchDir t;
  UniqueFd fd(::open((t / "out").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  REQUIRE(fd.valid());
  Written w;
  {
    FrameWriter writer(fd.get(), settings);
    for (const std::string& p : pieces) {
      writer.feed(p.data(), p.size() / 2);
      writer.feed(p.data() + p.size() / 2, p.size() - p.size() / 2);
      CHECK(writer.raw_in_frame() == p.size());
      w.frames.push_back(writer.end_frame());
      CHECK(writer.raw_in_frame() == 0);
      CHECK(writer.written() == w.frames.back().offset + w.frames.back().compressed_size);
    }
  }
  w.bytes = test::slurp(t / "out");
  return w;
}

std::string decompress(std::string_view frame) {
  unsigned long long size = ZSTD_getFrameContentSize(frame.data(), frame.size());
  std::string out(size == ZSTD_CONTENTSIZE_UNKNOWN ? 1 << 22 : static_cast<std::size_t>(size), '\0');
  std::size_t n = ZSTD_decompress(out.data(), out.size(), frame.data(), frame.size());
  REQUIRE_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}

const FrameWriter::Settings kSettings{3, 20, 1, 1 << 20};

}  // namespace

TEST_CASE("frame writer: frames back to back, each a zstd frame of what was fed, hashed as written", "[frame-writer]") {
  const std::vector<std::string> pieces = {test::seeded_text(300'000, 1, 7), "tiny", test::seeded_text(70'000, 2, 7)};
  Written w = write_frames(pieces, kSettings);
  REQUIRE(w.frames.size() == 3);
  std::uint64_t at = 0;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const manifest::Frame& f = w.frames[i];
    CHECK(f.offset == at);
    CHECK(f.raw_size == pieces[i].size());
    std::string_view bytes = std::string_view(w.bytes).substr(f.offset, f.compressed_size);
    CHECK(ZSTD_findFrameCompressedSize(bytes.data(), bytes.size()) == f.compressed_size);  // exactly one frame
    CHECK(decompress(bytes) == pieces[i]);
    CHECK(f.sha256 == Sha256::of(bytes.data(), bytes.size()));
    ZSTD_frameHeader h{};
    REQUIRE(ZSTD_getFrameHeader(&h, bytes.data(), bytes.size()) == 0);
    CHECK(h.checksumFlag == 0);  // SHA-256 covers it
    at += f.compressed_size;
  }
  CHECK(at == w.bytes.size());
}

TEST_CASE("frame writer: the same bytes whatever the worker count (0 counts as 1)", "[frame-writer]") {
  const std::vector<std::string> pieces = {test::seeded_text(3'000'000, 7, 7), test::seeded_text(1000, 8, 7)};
  Written one = write_frames(pieces, kSettings);
  FrameWriter::Settings four = kSettings;
  four.jobs = 4;
  FrameWriter::Settings zero = kSettings;
  zero.jobs = 0;
  CHECK(write_frames(pieces, four).bytes == one.bytes);
  CHECK(write_frames(pieces, zero).bytes == one.bytes);
  FrameWriter::Settings other_level = kSettings;
  other_level.level = 9;
  CHECK(write_frames(pieces, other_level).bytes != one.bytes);  // the control: the level does change them
}

TEST_CASE("frame writer: an empty frame is a valid zstd frame of nothing", "[frame-writer]") {
  Written w = write_frames({"", "x"}, kSettings);
  REQUIRE(w.frames.size() == 2);
  CHECK(w.frames[0].raw_size == 0);
  CHECK(w.frames[0].compressed_size > 0);
  CHECK(decompress(std::string_view(w.bytes).substr(0, w.frames[0].compressed_size)).empty());
  CHECK(w.frames[1].offset == w.frames[0].compressed_size);
}

TEST_CASE("frame writer: a setting zstd refuses and a write that fails are errors", "[frame-writer]") {
  FrameWriter::Settings tiny_window = kSettings;
  tiny_window.window_log = 5;  // below ZSTD_WINDOWLOG_MIN
  CHECK(ccpack_error([&] { FrameWriter w(-1, tiny_window); }) ==
        "zstd: cannot set a compression parameter: Parameter is out of bound");
  FrameWriter::Settings bad_level = kSettings;
  bad_level.level = 1000;  // zstd clamps levels: accepted
  CHECK(ccpack_error([&] { FrameWriter w(-1, bad_level); }) == "(no Error)");
  test::ScratchDir t;
  test::write_file(t / "ro", "");
  UniqueFd ro(::open((t / "ro").c_str(), O_RDONLY | O_CLOEXEC));
  FrameWriter w(ro.get(), kSettings);
  w.feed("abc", 3);
  CHECK(ccpack_error([&] { (void)w.end_frame(); }) == "cannot write the archive scratch file: Bad file descriptor");
}
