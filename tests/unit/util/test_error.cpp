// util/error.cpp and error.hpp: each exception's exit code, the exit-code table in order with one row per code,
// and errno formatted as "what: strerror".
#include <catch2/catch.hpp>
#include <cerrno>
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
  // 0-7 in order, then the signal codes of `create --settle` (128 + signal number), ascending.
  for (std::size_t i = 0; i < kExitCodes.size(); ++i) {
    if (i < 8) CHECK(static_cast<std::size_t>(kExitCodes[i].code) == i);
    if (i > 0) CHECK(static_cast<int>(kExitCodes[i - 1].code) < static_cast<int>(kExitCodes[i].code));
    CHECK_FALSE(kExitCodes[i].meaning.empty());
  }
  CHECK(static_cast<int>(ExitCode::interrupted_int) == 128 + 2);
  CHECK(static_cast<int>(ExitCode::interrupted_term) == 128 + 15);
  CHECK(errno_message("cannot open 'f'", ENOENT) == "cannot open 'f': No such file or directory");
  errno = EACCES;
  try {
    throw_errno("cannot write 'g'");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == "cannot write 'g': " + std::string(std::strerror(EACCES)));
    CHECK(e.code() == ExitCode::error);
  }
}
