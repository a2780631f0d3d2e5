// A one-line progress meter for long work: shown on a terminal, silent in a pipe or with --quiet.
//
// `advance` may be called from any thread; it redraws at most every 100 ms under a lock, so the hot loops pay one
// atomic add per call.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace ccpack {

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
  void draw(std::uint64_t done);

  std::string label_;
  std::uint64_t total_;
  bool enabled_;
  std::atomic<std::uint64_t> done_{0};
  std::mutex mutex_;
  std::chrono::steady_clock::time_point last_draw_{};
  bool drawn_ = false;
};

}  // namespace ccpack
