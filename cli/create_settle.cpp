// create's settle flags and report (create_settle.hpp).
#include "cli/create_settle.hpp"

#include <csignal>
#include <cstdio>

#include "cli/pod_settings.hpp"
#include "util/error.hpp"

namespace ccpack::cli {
namespace {

std::string counted(std::uint64_t n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); }

std::string compiled_text(const manifest::CompiledCounts& c) {
  return counted(c.triton_kernels, "Triton kernel", "Triton kernels") + ", " + counted(c.fx_graphs, "FX graph", "FX graphs") + ", " +
         counted(c.autotune, "autotune result", "autotune results") + ", " + counted(c.other, "other file", "other files");
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

std::string run_line(const settle::RunReport& r) {
  std::string line = r.index == 0 ? "warm-up: " : "settle run " + std::to_string(r.index) + ": ";
  if (r.timed_out) {
    line += "killed at the time limit";
  } else if (r.interrupted) {
    line += std::string("stopped: ") + (r.signal == SIGINT ? "SIGINT" : "SIGTERM") + " passed on to it";
  } else if (r.exit_code) {
    line += "exit " + std::to_string(*r.exit_code);
  } else {
    line += "ended by signal " + std::to_string(r.signal);
  }
  line += " in " + seconds_text(r.seconds);
  if (r.compiled) line += "; compiled " + compiled_text(*r.compiled);
  return line;
}

std::string stop_line(const settle::SettleOutcome& o, unsigned max_runs) {
  const settle::RunReport& last = o.runs.back();
  std::string runs = counted(last.index, "settle run", "settle runs");
  if (o.stopped == settle::Stopped::fixed_point) {
    return "settled after " + runs + " (fixed point: settle run " + std::to_string(last.index) + " compiled no Triton kernel, FX graph or autotune result)";
  }
  return "not settled after " + runs + " (run limit --settle=" + std::to_string(max_runs) + " reached: the last run still compiled " +
         compiled_text(*last.compiled) + "); the archive is marked not settled";
}

ojson run_json(const settle::RunReport& r) {
  return {{"run", r.index},
          {"warm_up", r.index == 0},
          {"seconds", r.seconds},
          {"exit_code", r.exit_code ? ojson(*r.exit_code) : ojson(nullptr)},
          {"signal", r.signal == 0 ? ojson(nullptr) : ojson(r.signal)},
          {"timed_out", r.timed_out},
          {"interrupted", r.interrupted},
          {"compiled", r.compiled ? r.compiled->to_tree() : ojson(nullptr)}};
}

}  // namespace

void add_settle_options(CLI::App* create, SettleOptions& options) {
  create->add_option("--settle", options.runs,
                     "Run the command after -- as the warm-up, then again on fresh relocated restores of its cache until a "
                     "run compiles nothing (a fixed point) or N settle runs are done, and pack that cache (see docs/SETTLE.md)")
      ->expected(0, 1)
      ->default_str(std::to_string(settle::kDefaultRuns))
      ->type_name("N");
  create->add_option("--settle-timeout", options.timeout_s,
                     "With --settle: the time limit of each run of the command, in seconds (its process group is killed; exit 6)")
      ->type_name("SECONDS");
  create->add_flag("--no-tuned-settings", options.untuned,
                   "With --settle: run the warm-up and its runs with torch's defaults, not the settings that make a cache "
                   "settle (TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE=0, TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=0, one "
                   "TRITON_PTXAS_PATH; docs/TUNING.md)");
}

void check_settle_options(const SettleOptions& options, const CacheDirOptions& dirs) {
  if (!options.runs) {
    if (!options.command.empty()) throw UsageError("a command after -- is run only with --settle");
    if (options.timeout_s) throw UsageError("--settle-timeout needs --settle");
    if (options.untuned) throw UsageError("--no-tuned-settings needs --settle (a plain create runs nothing)");
    return;
  }
  if (options.command.empty()) throw UsageError("--settle needs the warm-up command after --, e.g. `-- python warmup.py`");
  if (*options.runs < 1 || *options.runs > 100) throw UsageError("--settle=N takes 1-100 runs, got " + std::to_string(*options.runs));
  if (options.timeout_s && *options.timeout_s == 0) throw UsageError("--settle-timeout must be at least 1 second");
  if (!dirs.extras.empty()) {
    throw UsageError("--settle packs the inductor and triton folders only (the command cannot be pointed at another copy of an --add folder)");
  }
}

std::optional<settle::SettleOutcome> settle_if_asked(const SettleOptions& options, std::vector<manifest::CacheDir> dirs,
                                                     std::function<std::vector<manifest::CacheDir>()> packable,
                                                     const std::filesystem::path& output,
                                                     const std::function<manifest::Fingerprint()>& probe, const CommonOptions& common,
                                                     const std::string& python) {
  if (!options.runs) return std::nullopt;
  settle::SettleRequest request;
  // First: the warm-up, every run and the fingerprint probed below all see the settings.
  request.tuning = apply_tuned_settings(python, options.untuned);
  if (!common.quiet) std::fprintf(stderr, "ccpack: %s\n", tuning_line(*request.tuning).c_str());
  request.dirs = std::move(dirs);
  request.packable = std::move(packable);
  request.scratch_parent = std::filesystem::absolute(output).parent_path();
  request.fingerprint = probe();
  request.command = options.command;
  request.max_runs = *options.runs;
  if (options.timeout_s) request.timeout = std::chrono::seconds(*options.timeout_s);
  request.jobs = thread_budget().threads;
  bool quiet = common.quiet;
  request.on_run = [quiet](const settle::RunReport& r) {
    if (!quiet) std::fprintf(stderr, "ccpack: %s\n", run_line(r).c_str());
  };
  settle::SettleOutcome outcome = settle::settle(request);
  if (!quiet) std::fprintf(stderr, "ccpack: %s\n", stop_line(outcome, *options.runs).c_str());
  return outcome;
}

ojson settle_json(const settle::SettleOutcome* outcome) {
  if (outcome == nullptr) return nullptr;
  ojson runs = ojson::array();
  for (const settle::RunReport& r : outcome->runs) runs.push_back(run_json(r));
  manifest::SettleRecord record = outcome->record();
  return {{"settled", record.settled},
          {"stopped", record.stopped},
          {"runs", record.runs},
          {"last_run_compiled", record.last_run_compiled.to_tree()},
          {"run_reports", runs}};
}

}  // namespace ccpack::cli
