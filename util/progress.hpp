// A one-line progress meter for long work: shown on a terminal, silent in a pipe or with --quiet.
//
// The line says how far, how fast and how long is left, as zstd and pv do:
//   create  52.6%  191.1 / 363.2 MB  85.3 MB/s  0:02 left
// The rate is the average since the meter started (steady, and the one the time left needs); the time left is
// what remains at that rate. `advance` may be called from any thread; it redraws at most every 100 ms under a
// lock, so the hot loops pay one atomic add per call. The first `advance` that has bytes done always draws.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace ccpack {

// The text of one progress line (no "\r", no terminal codes): label, percent, done / total MB, the rate (kB/s,
// MB/s or GB/s) and the time left (m:ss, h:mm:ss past an hour). With no time elapsed or nothing done yet, the
// rate and the time left are "--".
[[nodiscard]] std::string progress_line(const std::string& label, std::uint64_t done, std::uint64_t total,
                                        double elapsed_seconds);

class Progress {
 public:
  // Enabled only when `wanted` and standard error is a terminal.
  Progress(std::string label, std::uint64_t total_bytes, bool wanted);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void advance(std::uint64_t bytes);
  void finish();

 private:
  void draw(std::uint64_t done, std::chrono::steady_clock::time_point now);

  std::string label_;
  std::uint64_t total_;
  bool enabled_;
  std::atomic<std::uint64_t> done_{0};
  std::mutex mutex_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_draw_{};
  bool drawn_ = false;
};

}  // namespace ccpack
