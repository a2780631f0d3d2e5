// manifest/tuning_advice: which of the settings that stop a warm process's re-tuning an archive's warm-up lacked.
#include <catch2/catch.hpp>

#include "manifest/tuning_advice.hpp"

using namespace ccpack::manifest;

namespace {

Fingerprint with_torch(const std::string& inductor_env, const std::string& ptxas_source) {
  Fingerprint fp;
  fp.set(field::torch_version, "2.11.0+cu130", "python");
  fp.set(field::env_inductor, inductor_env, "env");
  fp.set(field::ptxas_version, "13.0.88", ptxas_source);
  return fp;
}

std::vector<std::string> settings(const std::vector<TuningAdvice>& advice) {
  std::vector<std::string> out;
  for (const TuningAdvice& a : advice) out.push_back(a.setting);
  return out;
}

}  // namespace

TEST_CASE("tuning advice: a warm-up with the defaults lacks all three settings, in the documented order") {
  Fingerprint fp = with_torch("", "ptxas --version (triton's bundled ptxas)");
  CHECK(settings(tuning_advice(fp)) == std::vector<std::string>{"TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE=0",
                                                                "TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=0", "TRITON_PTXAS_PATH"});
}

TEST_CASE("tuning advice: none when the warm-up set all three") {
  Fingerprint fp = with_torch(
      "TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE=0;TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=0;"
      "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS=TRITON",
      "ptxas --version (TRITON_PTXAS_PATH)");
  CHECK(tuning_advice(fp).empty());
}

TEST_CASE("tuning advice: a setting with another value, or only as a prefix of another, does not count") {
  Fingerprint fp = with_torch("TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE=1;TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=00",
                              "ptxas --version (TRITON_PTXAS_PATH)");
  CHECK(settings(tuning_advice(fp)) ==
        std::vector<std::string>{"TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE=0", "TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=0"});
}

TEST_CASE("tuning advice: nothing to advise without torch, and no ptxas advice when ptxas was not found") {
  Fingerprint none;
  none.absent(field::torch_version, "python: no torch distribution on sys.path");
  CHECK(tuning_advice(none).empty());
  Fingerprint no_ptxas = with_torch("TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE=0;TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=0", "");
  no_ptxas.absent(field::ptxas_version, "ptxas: no TRITON_PTXAS_PATH and no triton distribution");
  CHECK(tuning_advice(no_ptxas).empty());
}

TEST_CASE("tuned settings: the list create --settle sets is the list the advice names, and no torch is known hurt") {
  CHECK(kTunedSettings.size() == 3);
  CHECK(kTunedSettings[2].name == kPtxasVariable);
  CHECK(kTunedSettings[2].value.empty());  // a file found on each machine
  for (const TunedSetting& s : kTunedSettings) CHECK_FALSE(hurt_by(s, "2.11.0+cu130"));
  CHECK(kPodCompileThreads.name == "TORCHINDUCTOR_COMPILE_THREADS");
}
