// The manifest's optional "settle" field: what `create --settle` found when it ran the warm-up command again on
// fresh relocated restores of its own archive (settle/settle.hpp), so that `inspect`, the card and a pipeline can
// tell a settled archive (the last run compiled nothing) from one that was not settled or not tried.
//
//   "settle": {"runs": K, "settled": true|false, "stopped": "fixed-point"|"run-limit",
//              "last_run_compiled": {"triton_kernels": n, "fx_graphs": n, "autotune": n, "other": n}}
//
//   "tuning": {"applied": ["K=V", ...], "kept": ["K=V", ...], "skipped": ["K: why", ...]}   (inside "settle")
//
// runs: settle runs after the warm-up (1 or more); settled: the last run compiled nothing in the kernel groups
// (triton_kernels, fx_graphs and autotune all 0), which is exactly stopped == "fixed-point"; "run-limit": the
// runs ran out first. The field is written only by `create --settle`, after "components"; a manifest without
// it (every archive made before it, and a plain create) reads as "not settled (not tried)". Readers that predate
// it ignore it: the top-level reader keeps unknown keys out of every check.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ccpack::manifest {

// What one run compiled, by the groups of `ccpack status` (unpack/status.hpp).
struct CompiledCounts {
  std::uint64_t triton_kernels = 0;
  std::uint64_t fx_graphs = 0;
  std::uint64_t autotune = 0;
  std::uint64_t other = 0;

  // Nothing in the kernel groups: the definition of a settled run ("other" files do not count).
  [[nodiscard]] bool settled() const { return triton_kernels == 0 && fx_graphs == 0 && autotune == 0; }
  [[nodiscard]] nlohmann::ordered_json to_tree() const;
  bool operator==(const CompiledCounts&) const = default;
};

inline constexpr std::string_view kStoppedFixedPoint = "fixed-point";
inline constexpr std::string_view kStoppedRunLimit = "run-limit";

// What create --settle set for the warm-up and its runs (manifest/tuning_advice.hpp's kTunedSettings): the settings
// ccpack applied (TRITON_PTXAS_PATH with the build machine's file), those the user had set already and ccpack kept,
// and those not applied with why (a torch known to be hurt, no ptxas found, --no-tuned-settings). Absent from the
// archives of a ccpack that did not set them.
struct TuningRecord {
  std::vector<std::string> applied;
  std::vector<std::string> kept;
  std::vector<std::string> skipped;
  [[nodiscard]] nlohmann::ordered_json to_tree() const;
  [[nodiscard]] static TuningRecord from_tree(const nlohmann::json& tree);
  bool operator==(const TuningRecord&) const = default;
};

struct SettleRecord {
  std::uint64_t runs = 0;
  bool settled = false;
  std::string stopped;  // kStoppedFixedPoint or kStoppedRunLimit
  CompiledCounts last_run_compiled;
  std::optional<TuningRecord> tuning;

  [[nodiscard]] nlohmann::ordered_json to_tree() const;
  // Reads and checks the field of an untrusted manifest; throws IntegrityError naming "settle.<field>".
  [[nodiscard]] static SettleRecord from_tree(const nlohmann::json& tree);
  bool operator==(const SettleRecord&) const = default;
};

}  // namespace ccpack::manifest
