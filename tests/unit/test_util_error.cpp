// util/error.cpp and error.hpp: each exception's exit code, the exit-code table in order with one row per code,
// and errno formatted as "what: strerror".
#include <cerrno>

#include <catch2/catch.hpp>
#include <cstring>
#include <string>

#include "util/error.hpp"

using namespace ccpack;

TEST_CASE("errors: each kind's exit code, the table's order, errno's text") {
  CHECK(Error("x").code() == ExitCode::error);
  CHECK(Error("x", ExitCode::refused).code() == ExitCode::refused);
  CHECK(IntegrityError("x").code() == ExitCode::integrity);
  CHECK(UsageError("x").code() == ExitCode::usage);
  CHECK(static_cast<int>(ExitCode::ok) == 0);
  CHECK(static_cast<int>(ExitCode::not_restored) == 5);
  for (std::size_t i = 0; i < kExitCodes.size(); ++i) {
    CHECK(static_cast<std::size_t>(kExitCodes[i].code) == i);
    CHECK_FALSE(kExitCodes[i].meaning.empty());
  }
  CHECK(errno_message("cannot open 'f'", ENOENT) == "cannot open 'f': No such file or directory");
  errno = EACCES;
  try {
    throw_errno("cannot write 'g'");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == "cannot write 'g': " + std::string(std::strerror(EACCES)));
    CHECK(e.code() == ExitCode::error);
  }
}
