// util/progress: the progress line says how far, how fast and how long is left, in exact text.
#include <catch2/catch.hpp>

#include "util/progress.hpp"

using namespace ccpack;

TEST_CASE("progress_line shows the rate and the time left") {
  CHECK(progress_line("create", 191'100'000, 363'200'000, 2.0) == "create  52.6%  191.1 / 363.2 MB  95.5 MB/s  0:02 left");
  // A slow registry: kB/s, and minutes.
  CHECK(progress_line("download", 1'000'000, 100'000'000, 4.0) == "download   1.0%  1.0 / 100.0 MB  250.0 kB/s  6:36 left");
  // A fast restore: GB/s; the time left is rounded up, so it reads 0:00 only when done.
  CHECK(progress_line("restore", 4'000'000'000, 4'100'000'000, 1.0) ==
        "restore  97.6%  4000.0 / 4100.0 MB  4.00 GB/s  0:01 left");
  CHECK(progress_line("restore", 4'100'000'000, 4'100'000'000, 1.0) ==
        "restore 100.0%  4100.0 / 4100.0 MB  4.10 GB/s  0:00 left");
  // Past an hour: h:mm:ss.
  CHECK(progress_line("create", 1'000'000, 10'000'000'000, 1.0) == "create   0.0%  1.0 / 10000.0 MB  1.0 MB/s  2:46:39 left");
}

TEST_CASE("progress_line shows no rate before there is one") {
  CHECK(progress_line("create", 0, 363'200'000, 1.0) == "create   0.0%  0.0 / 363.2 MB  -- MB/s  --:-- left");
  CHECK(progress_line("create", 5, 363'200'000, 0.0) == "create   0.0%  0.0 / 363.2 MB  -- MB/s  --:-- left");
  CHECK(progress_line("verify", 0, 0, 0.0) == "verify 100.0%  0.0 / 0.0 MB  -- MB/s  --:-- left");
}
