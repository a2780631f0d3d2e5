// cli/pod_settings: what a pod is told it lacks (restore's refusal), and the export lines `ccpack env` prints.
#include <catch2/catch.hpp>

#include "cli/pod_settings.hpp"
#include "manifest/policy.hpp"

using namespace ccpack;
using namespace ccpack::manifest;

namespace {

Fingerprint machine(const std::string& inductor_env, const std::string& ptxas, const std::string& ptxas_source) {
  Fingerprint fp;
  fp.set(field::torch_version, "2.11.0+cu130", "python");
  fp.set(field::env_inductor, inductor_env, "env");
  fp.set(field::env_triton, "", "env");
  fp.set(field::ptxas_version, ptxas, ptxas_source);
  return fp;
}

const std::vector<ComponentRef> kBoth = {{"inductor", ComponentKind::inductor}, {"triton", ComponentKind::triton}};

}  // namespace

TEST_CASE("pod settings: a pod without the archive's settings is told each, with its value, the ptxas last") {
  Fingerprint archive = machine("TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE=0;TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=0",
                                "13.0.88", "ptxas --version (TRITON_PTXAS_PATH)");
  Fingerprint pod = machine("TORCHINDUCTOR_MAX_AUTOTUNE=1", "12.8.93", "ptxas --version (triton's bundled ptxas)");
  bool only = false;
  std::vector<std::string> missing = cli::missing_settings(compare(archive, pod, kBoth), &only);
  CHECK(missing == std::vector<std::string>{"TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE=0",
                                            "TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=0", "unset TORCHINDUCTOR_MAX_AUTOTUNE",
                                            "TRITON_PTXAS_PATH=<a ptxas 13.0.88>"});
  CHECK(only);
}

TEST_CASE("pod settings: nothing missing when they match, and `only` is false when another field blocks too") {
  Fingerprint archive = machine("TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=0", "13.0.88", "ptxas --version (TRITON_PTXAS_PATH)");
  bool only = true;
  CHECK(cli::missing_settings(compare(archive, archive, kBoth), &only).empty());
  CHECK_FALSE(only);
  Fingerprint pod = machine("", "13.0.88", "ptxas --version (TRITON_PTXAS_PATH)");
  pod.set(field::torch_version, "2.12.0", "python");
  CHECK(cli::missing_settings(compare(archive, pod, kBoth), &only) ==
        std::vector<std::string>{"TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=0"});
  CHECK_FALSE(only);
}

TEST_CASE("pod settings: export lines quote every value for sh, notes first as comments") {
  cli::PodEnvironment env{{{"TRITON_CACHE_DIR", "/c/it's here", "folder"}, {"X", "$(rm -rf /)", "cache key"}}, {"a note"}};
  CHECK(cli::export_lines(env) == "# a note\nexport TRITON_CACHE_DIR='/c/it'\\''s here'\nexport X='$(rm -rf /)'\n");
  CHECK(cli::shell_quoted("") == "''");
}

TEST_CASE("pod settings: a path or plugin setting of an archive is never exported, only noted") {
  Manifest m;
  m.components = {{"triton", ComponentKind::triton, "/build/tri", 1, 1}};
  m.fingerprint = machine("TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=0", "13.0.88", "ptxas --version (triton's bundled ptxas)");
  m.fingerprint.set(field::env_triton, "LLVM_PASS_PLUGIN_PATH=/tmp/evil.so;TRITON_DEFAULT_FP_FUSION=0", "env");
  cli::PodEnvironment env = cli::pod_environment(m, {{"triton", ComponentKind::triton, "/pod/tri", "flag"}}, "python3");
  std::vector<std::string> names;
  for (const cli::PodVariable& v : env.variables) names.push_back(v.name + "=" + v.value);
  CHECK(names == std::vector<std::string>{"TRITON_CACHE_DIR=/pod/tri", "TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=0",
                                          "TRITON_DEFAULT_FP_FUSION=0"});
  REQUIRE(env.notes.size() == 1);
  CHECK(env.notes[0].find("not exported: LLVM_PASS_PLUGIN_PATH") == 0);
}
