// `create --settle[=N] [--settle-timeout S] -- CMD ARGS...`: the flags, and the call of settle::settle with its
// lines printed (settle/settle.hpp runs the runs; settle/report.hpp words them). Kept apart from cmd_create.cpp so
// that create stays a parse-call-print front end.
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cli/cache_dirs.hpp"
#include "cli/cli.hpp"
#include "settle/settle.hpp"

namespace ccpack::cli {

struct SettleOptions {
  std::optional<unsigned> runs;       // set by --settle (its value, else settle::kDefaultRuns)
  std::optional<unsigned> timeout_s;  // --settle-timeout, per run
  std::vector<std::string> command;   // after -- (main.cpp hands it over: Command::trailing)
  bool untuned = false;               // --no-tuned-settings
};

void add_settle_options(CLI::App* create, SettleOptions& options);
// Usage errors: a command without --settle, --settle without a command, --add or --settle-timeout 0.
void check_settle_options(const SettleOptions& options, const CacheDirOptions& dirs);

// Without --settle: nullopt. With it: sets the tuned settings in this process's environment (unless
// --no-tuned-settings; probe/pod_settings.hpp), then runs the warm-up and the settle runs on `dirs` (scratch folder beside
// `output`; `packable`: create's rule for the folders to pack; `probe`: this machine's fingerprint, probed once
// and kept in the outcome); each run's line on stderr unless quiet, the stop line at the end.
[[nodiscard]] std::optional<settle::SettleOutcome> settle_if_asked(const SettleOptions& options,
                                                                   std::vector<manifest::CacheDir> dirs,
                                                                   std::function<std::vector<manifest::CacheDir>()> packable,
                                                                   const std::filesystem::path& output,
                                                                   const std::function<manifest::Fingerprint()>& probe,
                                                                   const CommonOptions& common, const std::string& python);

}  // namespace ccpack::cli
