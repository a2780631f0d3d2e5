// What a settle reports, in words and as JSON: one line per run as it ends, one line for why settling stopped,
// and create's --json "settle" object. Each run's line (on standard error, also with --json; not with -q):
//   warm-up: exit 0 in 12.3 s
//   settle run 1: exit 0 in 4.1 s; compiled 3 Triton kernels, 1 FX graph, 0 autotune results, 2 other files
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "settle/settle.hpp"

namespace ccpack::settle {

// A run's line, without the "ccpack: " prefix.
[[nodiscard]] std::string run_line(const RunReport& r);
// Why settling stopped (fixed point, or the run limit `max_runs` reached).
[[nodiscard]] std::string stop_line(const SettleOutcome& o, unsigned max_runs);
// The tuned settings line create --settle says first: "tuned settings for the warm-up and its runs: K=V, ...; kept
// yours: ...; not applied: ..." (probe/pod_settings.hpp's apply_tuned_settings made the record).
[[nodiscard]] std::string tuning_line(const manifest::TuningRecord& record);
// create's --json "settle": null without an outcome.
[[nodiscard]] nlohmann::ordered_json outcome_json(const SettleOutcome* outcome);

}  // namespace ccpack::settle
