// Set-valued fingerprint fields: split and join, the set difference, and how check's comparison shows it (table,
// summary, no shared prefix).
#include <catch2/catch.hpp>

#include "manifest/field_set.hpp"
#include "manifest/policy.hpp"
#include "unit/support.hpp"

using namespace ccpack::manifest;

namespace {

const std::string kWheels =
    "cuda-bindings==13.3.1, cuda-core==0.3.2, nvidia-cublas==13.0.0.19, nvidia-cuda-runtime==13.0.48, "
    "nvidia-cudnn-cu13==9.13.0.50, nvidia-cusparselt-cu13==0.8.0";
const std::string kWithout =
    "cuda-bindings==13.3.1, cuda-core==0.3.2, nvidia-cublas==13.0.0.19, nvidia-cuda-runtime==13.0.48, "
    "nvidia-cudnn-cu13==9.13.0.50";

Fingerprint fingerprint_with(std::string_view field, const std::string& value) {
  Fingerprint fp;
  fp.set(field::cpu_arch, "x86_64", "uname");
  fp.set(field::wheels_cuda, kWheels, "python:dist-info");
  fp.set(field::env_inductor, "", "env");
  fp.set(field, value, "test");
  return fp;
}

const std::vector<ComponentRef> kTwoComps = {{"inductor", ComponentKind::inductor}, {"triton", ComponentKind::triton}};

}  // namespace

TEST_CASE("the set-valued fields and their syntax") {
  CHECK(list_syntax(field::wheels_cuda) == ListSyntax::comma);
  CHECK(list_syntax(field::python_site_packages) == ListSyntax::comma);
  CHECK(list_syntax(field::env_inductor) == ListSyntax::settings);
  CHECK(list_syntax(field::env_triton) == ListSyntax::settings);
  CHECK_FALSE(list_syntax(field::torch_version));
  CHECK_FALSE(list_syntax(field::gpu_arch));
}

TEST_CASE("split and join are inverse, and a setting's value may hold a semicolon") {
  CHECK(split_entries(ListSyntax::comma, "").empty());
  CHECK(split_entries(ListSyntax::comma, "a==1, b==2") == std::vector<std::string>{"a==1", "b==2"});
  CHECK(join_entries(ListSyntax::comma, {"a==1", "b==2"}) == "a==1, b==2");
  std::string s = "TORCHINDUCTOR_A=x;y;TORCHINDUCTOR_B=1;DISABLE_MMA_V3=1";
  CHECK(split_entries(ListSyntax::settings, s) ==
        std::vector<std::string>{"TORCHINDUCTOR_A=x;y", "TORCHINDUCTOR_B=1", "DISABLE_MMA_V3=1"});
  CHECK(join_entries(ListSyntax::settings, split_entries(ListSyntax::settings, s)) == s);
  CHECK(entry_parts(ListSyntax::comma, "nvidia-cudnn-cu13==9.13.0.50").name == "nvidia-cudnn-cu13");
  CHECK(entry_parts(ListSyntax::comma, "/venv/site-packages").name == "/venv/site-packages");
  CHECK(entry_parts(ListSyntax::settings, "K=a=b").rest == "a=b");
}

TEST_CASE("a set difference: only in the archive, only here, and one name changed") {
  SetDiff d = diff_entries(ListSyntax::comma, "a==1, b==2, c==3", "b==2, c==4, d==5");
  CHECK(d.removed == std::vector<std::string>{"a==1"});
  CHECK(d.added == std::vector<std::string>{"d==5"});
  CHECK(d.changed == std::vector<ChangedEntry>{{"c", "3", "4"}});
  CHECK(d.phrases() == std::vector<std::string>{"a==1 only in the archive", "c: 3 -> 4", "d==5 only here"});
  CHECK(d.archive_side() == std::vector<std::string>{"a==1", "c==3"});
  CHECK(d.local_side() == std::vector<std::string>{"c==4", "d==5"});
  CHECK(diff_entries(ListSyntax::comma, "a==1, b==2", "a==1, b==2").empty());
  // Order does not make a difference: the values are sets.
  CHECK(diff_entries(ListSyntax::settings, "A=1;B=2", "B=2;A=1").empty());
}

