// The policy table's verdicts for the cases the issue names: another GPU arch, CUDA wheels added or removed, a
// torch local tag, a driver change, an archive without a fingerprint, absent probes and --ignore.
#include <catch2/catch.hpp>

#include "manifest/policy.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"

using namespace ccpack;
using namespace ccpack::manifest;

namespace {

const std::vector<ComponentRef> kThreeComps = {
    {"inductor", ComponentKind::inductor}, {"triton", ComponentKind::triton}, {"ext", ComponentKind::extra}};

Fingerprint h200() {
  Fingerprint fp;
  fp.set(field::cpu_arch, "x86_64", "uname");
  fp.set(field::gpu_vendor, "nvidia", "nvml");
  fp.set(field::gpu_arch, "sm_90", "nvml");
  fp.set(field::gpu_name, "NVIDIA H200", "nvml");
  fp.set(field::gpu_driver, "580.159.04", "nvml");
  fp.set(field::torch_version, "2.7.1+cu126", "python:dist-info (torch)");
  fp.set(field::triton_version, "3.3.1", "python:dist-info (triton)");
  fp.set(field::wheels_cuda, "nvidia-cublas-cu12==12.6.4.1, nvidia-cudnn-cu13==9.13.0.50", "python:dist-info");
  fp.set(field::env_inductor, "", "env");
  fp.set(field::env_triton, "", "env");
  fp.triton_targets.push_back({"cuda", "90", 32, "3.3.1", 10});
  return fp;
}

std::vector<Verdict> verdicts(Verdict i, Verdict t, Verdict e) { return {i, t, e}; }

}  // namespace

TEST_CASE("the same fingerprint matches everywhere") {
  Comparison c = compare(h200(), h200(), kThreeComps);
  CHECK(c.worst() == Verdict::match);
  CHECK_FALSE(c.blocks());
  CHECK(c.summary() == "everything matches");
}

TEST_CASE("an archive built for sm_90 is stale where the GPU is sm_80") {
  Fingerprint local = h200();
  local.set(field::gpu_arch, "sm_80", "nvml");
  local.set(field::gpu_name, "NVIDIA A100-SXM4-80GB", "nvml");
  Comparison c = compare(h200(), local, kThreeComps);
  CHECK(test::row_of(c, field::gpu_arch).verdicts == verdicts(Verdict::stale, Verdict::stale, Verdict::stale));
  CHECK(test::row_of(c, field::gpu_name).verdicts == verdicts(Verdict::stale, Verdict::match, Verdict::stale));
  CHECK(test::row_of(c, kTargetsField).verdicts == verdicts(Verdict::stale, Verdict::stale, Verdict::stale));
  CHECK(c.blocks());
  CHECK(c.to_table(false).find("gpu.arch") != std::string::npos);
  CHECK(c.summary().starts_with(
      "inductor stale (gpu.arch, gpu.name, cache.targets: sm_80 only here (and 1 more)); triton stale (gpu.arch, cache.targets)"));
}

TEST_CASE("contamination: a CUDA wheel present at build time and not here (and the reverse) makes inductor stale, keeps triton") {
  Fingerprint without = h200();
  without.set(field::wheels_cuda, "nvidia-cublas-cu12==12.6.4.1", "python:dist-info");
  for (auto [archive, local] : {std::pair{h200(), without}, std::pair{without, h200()}}) {
    Comparison c = compare(archive, local, kThreeComps);
    CHECK(test::row_of(c, field::wheels_cuda).verdicts == verdicts(Verdict::stale, Verdict::warn, Verdict::stale));
    CHECK(c.component_verdicts == verdicts(Verdict::stale, Verdict::warn, Verdict::stale));
  }
}

TEST_CASE("a torch local tag change is stale for inductor only") {
  Fingerprint local = h200();
  local.set(field::torch_version, "2.7.1+cu128", "python:dist-info (torch)");
  Comparison c = compare(h200(), local, kThreeComps);
  CHECK(c.component_verdicts == verdicts(Verdict::stale, Verdict::match, Verdict::stale));
  CHECK(test::row_of(c, field::torch_version).why ==
        "inductor entries embed the torch version in their key: none of them can hit");
}

TEST_CASE("a newer driver warns, an older one refuses") {
  Fingerprint newer = h200();
  newer.set(field::gpu_driver, "590.10.01", "nvml");
  Comparison up = compare(h200(), newer, kThreeComps);
  CHECK(up.component_verdicts == verdicts(Verdict::warn, Verdict::warn, Verdict::warn));
  CHECK_FALSE(up.blocks());
  Fingerprint older = h200();
  older.set(field::gpu_driver, "570.86.10", "nvml");
  Comparison down = compare(h200(), older, kThreeComps);
  CHECK(down.component_verdicts == verdicts(Verdict::refuse, Verdict::refuse, Verdict::refuse));
  CHECK(test::row_of(down, field::gpu_driver).why.starts_with("older here than on the build machine"));
}

TEST_CASE("an archive without a fingerprint only warns") {
  Comparison c = compare(Fingerprint{}, h200(), kThreeComps);
  CHECK_FALSE(c.archive_recorded);
  CHECK(c.worst() == Verdict::warn);
  CHECK(test::row_of(c, field::gpu_arch).archive_note == "not recorded");
  CHECK(c.to_table(true).find("the archive records no fingerprint") != std::string::npos);
}

