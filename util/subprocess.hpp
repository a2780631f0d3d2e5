// Running a helper program (python, nvidia-smi, ptxas) with a hard deadline and a bounded output.
//
// Probes run in a pod's entrypoint, so a helper that hangs or floods its output must never hang or exhaust the
// start-up: the child gets its own process group (so a wrapper script's children go too), stdin from /dev/null,
// stderr discarded, and its stdout is read with poll() until the deadline; past the deadline or the output bound
// the whole group is killed with SIGKILL and reaped. The result says what happened; it never throws for the
// child's behaviour (only for resources this process cannot get).
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace ccpack {

struct RunLimits {
  std::chrono::milliseconds timeout{2000};
  std::size_t max_output = 1 << 20;  // bytes of stdout kept; more kills the child
};

struct RunResult {
  enum class Status { exited, not_found, timed_out, too_much_output, killed, failed } status = Status::failed;
  int exit_code = -1;  // when exited
  std::string out;     // standard output, at most RunLimits::max_output bytes

  [[nodiscard]] bool ok() const { return status == Status::exited && exit_code == 0; }
  // Why it is not ok, in a few words, for a fingerprint's `source` ("timed out after 2000 ms", "exit 1").
  [[nodiscard]] std::string why(const RunLimits& limits) const;
};

// Runs argv[0] (searched on PATH when it has no '/') with argv; the environment is inherited.
[[nodiscard]] RunResult run_program(const std::vector<std::string>& argv, const RunLimits& limits = {});

}  // namespace ccpack
