// util/thread_pool: the limit main records reaches oneTBB only when parallel work starts, and a later limit
// replaces it; before use_thread_pool nothing is applied.
#include <oneapi/tbb/global_control.h>

#include <catch2/catch.hpp>

#include "util/thread_pool.hpp"

using namespace ccpack;
using oneapi::tbb::global_control;

TEST_CASE("thread pool: the recorded limit is oneTBB's once the pool is used, a later limit replaces it", "[thread_pool]") {
  const std::size_t unlimited = global_control::active_value(global_control::max_allowed_parallelism);
  set_thread_limit(1);
  if (!thread_pool_used()) {
    // Recorded, not applied: oneTBB has not been told (a no-op restore never gets this far).
    CHECK(global_control::active_value(global_control::max_allowed_parallelism) == unlimited);
  }
  use_thread_pool();
  CHECK(thread_pool_used());
  CHECK(global_control::active_value(global_control::max_allowed_parallelism) == 1);
  set_thread_limit(2);
  CHECK(global_control::active_value(global_control::max_allowed_parallelism) == std::min<std::size_t>(2, unlimited));
  set_thread_limit(0);  // oneTBB's own default again, for the tests that follow
  CHECK(global_control::active_value(global_control::max_allowed_parallelism) == unlimited);
  end_thread_pool();
}
