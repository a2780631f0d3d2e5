// Running the warm-up command for `create --settle`: in a process group of its own, with the cache variables
// pointing at the folders of this run, a time limit, and ccpack's SIGINT/SIGTERM passed on to the whole group.
//
// Unlike util/subprocess.hpp (probes: bounded output, stderr dropped), the command is the user's workload: its
// output goes to ccpack's stderr (ccpack's stdout carries --json) and its stdin is /dev/null. Nothing of a run
// outlives it or ccpack: the command is started by a guardian process that is the run's subreaper and sweeps
// what is left before run_child returns, so no process of the run is alive to write into a folder about to be
// packed. docs/SETTLE.md says why a subreaper rather than a cgroup or a PID namespace.
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
  int exit_code = -1;  // exited
  int signal = 0;      // signaled: the signal that ended it; interrupted: the signal ccpack caught
  double seconds = 0;  // wall time
  [[nodiscard]] bool ok() const { return end == End::exited && exit_code == 0; }
};

// Runs argv (argv[0] searched on PATH) with `env` set on top of ccpack's environment. Throws Error when the
// command cannot be started (not found, not executable).
//
// Its stderr stays ccpack's stderr and its stdout goes to ccpack's stderr too, its stdin is /dev/null (a process
// group that is not the terminal's foreground must not read the terminal). Its own group means a Ctrl-C at the
// terminal reaches ccpack alone; ccpack forwards it to the group (a wrapper script's children included), waits
// for the command to end, and only then cleans up. Past the time limit the group gets SIGTERM, then SIGKILL after
// `limits.grace`.
//
// The guardian, a child of ccpack, is the run's subreaper (PR_SET_CHILD_SUBREAPER), so every orphan of the run, a
// daemon started with setsid included, becomes its child. When the command has ended, the guardian kills what is
// left of its group, then kills and reaps its own children until it has none, and only then reports the command's
// status. The guardian dies with ccpack's death signal turned into a sweep (PR_SET_PDEATHSIG: even a SIGKILL of
// ccpack ends the run), and the command dies with the guardian (PR_SET_PDEATHSIG SIGKILL, the getppid race
// checked).
[[nodiscard]] ChildResult run_child(const std::vector<std::string>& argv,
                                    const std::vector<std::pair<std::string, std::string>>& env, const ChildLimits& limits);

}  // namespace ccpack::settle