TEST_CASE("one wheel removed here: the row, the summary and the table name exactly that wheel, no shared prefix") {
  Fingerprint archive = fingerprint_with(field::wheels_cuda, kWheels);
  Fingerprint local = fingerprint_with(field::wheels_cuda, kWithout);
  Comparison c = compare(archive, local, kTwoComps);
  const ComparisonRow& r = test::row_of(c, field::wheels_cuda);
  REQUIRE(r.diff);
  CHECK(r.diff->removed == std::vector<std::string>{"nvidia-cusparselt-cu13==0.8.0"});
  CHECK(r.diff->added.empty());
  CHECK(r.diff->changed.empty());
  CHECK(c.summary() ==
        "inductor stale (wheels.cuda: nvidia-cusparselt-cu13==0.8.0 only in the archive); triton warn (wheels.cuda)");
  std::string table = c.to_table(false);
  CHECK(table.find("wheels.cuda  nvidia-cusparselt-cu13==0.8.0  (not here)  stale     warn") != std::string::npos);
  CHECK(table.find("cuda-bindings") == std::string::npos);
  CHECK(table.find("...") == std::string::npos);
}

TEST_CASE("a wheel's version changed: the name with both versions") {
  std::string changed = kWheels;
  changed.replace(changed.find("9.13.0.50"), 9, "9.14.0.64");
  Comparison c = compare(fingerprint_with(field::wheels_cuda, kWheels), fingerprint_with(field::wheels_cuda, changed), kTwoComps);
  CHECK(c.summary() == "inductor stale (wheels.cuda: nvidia-cudnn-cu13: 9.13.0.50 -> 9.14.0.64); triton warn (wheels.cuda)");
  std::string table = c.to_table(false);
  CHECK(table.find("wheels.cuda  nvidia-cudnn-cu13==9.13.0.50  nvidia-cudnn-cu13==9.14.0.64  stale") != std::string::npos);
}

TEST_CASE("env.inductor with one setting changed shows that variable with both values, whole") {
  std::string a = "TORCHINDUCTOR_COORDINATE_DESCENT_TUNING=1;TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS=ATEN,TRITON,CPP";
  std::string l = "TORCHINDUCTOR_COORDINATE_DESCENT_TUNING=1;TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS=TRITON";
  Comparison c = compare(fingerprint_with(field::env_inductor, a), fingerprint_with(field::env_inductor, l), kTwoComps);
  CHECK(c.summary() == "inductor stale (env.inductor: TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS: ATEN,TRITON,CPP -> TRITON)");
  std::string table = c.to_table(false);
  CHECK(table.find("TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS=ATEN,TRITON,CPP  TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS=TRITON") !=
        std::string::npos);
  CHECK(table.find("COORDINATE") == std::string::npos);
  // A setting set only on one side: the other shows that it lacks it.
  Comparison added = compare(fingerprint_with(field::env_inductor, ""),
                             fingerprint_with(field::env_inductor, "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS=TRITON"), kTwoComps);
  CHECK(added.summary() == "inductor stale (env.inductor: TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS=TRITON only here)");
  CHECK(added.to_table(false).find("env.inductor  (not in the archive)  TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS=TRITON") !=
        std::string::npos);
}

TEST_CASE("many differences: the table shows a few entries a side and a count, a long single value is whole when alone") {
  Fingerprint archive = fingerprint_with(field::wheels_cuda, "a==1, b==1, c==1, d==1, e==1");
  Fingerprint local = fingerprint_with(field::wheels_cuda, "");
  local.set(field::torch_version, "2.7.1+cu126", "x");
  archive.set(field::torch_version, "2.7.1+cu128", "x");
  std::string table = compare(archive, local, kTwoComps).to_table(false);
  CHECK(table.find("a==1, b==1, c==1 (+2 more; --json lists all)") != std::string::npos);
  std::string path(80, 'p');
  Fingerprint pa = fingerprint_with(field::paths_inductor, "/a/" + path);
  Fingerprint pl = fingerprint_with(field::paths_inductor, "/b/" + path);
  CHECK(compare(pa, pl, kTwoComps).to_table(false).find("/a/" + path + "  /b/" + path) != std::string::npos);
}

TEST_CASE("cache.targets as a set: the archive's target with its kernels only in the archive") {
  Fingerprint archive = fingerprint_with(field::gpu_arch, "sm_90");
  archive.triton_targets.push_back({"cuda", "90", 32, "3.6.0", 437});
  Fingerprint local = fingerprint_with(field::gpu_arch, "sm_80");
  Comparison c = compare(archive, local, kTwoComps);
  const ComparisonRow& r = test::row_of(c, kTargetsField);
  REQUIRE(r.diff);
  CHECK(r.diff->removed == std::vector<std::string>{"sm_90 (437 kernels, triton 3.6.0)"});
  CHECK(r.diff->added == std::vector<std::string>{"sm_80"});
}
