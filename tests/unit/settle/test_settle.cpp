// settle/settle.cpp with /bin/sh scripts as the command: a warm-up whose kernel a restored run finds settles after
// one run, a command that compiles a new kernel every run stops at the run limit, and a command that fails (in the
// warm-up or a settle run, by exit code or signal) throws SettleFailure with its message and exit code, leaving no
// scratch folder. pack_settled records the user's folders as the build folders and the settle record.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "manifest/cache_dir.hpp"
#include "settle/settle.hpp"
#include "unit/support.hpp"
#include "unpack/archive.hpp"

using namespace ccpack;
namespace fs = std::filesystem;

namespace {

// A kernel folder written by the warm-up only: a restored run finds it and compiles nothing.
const std::string kOnce =
    "k=\"$TRITON_CACHE_DIR/KONCE\"; [ -e \"$k/triton_poi_a_0.json\" ] || { mkdir -p \"$k\" && echo {} > "
    "\"$k/triton_poi_a_0.json\"; }";
// A new kernel folder every run (named by the shell's process id).
const std::string kEveryRun = "mkdir -p \"$TRITON_CACHE_DIR/K$$\" && echo {} > \"$TRITON_CACHE_DIR/K$$/triton_poi_a_0.json\"";

struct Settling {
  test::ScratchDir t;
  settle::SettleRequest rq;
  std::vector<std::string> reported;  // "index exit" of each on_run

  explicit Settling(const std::string& script) {
    fs::create_directories(t / "out");
    rq.command = {"/bin/sh", "-c", script};
    rq.dirs = test::dirs_of(t / "ind", t / "tri");
    rq.packable = [this] {
      std::vector<manifest::CacheDir> out;
      for (const manifest::CacheDir& d : rq.dirs) {
        if (fs::is_directory(d.dir)) out.push_back(d);
      }
      return out;
    };
    rq.scratch_parent = t / "out";
    rq.fingerprint.set(manifest::field::gpu_arch, "sm_90", "nvml");
    rq.jobs = 1;
    rq.on_run = [this](const settle::RunReport& r) {
      reported.push_back(std::to_string(r.index) + " " + (r.exit_code ? std::to_string(*r.exit_code) : "-") +
                         (r.compiled ? " kernels " + std::to_string(r.compiled->triton_kernels) : ""));
    };
  }
};

}  // namespace

TEST_CASE("settle: a restored run that compiles nothing is the fixed point, and pack_settled records it") {
  Settling s(kOnce);
  fs::create_directories(s.t / "ind");
  {
    settle::SettleOutcome out = settle::settle(s.rq);
    CHECK(s.reported == std::vector<std::string>{"0 0", "1 0 kernels 0"});
    CHECK(out.stopped == settle::Stopped::fixed_point);
    REQUIRE(out.runs.size() == 2);
    CHECK(out.runs[1].compiled == manifest::CompiledCounts{});
    manifest::SettleRecord r = out.record();
    CHECK(r.runs == 1);
    CHECK(r.settled);
    CHECK(r.stopped == "fixed-point");
    CHECK(r.last_run_compiled == manifest::CompiledCounts{});
    REQUIRE(out.settled.size() == 2);
    CHECK(out.settled[1].dir.parent_path().filename() == "run-1");
    CHECK(fs::exists(out.settled[1].dir / "KONCE/triton_poi_a_0.json"));
    CHECK(out.original[0].dir == s.t / "ind");

    pack::PackOptions po;
    po.jobs = 1;
    (void)settle::pack_settled(out, s.t / "settled.ccpack", po);
  }
  unpack::Archive a = unpack::Archive::open(s.t / "settled.ccpack");
  REQUIRE(a.manifest.settle);
  CHECK(a.manifest.settle->runs == 1);
  CHECK(a.manifest.settle->stopped == "fixed-point");
  REQUIRE(a.manifest.components.size() == 2);
  CHECK(a.manifest.components[0].source == (s.t / "ind").string());
  CHECK(a.manifest.components[1].source == (s.t / "tri").string());
  CHECK(a.manifest.components[1].files == 1);
  CHECK(fs::is_empty(s.t / "out"));                          // the scratch folder went with the outcome
  CHECK(fs::exists(s.t / "tri/KONCE/triton_poi_a_0.json"));  // the user's folders as the warm-up left them
}

