// StreamedPayload (unpack/payload_source.hpp): the reader gets the producer's bytes in order across chunk
// boundaries, a producer failure reaches the reader with its type, the producer starts only on the first read,
// and destroying the queue cancels a producer blocked on a full queue.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>

#include "unpack/payload_source.hpp"
#include "util/error.hpp"

using namespace ccpack;
using ccpack::unpack::StreamedPayload;

TEST_CASE("streamed payload: in order, across chunks, short at the end") {
  std::string data;
  for (int i = 0; i < 10000; ++i) data += static_cast<char>('a' + i % 26);
  StreamedPayload s(
      100,
      [&](const StreamedPayload::Push& push, const std::atomic<bool>&) {
        for (std::size_t i = 0; i < data.size(); i += 777) push(data.data() + i, std::min<std::size_t>(777, data.size() - i));
      },
      1000);
  std::string got;
  char buf[1500];
  std::uint64_t offset = 100;
  for (;;) {
    std::size_t n = s.read(buf, sizeof buf, offset);
    got.append(buf, n);
    offset += n;
    if (n < sizeof buf) break;
  }
  CHECK(got == data);
  CHECK(s.read(buf, 10, offset) == 0);
  CHECK_THROWS_WITH(s.read(buf, 10, 5), Catch::Contains("out of order"));
}

TEST_CASE("streamed payload: a producer failure keeps its type") {
  StreamedPayload s(0, [](const StreamedPayload::Push& push, const std::atomic<bool>&) {
    push("abc", 3);
    throw IntegrityError("blob tampered");
  });
  char buf[8];
  CHECK_THROWS_AS(s.read(buf, sizeof buf, 0), IntegrityError);
}

TEST_CASE("streamed payload: starts on the first read only, and cancels a blocked producer") {
  std::atomic<int> runs{0};
  {
    StreamedPayload idle(0, [&](const StreamedPayload::Push&, const std::atomic<bool>&) { ++runs; });
    CHECK_FALSE(idle.started());
  }
  CHECK(runs == 0);
  std::atomic<bool> stopped{false};
  {
    StreamedPayload s(
        0,
        [&](const StreamedPayload::Push& push, const std::atomic<bool>&) {
          std::string chunk(100, 'x');
          try {
            for (;;) push(chunk.data(), chunk.size());  // fills the 1000-byte queue, then blocks
          } catch (const Error&) {
            stopped = true;
            throw;
          }
        },
        1000);
    char buf[10];
    CHECK(s.read(buf, sizeof buf, 0) == sizeof buf);
    CHECK(s.started());
  }  // the destructor cancels and joins
  CHECK(stopped);
  // A producer waiting on its transfer (not in push) sees the flag.
  std::atomic<bool> saw_flag{false};
  {
    StreamedPayload s(0, [&](const StreamedPayload::Push& push, const std::atomic<bool>& cancelled) {
      push("x", 1);
      while (!cancelled) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      saw_flag = true;
    });
    char buf[1];
    CHECK(s.read(buf, 1, 0) == 1);
  }
  CHECK(saw_flag);
}
