// The warm-up command as a grandchild in its own process group (child.hpp): ccpack forks the guardian, the
// guardian (the run's subreaper) forks the command, which execs with execvpe on an environment built before the
// first fork. Between fork and exec, and in the guardian all along, only async-signal-safe calls are made (ccpack
// has threads): the guardian finds its children in /proc with open, getdents64 and read. ccpack watches the
// guardian's reports on a pipe every 10 ms against the deadline and ccpack's caught signals.
#include "settle/child.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
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
    for (const auto& [name, value] : env)
      replaced = replaced || (entry.starts_with(name) && entry.size() > name.size() && entry[name.size()] == '=');
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

// In the command, between fork and exec: async-signal-safe calls only. Reports exec's errno on `report`.
[[noreturn]] void exec_child(char* const* argv, char* const* envp, int report, pid_t guardian) {
  // It dies with the guardian (killed with ccpack's group, or by hand); a guardian gone before the prctl is seen.
  (void)::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != guardian) ::_exit(127);
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

// What the guardian tells ccpack on the report pipe.
struct Report {
  enum Kind : int { started, failed, ended } kind = failed;
  int value = 0;  // started: the command's pid; failed: errno; ended: the command's wait status
};

void send(int fd, Report::Kind kind, int value) {
  Report r{kind, value};
  (void)!::write(fd, &r, sizeof r);
}

[[noreturn]] void fail(int fd, int err) {
  send(fd, Report::failed, err);
  ::_exit(127);
}

volatile std::sig_atomic_t g_ccpack_gone = 0;
extern "C" void note_ccpack_gone(int) { g_ccpack_gone = 1; }

// The parent pid in /proc/<name>/stat ("pid (comm) S ppid ...", comm may hold ')' and spaces), or -1.
pid_t parent_in_proc(int proc, const char* name) {
  static constexpr char kStat[] = "/stat";
  char path[48];
  std::size_t n = 0;
  for (; name[n] != '\0'; ++n) {
    if (n >= sizeof path - sizeof kStat) return -1;
    path[n] = name[n];
  }
  std::memcpy(path + n, kStat, sizeof kStat);  // with its '\0'
  int fd = ::openat(proc, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[512];
  ssize_t got = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (got <= 0) return -1;
  buf[got] = '\0';
  const char* p = std::strrchr(buf, ')');
  if (p == nullptr || p[1] != ' ' || p[2] == '\0' || p[3] != ' ') return -1;
  pid_t ppid = 0;
  for (p += 4; *p >= '0' && *p <= '9'; ++p) ppid = ppid * 10 + (*p - '0');
  return ppid;
}

// SIGKILL to every process whose parent is `self`, found by a walk of /proc.
void kill_children(pid_t self) {
  int proc = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (proc < 0) return;
  alignas(8) char buf[4096];
  for (long n; (n = ::syscall(SYS_getdents64, proc, buf, sizeof buf)) > 0;) {
    for (long off = 0; off < n;) {
      std::uint16_t reclen = 0;  // struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1), d_name
      std::memcpy(&reclen, buf + off + 16, sizeof reclen);
      const char* name = buf + off + 19;
      off += reclen;
      pid_t pid = 0;
      for (const char* c = name; *c >= '0' && *c <= '9'; ++c) pid = pid * 10 + (*c - '0');
      if (pid > 0 && parent_in_proc(proc, name) == self) (void)::kill(pid, SIGKILL);
    }
  }
  ::close(proc);
}

// Kills and reaps every process left below the guardian: as the subreaper, it inherits each orphan of the run
// (a daemon in its own session included), and a killed process's children come to it next round.
void sweep(pid_t self) {
  for (;;) {
    kill_children(self);
    int st = 0;
    pid_t got = ::waitpid(-1, &st, WNOHANG);
    if (got < 0 && errno == ECHILD) return;
    if (got == 0) {
      timespec pause{0, 1'000'000};
      (void)::nanosleep(&pause, nullptr);
    }
  }
}

// The guardian: ccpack's child, the subreaper of the run. It starts the command, waits for it (and reaps every
// orphan that comes to it meanwhile), then kills and reaps whatever the run left, and only then reports the
// command's status: when ccpack reads it, nothing of the run is alive. When ccpack dies (even by SIGKILL), the
// kernel sends it SIGUSR1 (PR_SET_PDEATHSIG): it kills the command's group and sweeps the rest the same way.
[[noreturn]] void guard(char* const* argv, char* const* envp, int report, pid_t ccpack) {
  (void)::setpgid(0, 0);  // out of ccpack's group: a Ctrl-C at the terminal reaches ccpack alone
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGXFSZ}) (void)std::signal(sig, SIG_DFL);
  struct sigaction sa {};
  sa.sa_handler = note_ccpack_gone;
  sigemptyset(&sa.sa_mask);
  (void)::sigaction(SIGUSR1, &sa, nullptr);  // no SA_RESTART: waitpid returns EINTR
  // defence: settle-subreaper
  (void)::prctl(PR_SET_CHILD_SUBREAPER, 1);
  (void)::prctl(PR_SET_PDEATHSIG, SIGUSR1);      // defence: settle-dies-with-ccpack
  if (::getppid() != ccpack) g_ccpack_gone = 1;  // ccpack died before the prctl
  pid_t self = ::getpid();
  int started[2];
  if (::pipe2(started, O_CLOEXEC) != 0) fail(report, errno);
  pid_t cmd = ::fork();
  if (cmd < 0) fail(report, errno);
  if (cmd == 0) exec_child(argv, envp, started[1], self);
  (void)::setpgid(cmd, cmd);
  ::close(started[1]);
  int err = 0;
  if (::read(started[0], &err, sizeof err) == static_cast<ssize_t>(sizeof err)) {
    sweep(self);
    fail(report, err);
  }
  send(report, Report::started, cmd);
  int status = 0;
  for (;;) {
    if (g_ccpack_gone) (void)::kill(-cmd, SIGKILL);
    int st = 0;
    pid_t got = ::waitpid(-1, &st, 0);
    if (got == cmd) status = st;
    if (got == cmd || (got < 0 && errno == ECHILD)) break;
  }
  (void)::kill(-cmd, SIGKILL);  // what is left of its group
  sweep(self);
  send(report, Report::ended, status);
  ::_exit(0);
}

