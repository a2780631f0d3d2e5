// probe/pod_settings: what a pod is handed from an archive (never a path or plugin setting), and the tuned settings
// create --settle sets in its own environment.
#include <catch2/catch.hpp>
#include <cstdlib>

#include "manifest/tuning_advice.hpp"
#include "probe/pod_settings.hpp"
#include "unit/support.hpp"

using namespace ccpack;
using namespace ccpack::manifest;
using ccpack::test::ScopedEnv;

namespace {

Fingerprint recorded(const std::string& inductor_env, const std::string& ptxas, const std::string& ptxas_source) {
  Fingerprint fp;
  fp.set(field::torch_version, "2.11.0+cu130", "python");
  fp.set(field::env_inductor, inductor_env, "env");
  fp.set(field::env_triton, "", "env");
  fp.set(field::ptxas_version, ptxas, ptxas_source);
  return fp;
}

}  // namespace

TEST_CASE("pod settings: a path or plugin setting of an archive is never exported, only noted") {
  Manifest m;
  m.components = {{"triton", ComponentKind::triton, "/build/tri", 1, 1}};
  m.fingerprint = recorded("TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=0", "13.0.88", "ptxas --version (triton's bundled ptxas)");
  m.fingerprint.set(field::env_triton, "LLVM_PASS_PLUGIN_PATH=/tmp/evil.so;TRITON_DEFAULT_FP_FUSION=0", "env");
  probe::PodEnvironment env = probe::pod_environment(m, {{"triton", ComponentKind::triton, "/pod/tri", "flag"}}, "python3");
  std::vector<std::string> names;
  for (const probe::PodVariable& v : env.variables) names.push_back(v.name + "=" + v.value);
  CHECK(names == std::vector<std::string>{"TRITON_CACHE_DIR=/pod/tri", "TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=0",
                                          "TRITON_DEFAULT_FP_FUSION=0"});
  REQUIRE(env.notes.size() == 1);
  CHECK(env.notes[0].find("not exported: LLVM_PASS_PLUGIN_PATH") == 0);
}

TEST_CASE("pod settings: the folders of the archive's components only, and one compile thread for a tuned archive") {
  ScopedEnv threads("TORCHINDUCTOR_COMPILE_THREADS", std::nullopt);
  Manifest m;
  m.components = {{"inductor", ComponentKind::inductor, "/build/ind", 1, 1}};
  std::vector<CacheDir> dirs{{"inductor", ComponentKind::inductor, "/pod/ind", "flag"},
                             {"triton", ComponentKind::triton, "/pod/tri", "flag"}};
  auto names = [](const probe::PodEnvironment& env) {
    std::vector<std::string> out;
    for (const probe::PodVariable& v : env.variables) out.push_back(v.name + "=" + v.value + " (" + v.why + ")");
    return out;
  };
  CHECK(names(probe::pod_environment(m, dirs, "python3")) ==
        std::vector<std::string>{"TORCHINDUCTOR_CACHE_DIR=/pod/ind (folder)"});
  m.settle = SettleRecord{};
  m.settle->tuning = TuningRecord{};
  m.settle->tuning->applied = {"TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=0"};
  CHECK(names(probe::pod_environment(m, dirs, "python3")) ==
        std::vector<std::string>{"TORCHINDUCTOR_CACHE_DIR=/pod/ind (folder)", "TORCHINDUCTOR_COMPILE_THREADS=1 (pod)"});
  ScopedEnv own("TORCHINDUCTOR_COMPILE_THREADS", std::string("4"));
  CHECK(names(probe::pod_environment(m, dirs, "python3")) ==
        std::vector<std::string>{"TORCHINDUCTOR_CACHE_DIR=/pod/ind (folder)"});
}

TEST_CASE("pod settings: --no-tuned-settings sets nothing, and a setting the user made is kept, not overwritten") {
  TuningRecord off = probe::apply_tuned_settings("python3", true);
  CHECK(off.applied.empty());
  CHECK(off.kept.empty());
  CHECK(off.skipped == std::vector<std::string>{"all: --no-tuned-settings"});
  ScopedEnv bundle("TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE", std::string("1"));
  ScopedEnv rblock("TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK", std::string("1"));
  ScopedEnv ptxas("TRITON_PTXAS_PATH", std::string("/opt/my/ptxas"));
  TuningRecord kept = probe::apply_tuned_settings("python3", false);
  CHECK(kept.applied.empty());
  CHECK(kept.kept == std::vector<std::string>{"TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE=1",
                                              "TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=1", "TRITON_PTXAS_PATH=/opt/my/ptxas"});
  CHECK(std::string(std::getenv("TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK")) == "1");
}
