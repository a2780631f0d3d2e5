// What an archive's fingerprint says about the re-tuning its pods will do: the settings that close the work a warm
// process still does on a restored cache (docs/TUNING.md), checked against what the warm-up recorded. `check` prints
// them under the field table and in --json (`tuning_advice`), and `create --settle` in its report, so a pipeline
// learns before its pods do that every fresh process will re-run coordinate descent or compile kernels anew.
//
// The same list is what ccpack sets by default (kTunedSettings): `create --settle` runs the warm-up and every settle
// run with them, `ccpack env` and `ccpack run` hand them to pods. A torch that does not read a variable ignores it,
// so each applies wherever no torch version is known to be hurt by it (hurt_by).
#pragma once
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "manifest/fingerprint.hpp"

namespace ccpack::manifest {

struct TuningAdvice {
  std::string setting;  // "TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=0", "TRITON_PTXAS_PATH"
  std::string why;      // one clause, for a line "set SETTING for the warm-up and the pods: WHY"
  bool operator==(const TuningAdvice&) const = default;
};

// One tuned setting. An empty value is a file found on each machine: TRITON_PTXAS_PATH names a ptxas, torch's own
// (what its compile workers pick) else Triton's bundled one, and a pod one of the version the archive recorded.
//
// The settings, each with why (docs/TUNING.md gives the evidence):
//   TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE=0  bundled autotuners ignore or drop .best_config's coordinate-
//                                                      descent mark: every fresh process tunes again
//   TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=0               a second launcher per register-heavy reduction, tuned in
//                                                      every process and saved without the mark
//   TRITON_PTXAS_PATH                                  compile workers and the main process key kernels with two
//                                                      ptxas versions: a worker's kernel misses in a pod's process
// The first two enter Inductor's key, so they are read from `env.inductor`; the third from `ptxas.version`'s
// source.
struct TunedSetting {
  std::string_view name;
  std::string_view value;
  std::string_view why;
};
inline constexpr std::string_view kPtxasVariable = "TRITON_PTXAS_PATH";
inline constexpr std::array<TunedSetting, 3> kTunedSettings = {{
    {"TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE", "0",
     "kernels bundled into FX-graph entries lose their tuned config, so every fresh process runs coordinate descent "
     "again"},
    {"TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK", "0",
     "register-heavy reductions get a second launcher that every fresh process tunes again"},
    {kPtxasVariable, "",
     "without it compile workers and the main process key kernels with two ptxas versions, and a kernel a worker "
     "compiled misses in every pod"},
}};
// A pod's own setting, in no cache key (it changes speed, not results): compiles stay in the process that reads
// .best_config. `ccpack env` and `ccpack run` set it for an archive made with the tuned settings.
inline constexpr TunedSetting kPodCompileThreads = {"TORCHINDUCTOR_COMPILE_THREADS", "1",
                                                    "a pod compiles in the process that reads the tuned configs"};

// Why `setting` must not be set for this torch version ("" or "2.11.0+cu130"), or nullopt: no version is known to be
// hurt by any of them today, so this is the one place such a finding goes.
[[nodiscard]] std::optional<std::string> hurt_by(const TunedSetting& setting, std::string_view torch_version);

// The source text ptxas.version carries when TRITON_PTXAS_PATH named the ptxas (the probe writes it, this reads it).
inline constexpr std::string_view kPtxasFromEnv = "TRITON_PTXAS_PATH";

// The settings of the list above that `fp` was recorded without, in that order; none for a fingerprint that recorded
// no Python side (no torch: nothing to advise) or that has them all.
[[nodiscard]] std::vector<TuningAdvice> tuning_advice(const Fingerprint& fp);

}  // namespace ccpack::manifest
