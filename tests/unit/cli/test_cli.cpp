// The front end's shared pieces (cli/cli, cli/version): where each kind of line goes in each mode (a terminal
// report, -q, --json), the --json envelope, the size format, and the --version text.
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <functional>

#include "cli/cli.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"
#include "util/version.hpp"

using namespace ccpack;

namespace {

test::Streams all_lines(const cli::CommonOptions& common) {
  return test::captured([&common] {
    cli::Reporter r(common);
    r.say("said");
    r.warn("warned");
    r.alarm("alarmed");
    r.report({{"count", 2}, {"name", "x"}});
  });
}

}  // namespace

TEST_CASE("reporter: a terminal report says, warns and alarms on stderr and writes no JSON") {
  cli::CommonOptions c;
  test::Streams s = all_lines(c);
  CHECK(s.out.empty());
  CHECK(s.err == "ccpack: said\nccpack: warning: warned\nccpack: warning: alarmed\n");
  CHECK(cli::Reporter(c).progress());
}

TEST_CASE("reporter: -q keeps only the alarm, --json keeps the warnings and writes the report with ok first") {
  cli::CommonOptions quiet;
  quiet.quiet = true;
  test::Streams q = all_lines(quiet);
  CHECK(q.out.empty());
  CHECK(q.err == "ccpack: warning: alarmed\n");
  CHECK_FALSE(cli::Reporter(quiet).progress());
  cli::CommonOptions json;
  json.json = true;
  test::Streams j = all_lines(json);
  CHECK(j.err == "ccpack: warning: warned\nccpack: warning: alarmed\n");
  CHECK(j.out == "{\n  \"ok\": true,\n  \"count\": 2,\n  \"name\": \"x\"\n}\n");
  CHECK_FALSE(cli::Reporter(json).progress());
}

TEST_CASE("mb: decimal megabytes with one decimal") {
  CHECK(cli::mb(0) == "0.0 MB");
  CHECK(cli::mb(12'345'678) == "12.3 MB");
  CHECK(cli::mb(363'000'000) == "363.0 MB");
}

TEST_CASE("version: the first line is ccpack's version, then each library it was built with") {
  std::string v = cli::version_text();
  CHECK(v.rfind(std::string("ccpack ") + kVersion + "\nbuilt with:\n  zstd ", 0) == 0);
  for (const char* lib : {"\n  OpenSSL ", "\n  oneTBB ", "\n  libarchive ", "\n  libcurl "})
    CHECK(v.find(lib) != std::string::npos);
  CHECK(v.back() != '\n');  // CLI11 adds the last newline
}

TEST_CASE("count options take exactly the integers 0 to 2^63-1, and anything else is a usage error naming the value") {
  CHECK(cli::count_option("--max-compiled", "0") == 0);
  CHECK(cli::count_option("--max-compiled", "10") == 10);
  CHECK(cli::count_option("--max-compiled", "9223372036854775807") == 9223372036854775807ULL);
  for (const std::string bad : {"-1", "-9223372036854775809", "", "1.5", "+3", "0x10", " 1", "1 ", "9223372036854775808",
                                "18446744073709551615", "18446744073709551616", "1e3", "\n"}) {
    try {
      (void)cli::count_option("--max-compiled", bad);
      FAIL("accepted '" << bad << "'");
    } catch (const UsageError& e) {
      CHECK(e.code() == ExitCode::usage);
      CHECK(std::string(e.what()) ==
            "--max-compiled: " + quoted_name(bad) + " is not a whole number from 0 to 9223372036854775807");
    }
  }
}

namespace {

struct Captured {
  std::string out, err;
  int result = -1;
};

// Runs `body` with file descriptors 1 and 2 sent to files, and returns what each received and what it returned.
Captured capture(const std::function<int()>& body) {
  Captured c;
  test::Streams s = test::captured([&] { c.result = body(); });
  c.out = s.out;
  c.err = s.err;
  return c;
}

}  // namespace

TEST_CASE("refused and finish_with: the --json report on stdout, one error line on stderr, the exit code", "[cli]") {
  cli::CommonOptions json_mode;
  json_mode.json = true;
  Captured c = capture([&] { return cli::refused(cli::Reporter(json_mode), {{"archive", "a.ccpack"}}, "gpu.arch differs"); });
  CHECK(c.result == 3);
  CHECK(c.out ==
        "{\n  \"ok\": false,\n  \"exit_code\": 3,\n  \"error\": \"gpu.arch differs\",\n  \"archive\": \"a.ccpack\"\n}\n");
  CHECK(c.err == "ccpack: error: gpu.arch differs\n");
  cli::CommonOptions plain;
  Captured p = capture([&] {
    return cli::finish_with(cli::Reporter(plain), {{"archive", "a.ccpack"}}, ExitCode::not_restored, "not restored: 'x'");
  });
  CHECK(p.result == 5);
  CHECK(p.out.empty());
  CHECK(p.err == "ccpack: error: not restored: 'x'\n");
}
