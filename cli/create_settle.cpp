// create's settle flags and the settle call (create_settle.hpp).
#include "cli/create_settle.hpp"

#include <cstdio>

#include "probe/pod_settings.hpp"
#include "settle/report.hpp"
#include "util/error.hpp"

namespace ccpack::cli {

void add_settle_options(CLI::App* create, SettleOptions& options) {
  create
      ->add_option("--settle", options.runs,
                   "Run the command after -- as the warm-up, then again on fresh relocated restores of its cache until a "
                   "run compiles nothing (a fixed point) or N settle runs are done, and pack that cache (see docs/SETTLE.md)")
      ->expected(0, 1)
      ->default_str(std::to_string(settle::kDefaultRuns))
      ->type_name("N");
  create
      ->add_option("--settle-timeout", options.timeout_s,
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
  if (*options.runs < 1 || *options.runs > 100)
    throw UsageError("--settle=N takes 1-100 runs, got " + std::to_string(*options.runs));
  if (options.timeout_s && *options.timeout_s == 0) throw UsageError("--settle-timeout must be at least 1 second");
  if (!dirs.extras.empty()) {
    throw UsageError(
        "--settle packs the inductor and triton folders only (the command cannot be pointed at another copy of an --add folder)");
  }
}

std::optional<settle::SettleOutcome> settle_if_asked(const SettleOptions& options, std::vector<manifest::CacheDir> dirs,
                                                     std::function<std::vector<manifest::CacheDir>()> packable,
                                                     const std::filesystem::path& output,
                                                     const std::function<manifest::Fingerprint()>& probe,
                                                     const CommonOptions& common, const std::string& python) {
  if (!options.runs) return std::nullopt;
  settle::SettleRequest request;
  // First: the warm-up, every run and the fingerprint probed below all see the settings.
  request.tuning = probe::apply_tuned_settings(python, options.untuned);
  if (!common.quiet) std::fprintf(stderr, "ccpack: %s\n", settle::tuning_line(*request.tuning).c_str());
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
    if (!quiet) std::fprintf(stderr, "ccpack: %s\n", settle::run_line(r).c_str());
  };
  settle::SettleOutcome outcome = settle::settle(request);
  if (!quiet) std::fprintf(stderr, "ccpack: %s\n", settle::stop_line(outcome, *options.runs).c_str());
  return outcome;
}

}  // namespace ccpack::cli
