// Running the warm-up command for `create --settle`: in a process group of its own, with the cache variables
// pointing at the folders of this run, a time limit, and ccpack's SIGINT/SIGTERM passed on to the whole group.
//
// Unlike util/subprocess.hpp (probes: bounded output, stderr dropped), the command is the user's workload: its
// stderr stays ccpack's stderr and its stdout goes to ccpack's stderr too (ccpack's stdout carries --json), its
// stdin is /dev/null (a process group that is not the terminal's foreground must not read the terminal). Its own
// group means a Ctrl-C at the terminal reaches ccpack alone; ccpack forwards it to the group (a wrapper script's
// children included), waits for the command to end, and only then cleans up. Past the time limit the group gets
// SIGTERM, then SIGKILL after a grace period. When the command has exited, what is left of its group is killed,
// so no straggler writes into a folder that is about to be packed.
#pragma once

#include <chrono>
#include <csignal>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ccpack::settle {

// SIGINT and SIGTERM noted instead of ending ccpack, for as long as it lives (the settle flow holds one): the
// flow ends the command, cleans up, and exits 130 or 143. The previous handlers come back on destruction.
class SignalCatcher {
 public:
  SignalCatcher();
  ~SignalCatcher();
  SignalCatcher(const SignalCatcher&) = delete;
  SignalCatcher& operator=(const SignalCatcher&) = delete;
  // The signal caught (SIGINT or SIGTERM), or 0.
  [[nodiscard]] static int caught();

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

struct ChildLimits {
  std::optional<std::chrono::milliseconds> timeout;  // none: no limit
  std::chrono::milliseconds grace{3000};             // between SIGTERM and SIGKILL
};

struct ChildResult {
  enum class End { exited, signaled, timed_out, interrupted } end = End::exited;
  int exit_code = -1;     // exited
  int signal = 0;         // signaled: the signal that ended it; interrupted: the signal ccpack caught
  double seconds = 0;     // wall time
  [[nodiscard]] bool ok() const { return end == End::exited && exit_code == 0; }
};

// Runs argv (argv[0] searched on PATH) with `env` set on top of ccpack's environment. Throws Error when the
// command cannot be started (not found, not executable).
[[nodiscard]] ChildResult run_child(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& env,
                                    const ChildLimits& limits);

}  // namespace ccpack::settle
