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

std::optional<std::string> hurt_by(const TunedSetting& /*setting*/, std::string_view /*torch_version*/) { return std::nullopt; }

std::vector<TuningAdvice> tuning_advice(const Fingerprint& fp) {
  const FieldValue* torch = fp.get(field::torch_version);
  if (torch == nullptr || !torch->value) return {};
  std::vector<TuningAdvice> advice;
  for (const TunedSetting& s : kTunedSettings) {
    if (s.name == kPtxasVariable) {
      const FieldValue* ptxas = fp.get(field::ptxas_version);
      if (ptxas != nullptr && ptxas->value && ptxas->source.find(kPtxasFromEnv) == std::string::npos) {
        advice.push_back({std::string(s.name), std::string(s.why)});
      }
      continue;
    }
    std::string entry = std::string(s.name) + "=" + std::string(s.value);
    if (!has_setting(fp, entry)) advice.push_back({entry, std::string(s.why)});
  }
  return advice;
}

}  // namespace ccpack::manifest