TEST_CASE("a value absent on one side cannot be compared: warn, never a guess") {
  Fingerprint local = h200();
  local.absent(field::gpu_arch, "nvml: not loadable");
  Comparison c = compare(h200(), local, kThreeComps);
  CHECK(test::row_of(c, field::gpu_arch).verdicts == verdicts(Verdict::warn, Verdict::warn, Verdict::warn));
  CHECK(test::row_of(c, field::gpu_arch).local_note == "absent (nvml: not loadable)");
  Fingerprint both = h200();
  both.absent(field::gpu_arch, "x");
  CHECK(test::row_of(compare(both, both, kThreeComps), field::gpu_arch).verdicts ==
        verdicts(Verdict::match, Verdict::match, Verdict::match));
}

TEST_CASE("ignored fields accept their difference") {
  Fingerprint local = h200();
  local.set(field::torch_version, "2.7.1+cu128", "python:dist-info (torch)");
  Comparison c = compare(h200(), local, kThreeComps, {std::string(field::torch_version)});
  CHECK(c.worst() == Verdict::match);
  CHECK(test::row_of(c, field::torch_version).ignored);
}

TEST_CASE("a setting that enters a cache key is stale for its component only") {
  Fingerprint local = h200();
  local.set(field::env_inductor, "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS=TRITON", "env");
  CHECK(compare(h200(), local, kThreeComps).component_verdicts == verdicts(Verdict::stale, Verdict::match, Verdict::match));
  Fingerprint tri = h200();
  tri.set(field::env_triton, "TRITON_DEFAULT_FP_FUSION=0", "env");
  CHECK(compare(h200(), tri, kThreeComps).component_verdicts == verdicts(Verdict::match, Verdict::stale, Verdict::match));
}

TEST_CASE("the archive's kernel targets against this GPU") {
  Fingerprint two = h200();
  two.triton_targets.push_back({"hip", "gfx942", 64, "3.3.1", 3});
  CHECK(test::row_of(compare(two, h200(), kThreeComps), kTargetsField).verdicts ==
        verdicts(Verdict::warn, Verdict::warn, Verdict::warn));
}

TEST_CASE("every table row has a known field and a reason") {
  for (const FieldRule& r : field_rules()) {
    CHECK_FALSE(r.why.empty());
    CHECK(find_rule(r.field) == &r);
  }
}

TEST_CASE("versions compare numerically") {
  CHECK(compare_versions("570.86.10", "580.159.04") == -1);
  CHECK(compare_versions("580.159.04", "580.159.04") == 0);
  CHECK(compare_versions("2.39", "2.36") == 1);
  CHECK_FALSE(compare_versions("N/A", "1.0").has_value());
  CHECK_FALSE(compare_versions("1..0", "1.0").has_value());
}

TEST_CASE("on-mismatch policy values") {
  CHECK(parse_on_mismatch("refuse", "--on-mismatch") == OnMismatch::refuse);
  CHECK(parse_on_mismatch("force", "--on-mismatch") == OnMismatch::force);
  CHECK(parse_on_mismatch("purge", "--on-mismatch") == OnMismatch::purge);
  CHECK_THROWS_AS(parse_on_mismatch("yes", "CCPACK_ON_MISMATCH"), UsageError);
}

namespace {

Fingerprint settings_machine(const std::string& inductor_env, const std::string& ptxas, const std::string& ptxas_source) {
  Fingerprint fp;
  fp.set(field::torch_version, "2.11.0+cu130", "python");
  fp.set(field::env_inductor, inductor_env, "env");
  fp.set(field::env_triton, "", "env");
  fp.set(field::ptxas_version, ptxas, ptxas_source);
  return fp;
}

const std::vector<ComponentRef> kSettingsComponents = {{"inductor", ComponentKind::inductor}, {"triton", ComponentKind::triton}};

}  // namespace

TEST_CASE("missing settings: a pod without the archive's settings is told each, with its value, the ptxas last") {
  Fingerprint archive = settings_machine("TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE=0;TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=0",
                                         "13.0.88", "ptxas --version (TRITON_PTXAS_PATH)");
  Fingerprint pod = settings_machine("TORCHINDUCTOR_MAX_AUTOTUNE=1", "12.8.93", "ptxas --version (triton's bundled ptxas)");
  bool only = false;
  std::vector<std::string> missing = missing_settings(compare(archive, pod, kSettingsComponents), &only);
  CHECK(missing == std::vector<std::string>{"TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE=0",
                                            "TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=0", "unset TORCHINDUCTOR_MAX_AUTOTUNE",
                                            "TRITON_PTXAS_PATH=<a ptxas 13.0.88>"});
  CHECK(only);
}

TEST_CASE("missing settings: nothing missing when they match, and `only` is false when another field blocks too") {
  Fingerprint archive =
      settings_machine("TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=0", "13.0.88", "ptxas --version (TRITON_PTXAS_PATH)");
  bool only = true;
  CHECK(missing_settings(compare(archive, archive, kSettingsComponents), &only).empty());
  CHECK_FALSE(only);
  Fingerprint pod = settings_machine("", "13.0.88", "ptxas --version (TRITON_PTXAS_PATH)");
  pod.set(field::torch_version, "2.12.0", "python");
  CHECK(missing_settings(compare(archive, pod, kSettingsComponents), &only) ==
        std::vector<std::string>{"TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=0"});
  CHECK_FALSE(only);
}