// Waits for the guardian's report until `until`; true when it came (or the guardian is gone: `status` says
// SIGKILL then).
bool wait_report(int fd, int& status, Clock::time_point until) {
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 10) > 0) {
      Report r;
      ssize_t got = ::read(fd, &r, sizeof r);
      if (got < 0 && errno == EINTR) continue;
      status = got == static_cast<ssize_t>(sizeof r) && r.kind == Report::ended ? r.value : SIGKILL;
      return true;
    }
    if (Clock::now() >= until) return false;
  }
}

// Ends the command's group: `sig` first, SIGKILL after the grace period; waits for the guardian's report.
void end_group(pid_t pid, int sig, std::chrono::milliseconds grace, int fd, int& status) {
  (void)::kill(-pid, sig);
  if (!wait_report(fd, status, Clock::now() + grace)) {
    (void)::kill(-pid, SIGKILL);
    (void)wait_report(fd, status, Clock::time_point::max());
  }
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

namespace {

// Forks the guardian and reads its first report: the command's pid. Throws when the command cannot be started.
pid_t start(const std::vector<std::string>& argv, char* const* argp, char* const* envp, int& report, pid_t& guardian) {
  int pipe[2];
  if (::pipe2(pipe, O_CLOEXEC) != 0) throw_errno("cannot start " + argv.front());
  pid_t ccpack = ::getpid();
  guardian = ::fork();
  if (guardian < 0) throw_errno("cannot start " + argv.front());
  if (guardian == 0) {
    ::close(pipe[0]);
    guard(argp, envp, pipe[1], ccpack);
  }
  ::close(pipe[1]);
  report = pipe[0];
  Report r;
  ssize_t got = 0;
  do {
    got = ::read(report, &r, sizeof r);
  } while (got < 0 && errno == EINTR);
  if (got == static_cast<ssize_t>(sizeof r) && r.kind == Report::started) return r.value;
  int status = 0;
  (void)::waitpid(guardian, &status, 0);
  ::close(report);
  int err = got == static_cast<ssize_t>(sizeof r) ? r.value : ECHILD;
  throw Error("cannot run the settle command '" + argv.front() + "': " + std::strerror(err));
}

}  // namespace

ChildResult run_child(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& env,
                      const ChildLimits& limits) {
  std::vector<std::string> args = argv;
  std::vector<std::string> envs = child_environment(env);
  std::vector<char*> argp = pointers(args);
  std::vector<char*> envp = pointers(envs);
  Clock::time_point begin = Clock::now();
  int report = -1;
  pid_t guardian = 0;
  pid_t pid = start(argv, argp.data(), envp.data(), report, guardian);
  ChildResult r;
  int status = 0;
  Clock::time_point deadline = limits.timeout ? begin + *limits.timeout : Clock::time_point::max();
  for (;;) {
    if (wait_report(report, status, std::min(deadline, Clock::now() + std::chrono::milliseconds(50)))) break;
    if (int sig = SignalCatcher::caught()) {
      end_group(pid, sig, limits.grace, report, status);
      r.end = ChildResult::End::interrupted;
      r.signal = sig;
      break;
    }
    if (Clock::now() >= deadline) {
      end_group(pid, SIGTERM, limits.grace, report, status);
      r.end = ChildResult::End::timed_out;
      break;
    }
  }
  // The guardian has reaped the command and swept what the run left; it ends now.
  int guardian_status = 0;
  (void)::waitpid(guardian, &guardian_status, 0);
  ::close(report);
  r.seconds = std::chrono::duration<double>(Clock::now() - begin).count();
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
