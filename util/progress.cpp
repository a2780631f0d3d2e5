#include "util/progress.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace ccpack {

namespace {

std::string rate_text(double bytes_per_second) {
  char buf[32];
  if (bytes_per_second >= 1e9) {
    std::snprintf(buf, sizeof buf, "%.2f GB/s", bytes_per_second / 1e9);
  } else if (bytes_per_second >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.1f MB/s", bytes_per_second / 1e6);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f kB/s", bytes_per_second / 1e3);
  }
  return buf;
}

std::string duration_text(double seconds) {
  // Rounded up: "0:00 left" only when nothing is left.
  auto s = static_cast<unsigned long long>(std::ceil(seconds));
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%llu:%02llu:%02llu", s / 3600, s / 60 % 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%llu:%02llu", s / 60, s % 60);
  }
  return buf;
}

}  // namespace

std::string progress_line(const std::string& label, std::uint64_t done, std::uint64_t total, double elapsed_seconds) {
  double pct = total == 0 ? 100.0 : 100.0 * static_cast<double>(done) / static_cast<double>(total);
  char head[96];
  std::snprintf(head, sizeof head, " %5.1f%%  %.1f / %.1f MB  ", pct, static_cast<double>(done) / 1e6,
                static_cast<double>(total) / 1e6);
  std::string line = label + head;
  if (elapsed_seconds <= 0 || done == 0) return line + "-- MB/s  --:-- left";
  double rate = static_cast<double>(done) / elapsed_seconds;
  double left = done >= total ? 0.0 : static_cast<double>(total - done) / rate;
  return line + rate_text(rate) + "  " + duration_text(left) + " left";
}

Progress::Progress(std::string label, std::uint64_t total_bytes, bool wanted)
    : label_(std::move(label)), total_(total_bytes), enabled_(wanted && ::isatty(STDERR_FILENO) == 1) {}

Progress::~Progress() { finish(); }

void Progress::advance(std::uint64_t bytes) {
  std::uint64_t done = done_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  if (!enabled_ || done == 0) return;  // the first line drawn has a rate
  auto now = std::chrono::steady_clock::now();
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock() || now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  draw(done, now);
}

void Progress::draw(std::uint64_t done, std::chrono::steady_clock::time_point now) {
  double elapsed = std::chrono::duration<double>(now - start_).count();
  // "\033[K" clears what a longer line before left behind.
  std::fprintf(stderr, "\r%s\033[K", progress_line(label_, done, total_, elapsed).c_str());
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
