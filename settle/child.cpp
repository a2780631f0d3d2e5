// The warm-up command as a child in its own process group (child.hpp): started with execvpe on an environment
// built before fork (the child only calls async-signal-safe functions), then watched with waitpid every 10 ms
// against the deadline and ccpack's caught signals.
#include "settle/child.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

#include "util/error.hpp"

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX declares it nowhere

namespace ccpack::settle {
namespace {

using Clock = std::chrono::steady_clock;

volatile std::sig_atomic_t g_caught = 0;

extern "C" void note_signal(int sig) { g_caught = sig; }

// ccpack's environment with `env` set over it, as "NAME=VALUE" strings.
std::vector<std::string> child_environment(const std::vector<std::pair<std::string, std::string>>& env) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view entry(*e);
    bool replaced = false;
    for (const auto& [name, value] : env) replaced = replaced || (entry.starts_with(name) && entry.size() > name.size() && entry[name.size()] == '=');
    if (!replaced) out.emplace_back(entry);
  }
  for (const auto& [name, value] : env) {
    std::string entry = name;
    entry += '=';
    entry += value;
    out.push_back(std::move(entry));
  }
  return out;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// In the child, between fork and exec: async-signal-safe calls only. Reports exec's errno on `report`.
[[noreturn]] void exec_child(char* const* argv, char* const* envp, int report) {
  (void)::setpgid(0, 0);
  for (int sig : {SIGINT, SIGTERM, SIGPIPE, SIGXFSZ}) (void)std::signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  (void)::sigprocmask(SIG_SETMASK, &none, nullptr);
  int null = ::open("/dev/null", O_RDONLY);
  if (null >= 0) (void)::dup2(null, STDIN_FILENO);
  (void)::dup2(STDERR_FILENO, STDOUT_FILENO);  // ccpack's stdout is its --json report
  ::execvpe(argv[0], argv, envp);
  int err = errno;
  (void)!::write(report, &err, sizeof err);
  ::_exit(127);
}

// Waits for `pid` until `until`; true when it has ended (status in `status`).
bool wait_until(pid_t pid, int& status, Clock::time_point until) {
  for (;;) {
    pid_t got = ::waitpid(pid, &status, WNOHANG);
    if (got == pid) return true;
    if (got < 0 && errno != EINTR) return true;
    if (Clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// Ends the group: `sig` first, SIGKILL after the grace period; reaps the leader.
void end_group(pid_t pid, int sig, std::chrono::milliseconds grace, int& status) {
  (void)::kill(-pid, sig);
  if (!wait_until(pid, status, Clock::now() + grace)) {
    (void)::kill(-pid, SIGKILL);
    (void)wait_until(pid, status, Clock::time_point::max());
  }
  (void)::kill(-pid, SIGKILL);  // what is left of the group
}

}  // namespace

SignalCatcher::SignalCatcher() {
  g_caught = 0;
  struct sigaction sa {};
  sa.sa_handler = note_signal;
  sigemptyset(&sa.sa_mask);
  (void)::sigaction(SIGINT, &sa, &old_int_);
  (void)::sigaction(SIGTERM, &sa, &old_term_);
}

SignalCatcher::~SignalCatcher() {
  (void)::sigaction(SIGINT, &old_int_, nullptr);
  (void)::sigaction(SIGTERM, &old_term_, nullptr);
}

int SignalCatcher::caught() { return g_caught; }

ChildResult run_child(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& env,
                      const ChildLimits& limits) {
  std::vector<std::string> args = argv;
  std::vector<std::string> envs = child_environment(env);
  std::vector<char*> argp = pointers(args);
  std::vector<char*> envp = pointers(envs);
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) throw_errno("cannot start " + argv.front());
  Clock::time_point start = Clock::now();
  pid_t pid = ::fork();
  if (pid < 0) throw_errno("cannot start " + argv.front());
  if (pid == 0) exec_child(argp.data(), envp.data(), report[1]);
  (void)::setpgid(pid, pid);
  ::close(report[1]);
  int err = 0;
  ssize_t got = ::read(report[0], &err, sizeof err);  // EOF at exec: started
  ::close(report[0]);
  ChildResult r;
  int status = 0;
  if (got == static_cast<ssize_t>(sizeof err)) {
    (void)::waitpid(pid, &status, 0);
    throw Error("cannot run the settle command '" + argv.front() + "': " + std::strerror(err));
  }
  Clock::time_point deadline = limits.timeout ? start + *limits.timeout : Clock::time_point::max();
  for (;;) {
    if (wait_until(pid, status, std::min(deadline, Clock::now() + std::chrono::milliseconds(50)))) break;
    if (int sig = SignalCatcher::caught()) {
      end_group(pid, sig, limits.grace, status);
      r.end = ChildResult::End::interrupted;
      r.signal = sig;
      break;
    }
    if (Clock::now() >= deadline) {
      end_group(pid, SIGTERM, limits.grace, status);
      r.end = ChildResult::End::timed_out;
      break;
    }
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  (void)::kill(-pid, SIGKILL);  // stragglers of a command that has exited
  if (r.end != ChildResult::End::exited) return r;
  if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.end = ChildResult::End::signaled;
    r.signal = WTERMSIG(status);
  }
  return r;
}

}  // namespace ccpack::settle
