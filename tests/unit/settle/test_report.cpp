// settle/report.cpp: each run's line (exit, signal, time limit, interruption, what it compiled), the stop line, and
// create's --json "settle" object.
#include <catch2/catch.hpp>
#include <csignal>

#include "settle/report.hpp"

using namespace ccpack;

TEST_CASE("settle report: a run's line says how it ended, how long it took and what it compiled", "[settle_report]") {
  settle::RunReport warm;
  warm.exit_code = 0;
  warm.seconds = 12.34;
  CHECK(settle::run_line(warm) == "warm-up: exit 0 in 12.3 s");
  settle::RunReport run;
  run.index = 1;
  run.exit_code = 0;
  run.seconds = 4.06;
  run.compiled = manifest::CompiledCounts{3, 1, 0, 2};
  CHECK(settle::run_line(run) ==
        "settle run 1: exit 0 in 4.1 s; compiled 3 Triton kernels, 1 FX graph, 0 autotune results, 2 other files");
  settle::RunReport killed;
  killed.index = 2;
  killed.timed_out = true;
  CHECK(settle::run_line(killed) == "settle run 2: killed at the time limit in 0.0 s");
  settle::RunReport stopped;
  stopped.index = 2;
  stopped.interrupted = true;
  stopped.signal = SIGTERM;
  CHECK(settle::run_line(stopped) == "settle run 2: stopped: SIGTERM passed on to it in 0.0 s");
  settle::RunReport signalled;
  signalled.index = 1;
  signalled.signal = 9;
  CHECK(settle::run_line(signalled) == "settle run 1: ended by signal 9 in 0.0 s");
}

TEST_CASE("settle report: the stop line and the --json object", "[settle_report]") {
  settle::SettleOutcome o;
  settle::RunReport warm;
  warm.exit_code = 0;
  settle::RunReport last;
  last.index = 2;
  last.exit_code = 0;
  last.compiled = manifest::CompiledCounts{};
  o.runs = {warm, last};
  o.stopped = settle::Stopped::fixed_point;
  CHECK(settle::stop_line(o, 3) ==
        "settled after 2 settle runs (fixed point: settle run 2 compiled no Triton kernel, FX graph or autotune result)");
  o.runs.back().compiled = manifest::CompiledCounts{1, 0, 0, 0};
  o.stopped = settle::Stopped::run_limit;
  CHECK(settle::stop_line(o, 2) ==
        "not settled after 2 settle runs (run limit --settle=2 reached: the last run still "
        "compiled 1 Triton kernel, 0 FX graphs, 0 autotune results, 0 other files); the archive "
        "is marked not settled");
  CHECK(settle::outcome_json(nullptr).is_null());
  nlohmann::ordered_json j = settle::outcome_json(&o);
  CHECK(j["run_reports"].size() == 2);
  CHECK(j["run_reports"][0]["warm_up"] == true);
  CHECK(j["run_reports"][1]["compiled"]["triton_kernels"] == 1);
  CHECK(j.contains("settled"));
}

TEST_CASE("settle report: the tuned settings line says what was set, kept and not applied", "[settle_report]") {
  manifest::TuningRecord r;
  CHECK(settle::tuning_line(r) == "tuned settings for the warm-up and its runs: none");
  r.applied = {"A=0", "B=1"};
  CHECK(settle::tuning_line(r) == "tuned settings for the warm-up and its runs: A=0, B=1");
  r.kept = {"C=2"};
  r.skipped = {"D: no ptxas found", "E: hurt"};
  CHECK(settle::tuning_line(r) ==
        "tuned settings for the warm-up and its runs: A=0, B=1; kept yours: C=2; not applied: D: no ptxas found, E: hurt");
  r.applied.clear();
  CHECK(settle::tuning_line(r) ==
        "tuned settings for the warm-up and its runs: none; kept yours: C=2; not applied: D: no ptxas found, E: hurt");
}
