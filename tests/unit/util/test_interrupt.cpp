// util/interrupt.cpp: each signal's message and exit code, check() and caught() in a process that never installed
// the handlers, and, in a forked child that installs them, a signal ending the process with its line and exit
// code (the registered folders removed, a forgotten one kept), or only recorded for check() after begin_writing.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>

#include "unit/support.hpp"
#include "util/error.hpp"
#include "util/interrupt.hpp"

using namespace ccpack;
namespace fs = std::filesystem;

namespace {

struct ChildEnd {
  int exit_code = -1;
  std::string err;
};

// Runs `body` in a forked child whose stderr goes to `err_file`; its exit status and what it wrote there.
ChildEnd in_child(const fs::path& err_file, const std::function<int()>& body) {
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    int fd = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || ::dup2(fd, STDERR_FILENO) < 0) ::_exit(90);
    ::_exit(body());
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  std::ifstream in(err_file, std::ios::binary);
  return {WEXITSTATUS(status), {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()}};
}

}  // namespace

TEST_CASE("interrupt::message and exit_code of each signal", "[util][interrupt]") {
  CHECK(std::string(interrupt::message(SIGINT)) == "interrupted, nothing changed (SIGINT)");
  CHECK(std::string(interrupt::message(SIGTERM)) == "interrupted, nothing changed (SIGTERM)");
  CHECK(std::string(interrupt::message(SIGHUP)) == "interrupted, nothing changed (SIGHUP)");
  CHECK(interrupt::exit_code(SIGINT) == ExitCode::interrupted_int);
  CHECK(interrupt::exit_code(SIGTERM) == ExitCode::interrupted_term);
  CHECK(interrupt::exit_code(SIGHUP) == ExitCode::interrupted_hup);
  CHECK(static_cast<int>(interrupt::exit_code(SIGHUP)) == 129);
}

TEST_CASE("interrupt::check and caught without install: nothing caught, nothing thrown", "[util][interrupt]") {
  CHECK(interrupt::caught() == 0);
  CHECK_NOTHROW(interrupt::check());
}

TEST_CASE("interrupt: a signal before begin_writing ends the process with its line and code", "[util][interrupt]") {
  test::ScratchDir t;
  for (auto [sig, code, name] :
       {std::tuple{SIGINT, 130, "SIGINT"}, std::tuple{SIGTERM, 143, "SIGTERM"}, std::tuple{SIGHUP, 129, "SIGHUP"}}) {
    ChildEnd end = in_child(t / "err", [sig = sig] {
      interrupt::install();
      ::raise(sig);
      return 99;  // not reached
    });
    CHECK(end.exit_code == code);
    CHECK(end.err == std::string("ccpack: error: interrupted, nothing changed (") + name + ")\n");
  }
}

TEST_CASE("interrupt: registered folders are removed by the handler, a forgotten one is kept", "[util][interrupt]") {
  test::ScratchDir t;
  test::write_file(t / "scratch/a/b/c/file", "x");
  test::write_file(t / "scratch/top", "y");
  test::write_file(t / "forgotten/file", "z");
  ChildEnd end = in_child(t / "err", [&] {
    interrupt::install();
    interrupt::remove_on_signal(t / "scratch");
    interrupt::remove_on_signal(t / "forgotten");
    interrupt::forget_on_signal(t / "forgotten");
    ::raise(SIGTERM);
    return 99;
  });
  CHECK(end.exit_code == 143);
  CHECK_FALSE(fs::exists(t / "scratch"));
  CHECK(fs::exists(t / "forgotten/file"));
}

TEST_CASE("interrupt: after begin_writing a signal is only recorded, and check() throws it", "[util][interrupt]") {
  test::ScratchDir t;
  test::write_file(t / "scratch/file", "x");
  ChildEnd end = in_child(t / "err", [&] {
    interrupt::install();
    interrupt::remove_on_signal(t / "scratch");
    interrupt::begin_writing();
    ::raise(SIGHUP);
    if (interrupt::caught() != SIGHUP) return 1;
    try {
      interrupt::check();
    } catch (const Error& e) {
      if (std::string(e.what()) != "interrupted, nothing changed (SIGHUP)") return 2;
      return e.code() == ExitCode::interrupted_hup ? 0 : 3;
    }
    return 4;
  });
  CHECK(end.exit_code == 0);
  CHECK(end.err.empty());
  CHECK(fs::exists(t / "scratch/file"));  // the handler removed nothing: the code that made it does
}
