// pack/frame_lanes.cpp: frames compressed several at once are the same bytes as one context compressing them one
// after another (offsets, sizes and hashes too), whatever the lane count, worker count and memory bound; what the
// in-order side fed is released once compressed, also when the lanes are given up mid-frame; a frame in the first
// lane counts the memory of the context that lane keeps; a lane's error is thrown on the in-order side, and misuse
// is refused.
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "pack/frame_lanes.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

using namespace ccpack;
using pack::CompressedPayload;
using pack::FrameLanes;
using pack::FrameWriter;

namespace {

using test::ccpack_error;

const FrameWriter::Settings kWriter{3, 20, 1, 1 << 20};

struct Packed {
  std::string bytes;
  std::vector<manifest::Frame> frames;
};

// One context, frame after frame: what create did before lanes.
Packed one_context(const std::vector<std::string>& frames) {
  test::ScratchDir t;
  UniqueFd fd(::open((t / "out").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  REQUIRE(fd.valid());
  Packed p;
  {
    FrameWriter writer(fd.get(), kWriter);
    for (const std::string& f : frames) {
      writer.feed(f.data(), f.size());
      p.frames.push_back(writer.end_frame());
    }
  }
  p.bytes = test::slurp(t / "out");
  return p;
}

// Through lanes, each frame fed in pieces of `piece` bytes, each piece a buffer of its own that the lanes keep.
Packed through_lanes(const std::vector<std::string>& frames, FrameLanes::Settings settings, std::size_t piece) {
  test::ScratchDir t;
  CompressedPayload payload;
  {
    FrameLanes lanes(t.path(), settings);
    for (std::size_t k = 0; k < frames.size(); ++k) {
      lanes.begin_frame(frames[k].size());
      for (std::size_t at = 0; at < frames[k].size(); at += piece) {
        auto bytes = std::make_shared<std::string>(frames[k].substr(at, piece));
        lanes.feed(bytes, bytes->data(), bytes->size());
      }
      CHECK(lanes.raw_in_frame() == frames[k].size());
      lanes.end_frame(10 * k, 10);
    }
    payload = lanes.finish();
  }  // the lanes are gone; the payload keeps the scratch files
  UniqueFd out(::open((t / "payload").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  payload.copy_to(out.get(), "the payload");
  Packed p{test::slurp(t / "payload"), payload.frames};
  CHECK(payload.size() == p.bytes.size());
  return p;
}

}  // namespace

TEST_CASE("frame lanes: the same bytes, offsets, sizes and hashes as one context, whatever the lanes, workers and memory",
          "[frame-lanes]") {
  const std::vector<std::string> frames = {test::seeded_text(2'500'000, 1, 9), test::seeded_text(100, 2, 9),
                                           test::seeded_text(1'200'000, 3, 9), "",
                                           test::seeded_text(3'000'000, 4, 9), test::seeded_text(700'000, 5, 9)};
  Packed one = one_context(frames);
  REQUIRE(one.frames.size() == frames.size());
  struct Case {
    unsigned lanes;
    unsigned workers;
    std::uint64_t memory;
    std::size_t piece;
  };
  for (Case c : {Case{1, 1, 1ULL << 30, 1 << 20}, Case{3, 1, 1ULL << 30, 300'000}, Case{4, 2, 1ULL << 30, 77'777},
                 Case{3, 2, 1, 1 << 20}}) {  // memory 1: one frame at a time, each alone over the bound
    INFO("lanes " << c.lanes << ", workers " << c.workers << ", memory " << c.memory);
    FrameWriter::Settings w = kWriter;
    w.jobs = c.workers;
    Packed lanes = through_lanes(frames, {w, c.lanes, c.memory, 1 << 20}, c.piece);
    CHECK(lanes.bytes == one.bytes);
    REQUIRE(lanes.frames.size() == one.frames.size());
    for (std::size_t k = 0; k < frames.size(); ++k) {
      CHECK(lanes.frames[k].offset == one.frames[k].offset);
      CHECK(lanes.frames[k].compressed_size == one.frames[k].compressed_size);
      CHECK(lanes.frames[k].raw_size == frames[k].size());
      CHECK(lanes.frames[k].sha256 == one.frames[k].sha256);
      CHECK(lanes.frames[k].first_entry == 10 * k);
      CHECK(lanes.frames[k].entry_count == 10);
    }
  }
}

TEST_CASE("frame lanes: what was fed is released once compressed, and when the lanes are given up mid-frame", "[frame-lanes]") {
  test::ScratchDir t;
  auto first = std::make_shared<std::string>(test::seeded_text(500'000, 6, 9));
  auto second = std::make_shared<std::string>(test::seeded_text(500'000, 7, 9));
  std::weak_ptr<std::string> first_seen = first;
  std::weak_ptr<std::string> second_seen = second;
  {
    FrameLanes lanes(t.path(), {kWriter, 2, 1ULL << 30, 1 << 20});
    lanes.begin_frame(first->size());
    lanes.feed(std::move(first), first_seen.lock()->data(), first_seen.lock()->size());
    lanes.end_frame(0, 1);
    lanes.begin_frame(second->size());  // never ended: the in-order side threw, say
    lanes.feed(std::move(second), second_seen.lock()->data(), second_seen.lock()->size());
  }
  CHECK(first_seen.expired());
  CHECK(second_seen.expired());
}

TEST_CASE("frame lanes: a frame in the first lane counts what that lane's kept context holds", "[frame-lanes]") {
  // The first lane keeps its zstd context from frame to frame, so a small frame after a large one holds the large
  // one's memory. With room for the large frame and not for a small one beside it, the small frame waits for the
  // first lane (never beside it in the second) and counts the large frame's cost there.
  test::ScratchDir t;
  const std::uint64_t large = 64 << 20;
  const std::uint64_t small = 1000;
  const std::uint64_t large_cost = FrameLanes::frame_cost(large, kWriter);
  const std::uint64_t small_cost = FrameLanes::frame_cost(small, kWriter);
  REQUIRE(small_cost < large_cost);
  FrameLanes lanes(t.path(), {kWriter, 2, large_cost + small_cost - 1, 1 << 20});
  CHECK(lanes.memory_in_use() == 0);
  lanes.begin_frame(large);
  CHECK(lanes.memory_in_use() == large_cost);
  lanes.feed(nullptr, "large", 5);
  lanes.end_frame(0, 1);
  lanes.begin_frame(small);
  CHECK(lanes.memory_in_use() == large_cost);
  lanes.feed(nullptr, "small", 5);
  lanes.end_frame(1, 1);
  CompressedPayload payload = lanes.finish();
  CHECK(lanes.memory_in_use() == 0);
  REQUIRE(payload.frames.size() == 2);
  CHECK(payload.frames[1].raw_size == 5);
}

TEST_CASE("frame lanes: a lane's error is thrown on the in-order side, and misuse is refused", "[frame-lanes]") {
  test::ScratchDir t;
  FrameWriter::Settings tiny_window = kWriter;
  tiny_window.window_log = 5;  // below ZSTD_WINDOWLOG_MIN: the lane's writer refuses it
  std::string error = ccpack_error([&] {
    FrameLanes lanes(t.path(), {tiny_window, 2, 1ULL << 30, 1 << 20});
    lanes.begin_frame(3);
    lanes.feed(nullptr, "abc", 3);
    lanes.end_frame(0, 1);
    (void)lanes.finish();
  });
  CHECK(error == "zstd: cannot set a compression parameter: Parameter is out of bound");

  FrameLanes lanes(t.path(), {kWriter, 2, 1ULL << 30, 1 << 20});
  CHECK(ccpack_error([&] { lanes.feed(nullptr, "abc", 3); }) == "internal: bytes fed outside a frame");
  CHECK(ccpack_error([&] { lanes.end_frame(0, 0); }) == "internal: a frame ended that was not begun");
  lanes.begin_frame(0);
  CHECK(ccpack_error([&] { lanes.begin_frame(0); }) == "internal: a frame begun inside another or after the last");
  CHECK(ccpack_error([&] { (void)lanes.finish(); }) == "internal: the last frame was not ended");
  lanes.end_frame(0, 0);
  CompressedPayload payload = lanes.finish();
  CHECK(payload.frames.size() == 1);
  CHECK(payload.frames[0].raw_size == 0);
  CHECK(ccpack_error([&] { lanes.begin_frame(0); }) == "internal: a frame begun inside another or after the last");
}
