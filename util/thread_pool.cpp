// The lazily applied oneTBB thread limit (see thread_pool.hpp): one global_control behind a mutex, and an atomic
// flag so that the calls after the first cost one load.
#include "util/thread_pool.hpp"

#include <oneapi/tbb/global_control.h>

#include <atomic>
#include <mutex>
#include <optional>

namespace ccpack {
namespace {

struct PoolState {
  std::mutex mutex;
  unsigned limit = 0;
  std::optional<oneapi::tbb::global_control> control;
  std::atomic<bool> used{false};

  void apply() {  // under `mutex`
    control.reset();
    if (limit != 0) control.emplace(oneapi::tbb::global_control::max_allowed_parallelism, limit);
  }
};

PoolState& state() {
  static PoolState s;
  return s;
}

}  // namespace

void set_thread_limit(unsigned threads) {
  PoolState& s = state();
  std::lock_guard lock(s.mutex);
  s.limit = threads;
  if (s.used.load(std::memory_order_relaxed)) s.apply();
}

void use_thread_pool() {
  PoolState& s = state();
  if (s.used.load(std::memory_order_acquire)) return;
  std::lock_guard lock(s.mutex);
  if (s.used.load(std::memory_order_relaxed)) return;
  s.apply();
  s.used.store(true, std::memory_order_release);
}

bool thread_pool_used() { return state().used.load(std::memory_order_acquire); }

void end_thread_pool() {
  PoolState& s = state();
  std::lock_guard lock(s.mutex);
  s.control.reset();
}

}  // namespace ccpack
