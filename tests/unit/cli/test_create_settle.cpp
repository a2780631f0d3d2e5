// cli/create_settle.cpp: create's settle flags as CLI11 parses them, the usage errors of check_settle_options (each
// message exact), and settle_if_asked: nothing without --settle (not even a probe), and with it a settle of a /bin/sh
// warm-up whose outcome carries the tuning record of --no-tuned-settings, run quietly.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/create_settle.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"

using namespace ccpack;
namespace fs = std::filesystem;

namespace {

// The settle options `args` give create (CLI11 parses "create ARGS").
cli::SettleOptions settle_flags(std::vector<std::string> args) {
  CLI::App app;
  CLI::App* create = app.add_subcommand("create");
  cli::SettleOptions o;
  cli::add_settle_options(create, o);
  args.insert(args.begin(), "create");
  std::reverse(args.begin(), args.end());
  app.parse(args);
  return o;
}

std::string settle_usage(const cli::SettleOptions& o, const cli::CacheDirOptions& dirs = {}) {
  return test::usage_error([&] { cli::check_settle_options(o, dirs); });
}

}  // namespace

TEST_CASE("create settle: the flags as parsed") {
  cli::SettleOptions none = settle_flags({});
  CHECK_FALSE(none.runs);
  CHECK_FALSE(none.timeout_s);
  CHECK_FALSE(none.untuned);
  CHECK(settle_flags({"--settle"}).runs == settle::kDefaultRuns);
  CHECK(settle_flags({"--settle=5"}).runs == 5U);
  cli::SettleOptions all = settle_flags({"--settle", "2", "--settle-timeout", "30", "--no-tuned-settings"});
  CHECK(all.runs == 2U);
  CHECK(all.timeout_s == 30U);
  CHECK(all.untuned);
}

TEST_CASE("create settle: each flag without its partner is a usage error naming it") {
  cli::SettleOptions o;
  CHECK(settle_usage(o) == "(no UsageError)");
  o.command = {"python", "warmup.py"};
  CHECK(settle_usage(o) == "a command after -- is run only with --settle");
  o.command.clear();
  o.timeout_s = 10;
  CHECK(settle_usage(o) == "--settle-timeout needs --settle");
  o.timeout_s.reset();
  o.untuned = true;
  CHECK(settle_usage(o) == "--no-tuned-settings needs --settle (a plain create runs nothing)");

  cli::SettleOptions s;
  s.runs = 3;
  CHECK(settle_usage(s) == "--settle needs the warm-up command after --, e.g. `-- python warmup.py`");
  s.command = {"python", "warmup.py"};
  CHECK(settle_usage(s) == "(no UsageError)");
  s.runs = 0;
  CHECK(settle_usage(s) == "--settle=N takes 1-100 runs, got 0");
  s.runs = 101;
  CHECK(settle_usage(s) == "--settle=N takes 1-100 runs, got 101");
  s.runs = 100;
  s.timeout_s = 0;
  CHECK(settle_usage(s) == "--settle-timeout must be at least 1 second");
  s.timeout_s = 1;
  cli::CacheDirOptions extra;
  extra.extras.emplace_back("ext", "/x");
  CHECK(settle_usage(s, extra) ==
        "--settle packs the inductor and triton folders only (the command cannot be pointed at another copy of an --add folder)");
}

TEST_CASE("create settle: settle_if_asked runs nothing without --settle, and settles a warm-up with it") {
  test::ScratchDir t;
  int probes = 0;
  auto probe = [&probes] {
    ++probes;
    manifest::Fingerprint fp;
    fp.set(manifest::field::gpu_arch, "sm_90", "nvml");
    return fp;
  };
  std::vector<manifest::CacheDir> dirs = test::dirs_of(t / "ind", t / "tri");
  auto packable = [&dirs] {
    std::vector<manifest::CacheDir> out;
    for (const manifest::CacheDir& d : dirs) {
      if (fs::is_directory(d.dir)) out.push_back(d);
    }
    return out;
  };
  cli::CommonOptions quiet;
  quiet.quiet = true;
  CHECK_FALSE(cli::settle_if_asked({}, dirs, packable, t / "out.ccpack", probe, quiet, "python3"));
  CHECK(probes == 0);

  cli::SettleOptions o;
  o.runs = 2;
  o.untuned = true;
  o.command = {"/bin/sh", "-c", "mkdir -p \"$TRITON_CACHE_DIR/K\" && echo {} > \"$TRITON_CACHE_DIR/K/triton_poi_a_0.json\""};
  test::Streams said;
  std::optional<settle::SettleOutcome> out;
  said = test::captured([&] { out = cli::settle_if_asked(o, dirs, packable, t / "out.ccpack", probe, quiet, "python3"); });
  CHECK(said.err == "");
  REQUIRE(out);
  CHECK(probes == 1);
  CHECK(out->stopped == settle::Stopped::fixed_point);
  CHECK(out->runs.size() == 2);
  REQUIRE(out->tuning);
  CHECK(out->tuning->skipped == std::vector<std::string>{"all: --no-tuned-settings"});
  CHECK(out->fingerprint.get(manifest::field::gpu_arch)->value == "sm_90");
  CHECK(out->scratch->path().parent_path() == t.path());
}
