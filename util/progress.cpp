#include "util/progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace ccpack {

Progress::Progress(std::string label, std::uint64_t total_bytes, bool wanted)
    : label_(std::move(label)), total_(total_bytes), enabled_(wanted && ::isatty(STDERR_FILENO) == 1) {}

Progress::~Progress() { finish(); }

void Progress::advance(std::uint64_t bytes) {
  std::uint64_t done = done_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock() || now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  draw(done);
}

void Progress::draw(std::uint64_t done) {
  double pct = total_ == 0 ? 100.0 : 100.0 * static_cast<double>(done) / static_cast<double>(total_);
  std::fprintf(stderr, "\r%s %5.1f%%  %.1f / %.1f MB", label_.c_str(), pct, static_cast<double>(done) / 1e6,
               static_cast<double>(total_) / 1e6);
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::finish() {
  std::lock_guard lock(mutex_);
  if (drawn_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    drawn_ = false;
  }
  enabled_ = false;
}

}  // namespace ccpack
