// util/subprocess.cpp's run_program: its stdout kept, its exit code, stdin from /dev/null and stderr discarded,
// a program not found, one killed past its deadline or past the output bound or by a signal, and the few words of
// why() for each.
#include <catch2/catch.hpp>
#include <string>

#include "util/subprocess.hpp"

using namespace ccpack;
using Status = RunResult::Status;

TEST_CASE("run_program: stdout and exit code, stdin is empty, stderr is not kept") {
  RunResult r = run_program({"sh", "-c", "printf 'out\\n'; echo err >&2; cat; exit 0"});
  CHECK(r.status == Status::exited);
  CHECK(r.exit_code == 0);
  CHECK(r.ok());
  CHECK(r.out == "out\n");
  CHECK(r.why({}) == "ok");
  r = run_program({"sh", "-c", "printf partial; exit 3"});
  CHECK(r.status == Status::exited);
  CHECK(r.exit_code == 3);
  CHECK_FALSE(r.ok());
  CHECK(r.out == "partial");
  CHECK(r.why({}) == "exit 3");
  // Arguments go as they are, no shell between.
  r = run_program({"printf", "%s|", "a b", "$HOME", ""});
  CHECK(r.out == "a b|$HOME||");
}

TEST_CASE("run_program: a program that is not there") {
  RunResult r = run_program({"ccpack-no-such-program-here"});
  CHECK(r.status == Status::not_found);
  CHECK_FALSE(r.ok());
  CHECK(r.why({}) == "not found");
  r = run_program({"/nonexistent/folder/program"});
  CHECK(r.status == Status::not_found);
}

TEST_CASE("run_program: past the deadline, past the output bound, killed by a signal") {
  RunLimits quick;
  quick.timeout = std::chrono::milliseconds(200);
  RunResult r = run_program({"sh", "-c", "printf before; exec sleep 30"}, quick);
  CHECK(r.status == Status::timed_out);
  CHECK_FALSE(r.ok());
  CHECK(r.why(quick) == "timed out after 200 ms");
  RunLimits small;
  small.max_output = 1000;
  r = run_program({"sh", "-c", "yes 0123456789"}, small);
  CHECK(r.status == Status::too_much_output);
  CHECK(r.out.size() <= 1000);
  CHECK(r.why(small) == "more than 1000 bytes of output");
  // Exactly the bound is not too much.
  r = run_program({"head", "-c", "1000", "/dev/zero"}, small);
  CHECK(r.status == Status::exited);
  CHECK(r.out == std::string(1000, '\0'));
  r = run_program({"sh", "-c", "kill -9 $$"});
  CHECK(r.status == Status::killed);
  CHECK(r.why({}) == "killed by a signal");
}
