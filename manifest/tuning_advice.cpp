// The settings an archive's warm-up ran without (tuning_advice.hpp says which and why).
#include "manifest/tuning_advice.hpp"

#include <algorithm>

#include "manifest/field_set.hpp"

namespace ccpack::manifest {

namespace {

bool has_setting(const Fingerprint& fp, std::string_view entry) {
  const FieldValue* v = fp.get(field::env_inductor);
  if (v == nullptr || !v->value) return false;
  std::vector<std::string> entries = split_entries(ListSyntax::settings, *v->value);
  return std::find(entries.begin(), entries.end(), entry) != entries.end();
}

}  // namespace

std::vector<TuningAdvice> tuning_advice(const Fingerprint& fp) {
  const FieldValue* torch = fp.get(field::torch_version);
  if (torch == nullptr || !torch->value) return {};
  std::vector<TuningAdvice> advice;
  if (!has_setting(fp, "TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE=0")) {
    advice.push_back({"TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE=0",
                      "kernels bundled into FX-graph entries lose their tuned config, so every fresh process runs "
                      "coordinate descent again"});
  }
  if (!has_setting(fp, "TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=0")) {
    advice.push_back({"TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=0",
                      "register-heavy reductions get a second launcher that every fresh process tunes again"});
  }
  const FieldValue* ptxas = fp.get(field::ptxas_version);
  if (ptxas != nullptr && ptxas->value && ptxas->source.find(kPtxasFromEnv) == std::string::npos) {
    advice.push_back({"TRITON_PTXAS_PATH",
                      "without it compile workers and the main process key kernels with two ptxas versions, and a "
                      "kernel a worker compiled misses in every pod"});
  }
  return advice;
}

}  // namespace ccpack::manifest
