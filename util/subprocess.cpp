// run_program: posix_spawnp into a process group of its own, poll() on its stdout until the deadline, then
// SIGKILL to the whole group and a blocking reap (see subprocess.hpp for the contract).
#include "util/subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

#include "util/error.hpp"
#include "util/fs.hpp"

extern char** environ;

namespace ccpack {
namespace {

using Clock = std::chrono::steady_clock;

int remaining_ms(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

// Spawns argv in a process group of its own with stdout on `out_fd`; returns the pid, or -1 with errno set.
pid_t spawn(const std::vector<std::string>& argv, int out_fd) {
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawnattr_setpgroup(&attr, 0);
  // The child starts with default signal handling whatever this process ignores (SIGXFSZ, SIGPIPE).
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGXFSZ);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    errno = rc;
    return -1;
  }
  return pid;
}

// Waits for `pid` until the deadline; kills its group on the deadline. Returns the wait status, or -1 if killed.
int reap(pid_t pid, Clock::time_point deadline, bool kill_now) {
  int status = 0;
  if (!kill_now) {
    while (true) {
      pid_t r = ::waitpid(pid, &status, WNOHANG);
      if (r == pid) return status;
      if (r < 0 && errno != EINTR) return -1;
      if (Clock::now() >= deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  ::kill(-pid, SIGKILL);
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return -1;
}

}  // namespace

std::string RunResult::why(const RunLimits& limits) const {
  switch (status) {
    case Status::exited:
      return exit_code == 0 ? "ok" : "exit " + std::to_string(exit_code);
    case Status::not_found:
      return "not found";
    case Status::timed_out:
      return "timed out after " + std::to_string(limits.timeout.count()) + " ms";
    case Status::too_much_output:
      return "more than " + std::to_string(limits.max_output) + " bytes of output";
    case Status::killed:
      return "killed by a signal";
    case Status::failed:
      break;
  }
  return "could not be run";
}

RunResult run_program(const std::vector<std::string>& argv, const RunLimits& limits) {
  RunResult result;
  if (argv.empty() || argv[0].empty()) return result;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw_errno("cannot create a pipe");
  UniqueFd read_end(fds[0]);
  UniqueFd write_end(fds[1]);
  const Clock::time_point deadline = Clock::now() + limits.timeout;
  pid_t pid = spawn(argv, write_end.get());
  if (pid < 0) {
    result.status =
        (errno == ENOENT || errno == EACCES || errno == ENOTDIR) ? RunResult::Status::not_found : RunResult::Status::failed;
    return result;
  }
  write_end.reset();
  bool stop = false;
  char buf[16384];
  while (!stop) {
    pollfd p{read_end.get(), POLLIN, 0};
    int n = ::poll(&p, 1, remaining_ms(deadline));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      result.status = RunResult::Status::timed_out;
      stop = true;
      break;
    }
    ssize_t got = ::read(read_end.get(), buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // end of output
    if (result.out.size() + static_cast<std::size_t>(got) > limits.max_output) {
      result.status = RunResult::Status::too_much_output;
      stop = true;
      break;
    }
    result.out.append(buf, static_cast<std::size_t>(got));
  }
  int status = reap(pid, deadline, stop);
  if (stop) return result;
  if (status < 0) {
    result.status = RunResult::Status::timed_out;
  } else if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
    // posix_spawnp reports a missing program as exit 127 from the child on some C libraries.
    result.status = result.exit_code == 127 && result.out.empty() ? RunResult::Status::not_found : RunResult::Status::exited;
  } else {
    result.status = RunResult::Status::killed;
  }
  return result;
}

}  // namespace ccpack
