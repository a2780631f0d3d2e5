// cli/fingerprint_options.cpp: --ignore checked against the field table (hostile names escaped), and the --python
// and --ignore options as CLI11 parses them.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "cli/fingerprint_options.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"

using namespace ccpack;

namespace {

std::string ignore_usage_error(const std::vector<std::string>& ignored) {
  return test::usage_error([&] { cli::check_ignored(ignored); });
}

}  // namespace

TEST_CASE("check_ignored: every name must be a field of the table, hostile names are escaped", "[fingerprint_options]") {
  CHECK(ignore_usage_error({}) == "(no UsageError)");
  CHECK(ignore_usage_error({"gpu.driver", "cache.targets", "triton.version"}) == "(no UsageError)");
  std::string bad = ignore_usage_error({"gpu.driver", "gpu.drivers"});
  CHECK_THAT(bad, Catch::StartsWith(
                      "--ignore: 'gpu.drivers' is not a fingerprint field (fields: cpu.arch, os, glibc, python.version, "));
  CHECK_THAT(bad, Catch::EndsWith(", paths.inductor, paths.triton, cache.targets)"));
  CHECK_THAT(ignore_usage_error({"gpu\narch\x1b[2J"}),
             Catch::StartsWith("--ignore: 'gpu\\narch\\x1b[2J' is not a fingerprint field"));
  CHECK_THAT(ignore_usage_error({"GPU.ARCH"}), Catch::StartsWith("--ignore: 'GPU.ARCH' is not"));  // names are exact
  std::string long_name = ignore_usage_error({std::string(500, 'x')});
  CHECK(long_name.find(std::string(65, 'x')) == std::string::npos);  // cut at 64 bytes
  CHECK_THAT(long_name, Catch::Contains("...' is not a fingerprint field"));
}

TEST_CASE("the ignore and python options: one field per --ignore, so a positional after it stays positional",
          "[fingerprint_options]") {
  CLI::App app;
  std::vector<std::string> ignored;
  std::string python;
  std::string archive;
  cli::add_ignore_option(&app, ignored);
  cli::add_python_option(&app, python);
  app.add_option("archive", archive);
  std::vector<std::string> args = {"ccpack",   "--ignore", "gpu.driver", "a.ccpack",
                                   "--ignore", "glibc",    "--python",   "/venv/bin/python"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  app.parse(static_cast<int>(argv.size()), argv.data());
  CHECK(ignored == std::vector<std::string>{"gpu.driver", "glibc"});
  CHECK(archive == "a.ccpack");
  CHECK(python == "/venv/bin/python");
}
