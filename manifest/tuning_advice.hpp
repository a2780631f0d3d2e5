// What an archive's fingerprint says about the re-tuning its pods will do: the settings that close the work a warm
// process still does on a restored cache (docs/TUNING.md), checked against what the warm-up recorded. `check` prints
// them under the field table and in --json (`tuning_advice`), and `create --settle` in its report, so a pipeline
// learns before its pods do that every fresh process will re-run coordinate descent or compile kernels anew.
//
// The settings, each with why (measured on an H200 with torch 2.11 and Triton 3.6, docs/TUNING.md):
//   TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE=0  bundled autotuners ignore or drop .best_config's coordinate-
//                                                      descent mark: every fresh process tunes again
//   TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=0               a second launcher per register-heavy reduction, tuned in
//                                                      every process and saved without the mark
//   TRITON_PTXAS_PATH                                  compile workers and the main process key kernels with two
//                                                      ptxas versions: a worker's kernel misses in a pod's process
// The first two enter Inductor's key, so they are read from `env.inductor`; the third from `ptxas.version`'s source.
#pragma once
#include <string>
#include <vector>

#include "manifest/fingerprint.hpp"

namespace ccpack::manifest {

struct TuningAdvice {
  std::string setting;  // "TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=0", "TRITON_PTXAS_PATH"
  std::string why;      // one clause, for a line "set SETTING for the warm-up and the pods: WHY"
  bool operator==(const TuningAdvice&) const = default;
};

// The source text ptxas.version carries when TRITON_PTXAS_PATH named the ptxas (the probe writes it, this reads it).
inline constexpr std::string_view kPtxasFromEnv = "TRITON_PTXAS_PATH";

// The settings of the list above that `fp` was recorded without, in that order; none for a fingerprint that recorded
// no Python side (no torch: nothing to advise) or that has them all.
[[nodiscard]] std::vector<TuningAdvice> tuning_advice(const Fingerprint& fp);

}  // namespace ccpack::manifest