TEST_CASE("settle: a command that compiles every run stops at the run limit, unsettled") {
  Settling s(kEveryRun);
  s.rq.max_runs = 2;
  settle::SettleOutcome out = settle::settle(s.rq);
  CHECK(s.reported == std::vector<std::string>{"0 0", "1 0 kernels 1", "2 0 kernels 1"});
  CHECK(out.stopped == settle::Stopped::run_limit);
  manifest::SettleRecord r = out.record();
  CHECK(r.runs == 2);
  CHECK_FALSE(r.settled);
  CHECK(r.stopped == "run-limit");
  CHECK(r.last_run_compiled == manifest::CompiledCounts{1, 0, 0, 0});
  REQUIRE(out.settled.size() == 1);  // the command never made the Inductor folder
  CHECK(out.settled[0].name == "triton");
  CHECK_FALSE(fs::exists(out.scratch->path() / "run-1"));  // run 1's folders went once packed
}

TEST_CASE("settle: a failing command throws SettleFailure naming the run, and leaves no scratch folder") {
  SECTION("the warm-up exits 3") {
    Settling s("exit 3");
    try {
      (void)settle::settle(s.rq);
      FAIL("no SettleFailure");
    } catch (const settle::SettleFailure& e) {
      CHECK(std::string(e.what()) == "the warm-up of '/bin/sh' exited 3; nothing written");
      CHECK(e.code() == ExitCode::command_failed);
      CHECK(e.stopped() == settle::Stopped::command_failed);
    }
    CHECK(s.reported == std::vector<std::string>{"0 3"});
    CHECK(fs::is_empty(s.t / "out"));
  }
  SECTION("settle run 1 exits 5 (the command fails outside the user's folders)") {
    Settling s("");
    s.rq.command = {"/bin/sh", "-c", kEveryRun + "; [ \"$TRITON_CACHE_DIR\" = \"" + (s.t / "tri").string() + "\" ] || exit 5"};
    try {
      (void)settle::settle(s.rq);
      FAIL("no SettleFailure");
    } catch (const settle::SettleFailure& e) {
      CHECK(std::string(e.what()) == "settle run 1 of '/bin/sh' exited 5; nothing written");
      CHECK(e.stopped() == settle::Stopped::command_failed);
    }
    CHECK(s.reported == std::vector<std::string>{"0 0", "1 5"});
    CHECK(fs::is_empty(s.t / "out"));
    CHECK(fs::is_directory(s.t / "tri"));
  }
  SECTION("the warm-up is killed by a signal") {
    Settling s("kill -KILL $$");
    try {
      (void)settle::settle(s.rq);
      FAIL("no SettleFailure");
    } catch (const settle::SettleFailure& e) {
      CHECK(std::string(e.what()) == "the warm-up of '/bin/sh' was killed by signal 9; nothing written");
      CHECK(e.code() == ExitCode::command_failed);
    }
    CHECK(s.reported == std::vector<std::string>{"0 -"});
    CHECK(fs::is_empty(s.t / "out"));
  }
}

TEST_CASE("settle: the stop reasons' names") {
  CHECK(settle::to_string(settle::Stopped::fixed_point) == "fixed-point");
  CHECK(settle::to_string(settle::Stopped::run_limit) == "run-limit");
  CHECK(settle::to_string(settle::Stopped::command_failed) == "command-failed");
  CHECK(settle::to_string(settle::Stopped::timed_out) == "time-limit");
  CHECK(settle::to_string(settle::Stopped::interrupted) == "interrupted");
}
