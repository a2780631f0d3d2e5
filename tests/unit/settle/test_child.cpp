// settle/child.cpp's run_child and SignalCatcher: the command's exit code, the signal that ended it, variables
// set on top of ccpack's environment (replacing one of the same name), the time limit ending the whole group,
// a SIGINT caught by ccpack passed on to the command, a daemon the command leaves behind ended before run_child
// returns, and the refusal of a command that cannot be started. Each test holds a SignalCatcher, which forgets a
// signal caught before it.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "settle/child.hpp"
#include "unit/support.hpp"

using namespace ccpack;
using settle::ChildResult;

namespace {

ChildResult shell(const std::string& script, const std::vector<std::pair<std::string, std::string>>& env = {},
                  const settle::ChildLimits& limits = {}) {
  return settle::run_child({"sh", "-c", script}, env, limits);
}

// The whole content of a file the command wrote.
std::string child_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("run_child: exit codes and the signal that ended the command", "[settle][child]") {
  settle::SignalCatcher catcher;
  ChildResult ok = shell("exit 0");
  CHECK(ok.end == ChildResult::End::exited);
  CHECK(ok.exit_code == 0);
  CHECK(ok.ok());
  ChildResult three = shell("exit 3");
  CHECK(three.end == ChildResult::End::exited);
  CHECK(three.exit_code == 3);
  CHECK_FALSE(three.ok());
  ChildResult killed = shell("kill -KILL $$");
  CHECK(killed.end == ChildResult::End::signaled);
  CHECK(killed.signal == SIGKILL);
  CHECK(killed.exit_code == -1);
  CHECK_FALSE(killed.ok());
}

TEST_CASE("run_child: variables on top of ccpack's environment, replacing one of the same name", "[settle][child]") {
  settle::SignalCatcher catcher;
  test::ScratchDir t;
  test::ScopedEnv kept("CCPACK_CHILD_TEST_KEPT", "kept");
  test::ScopedEnv replaced("CCPACK_CHILD_TEST_SET", "old");
  std::string out = (t / "env").string();
  ChildResult r = shell("echo \"$CCPACK_CHILD_TEST_KEPT $CCPACK_CHILD_TEST_SET $CCPACK_CHILD_TEST_NEW\" > '" + out +
                            "'; env | grep -c '^CCPACK_CHILD_TEST_SET=' >> '" + out + "'",
                        {{"CCPACK_CHILD_TEST_SET", "new"}, {"CCPACK_CHILD_TEST_NEW", "x=y"}});
  CHECK(r.ok());
  CHECK(child_file(t / "env") == "kept new x=y\n1\n");
}

TEST_CASE("run_child: the time limit ends the command's group", "[settle][child]") {
  settle::SignalCatcher catcher;
  test::ScratchDir t;
  settle::ChildLimits limits;
  limits.timeout = std::chrono::milliseconds(200);
  limits.grace = std::chrono::milliseconds(100);
  // The shell and its child both ignore nothing: SIGTERM to the group ends both.
  ChildResult r = shell("sleep 600 & echo $! > '" + (t / "pid").string() + "'; wait", {}, limits);
  CHECK(r.end == ChildResult::End::timed_out);
  CHECK_FALSE(r.ok());
  pid_t sleeper = std::stoi(child_file(t / "pid"));
  CHECK(::kill(sleeper, 0) == -1);
  CHECK(errno == ESRCH);
}

TEST_CASE("run_child: a SIGINT ccpack catches is passed on to the command", "[settle][child]") {
  settle::SignalCatcher catcher;
  CHECK(settle::SignalCatcher::caught() == 0);
  ChildResult r = shell("kill -INT " + std::to_string(::getpid()) + "; sleep 600");
  CHECK(r.end == ChildResult::End::interrupted);
  CHECK(r.signal == SIGINT);
  CHECK(settle::SignalCatcher::caught() == SIGINT);
  settle::SignalCatcher fresh;  // a new catcher forgets it
  CHECK(settle::SignalCatcher::caught() == 0);
}

TEST_CASE("run_child: a daemon the command leaves behind is ended before it returns", "[settle][child]") {
  settle::SignalCatcher catcher;
  test::ScratchDir t;
  std::string pid_file = (t / "daemon").string();
  ChildResult r = shell("setsid sh -c 'echo $$ > \"" + pid_file +
                        "\"; exec sleep 600' </dev/null >/dev/null 2>&1 & "
                        "while [ ! -s '" +
                        pid_file + "' ]; do sleep 0.01; done; exit 0");
  CHECK(r.ok());
  pid_t daemon = std::stoi(child_file(t / "daemon"));
  CHECK(::kill(daemon, 0) == -1);
  CHECK(errno == ESRCH);
}

TEST_CASE("run_child: a command that cannot be started is refused by name", "[settle][child]") {
  settle::SignalCatcher catcher;
  CHECK(test::ccpack_error([] { (void)settle::run_child({"ccpack-no-such-command"}, {}, {}); }) ==
        "cannot run the settle command 'ccpack-no-such-command': No such file or directory");
  test::ScratchDir t;
  test::write_file(t / "plain", "not a program\n", 0644);
  CHECK(test::ccpack_error([&] { (void)settle::run_child({(t / "plain").string()}, {}, {}); }) ==
        "cannot run the settle command '" + (t / "plain").string() + "': Permission denied");
}
