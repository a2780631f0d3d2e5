// The purge rules (unpack/purge_rules.cpp), without a disk: kernel targets against the local fingerprint, CUDA
// wheel paths, RUNPATH/$ORIGIN resolution and debris names.
#include <catch2/catch.hpp>
#include <set>

#include "unpack/purge_rules.hpp"

using namespace ccpack;
using namespace ccpack::unpack;
using manifest::Fingerprint;

namespace {

Fingerprint rules_a100() {
  Fingerprint fp;
  fp.set(manifest::field::gpu_arch, "sm_80", "nvml");
  fp.set(manifest::field::gpu_warp_size, "32", "nvml");
  fp.set(manifest::field::triton_version, "3.6.0", "python:dist-info (triton)");
  fp.set(manifest::field::torch_cuda, "12.6", "torch/version.py");
  return fp;
}

manifest::TritonTarget target(std::string arch, std::string version = "3.6.0") {
  return {"cuda", std::move(arch), 32, std::move(version), 1};
}

}  // namespace

TEST_CASE("a kernel built for another arch or triton is stale, one for this machine fits, absent facts keep it") {
  CHECK(judge_kernel(target("80"), rules_a100()).state == Judgement::fits);
  Judgement j = judge_kernel(target("90"), rules_a100());
  CHECK(j.state == Judgement::stale);
  CHECK(j.reason == "built for gpu.arch sm_90 here sm_80");
  CHECK(judge_kernel(target("80", "3.3.1"), rules_a100()).reason == "built for triton.version 3.3.1 here 3.6.0");
  Fingerprint no_gpu;
  no_gpu.absent(manifest::field::gpu_arch, "nvml: not found");
  no_gpu.set(manifest::field::triton_version, "3.6.0", "x");
  CHECK(judge_kernel(target("90"), no_gpu).state == Judgement::unjudged);
}

TEST_CASE("kernel json: the target and version, or nothing for anything else") {
  auto t =
      manifest::parse_kernel_json(R"({"target": {"backend": "cuda", "arch": 90, "warp_size": 32}, "triton_version": "3.6.0"})");
  REQUIRE(t);
  CHECK(manifest::arch_name(*t) == "sm_90");
  CHECK(manifest::parse_kernel_json(
            R"({"target": {"backend": "hip", "arch": "gfx942", "warp_size": 64}, "triton_version": "3.6.0"})")
            ->arch == "gfx942");
  CHECK_FALSE(manifest::parse_kernel_json(R"({"child_paths": {}})"));
  CHECK_FALSE(
      manifest::parse_kernel_json(R"({"target": {"backend": "cuda", "arch": 90, "warp_size": -1}, "triton_version": "3.6.0"})"));
  CHECK_FALSE(manifest::parse_kernel_json(R"({"target": 1, "target": 2})"));
  CHECK_FALSE(manifest::parse_kernel_json(std::string(100, '[')));
  // The other members are dropped unbuilt, but still parsed: a "target" inside one of them is not the root's, and
  // a member that is not JSON, or a repeated one, refuses the file.
  const std::string around = R"({"hash": "ab", "meta": {"target": {"backend": "hip", "arch": "gfx942", "warp_size": 64}}, )"
                             R"("target": {"backend": "cuda", "arch": 90, "warp_size": 32}, "shared": [1, [2, {"x": null}]], )"
                             R"("triton_version": "3.6.0"})";
  auto kept = manifest::parse_kernel_json(around);
  REQUIRE(kept);
  CHECK(kept->backend == "cuda");
  CHECK(kept->arch == "90");
  CHECK(kept->triton_version == "3.6.0");
  CHECK_FALSE(manifest::parse_kernel_json(
      R"({"hash": tru, "target": {"backend": "cuda", "arch": 90, "warp_size": 32}, "triton_version": "3.6.0"})"));
  CHECK_FALSE(manifest::parse_kernel_json(
      R"({"hash": 1, "hash": 2, "target": {"backend": "cuda", "arch": 90, "warp_size": 32}, "triton_version": "3.6.0"})"));
}

TEST_CASE("CUDA major of a wheel path") {
  CHECK(wheel_cuda_major("/venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcudart.so.13") == 13);
  CHECK(wheel_cuda_major("/sp/nvidia/cublas_cu12/lib/libcublas.so.12") == 12);
  CHECK(wheel_cuda_major("/sp/nvidia/x/cu128/lib") == 12);
  CHECK_FALSE(wheel_cuda_major("/usr/lib/x86_64-linux-gnu/libcuda.so.1"));
  CHECK_FALSE(wheel_cuda_major("/sp/nvidia/cudnn/lib/libcudnn.so.9"));
  CHECK(cuda_major(rules_a100()) == 12);
}

TEST_CASE("search paths: $ORIGIN expanded, empty items dropped") {
  CHECK(split_search_path("$ORIGIN/../lib::${ORIGIN}:/x", "/c/m") == std::vector<std::string>{"/c/m/../lib", "/c/m", "/x"});
  CHECK(split_search_path("", "/o").empty());
}

TEST_CASE("a library: resolved, resolved nowhere, resolved only through another CUDA major's wheel") {
  std::set<std::string> files = {"/lib/libc.so.6", "/c/m/../lib/libcudart.so.13", "/sp/nvidia/cu13/lib/libcudart.so.13"};
  LibrarySearch s{{"/lib"}, 12, [&](const std::string& p) { return files.count(p) > 0; }};
  ElfDynamic dyn{{"libc.so.6", "libcudart.so.13"}, "$ORIGIN/../lib", std::nullopt};
  CHECK(judge_library(dyn, "/c/m/ext.so", s).state == Judgement::fits);
  files.erase("/c/m/../lib/libcudart.so.13");
  CHECK(judge_library(dyn, "/c/m/ext.so", s).reason == "needs 'libcudart.so.13', which resolves nowhere here");
  dyn.runpath = "/sp/nvidia/cu13/lib";
  Judgement j = judge_library(dyn, "/c/m/ext.so", s);
  CHECK(j.state == Judgement::stale);
  CHECK(j.reason.find("found only in a CUDA 13 wheel") != std::string::npos);
  s.cuda_major = 13;
  CHECK(judge_library(dyn, "/c/m/ext.so", s).state == Judgement::fits);
  // RPATH is used only without RUNPATH
  ElfDynamic rp{{"libcudart.so.13"}, std::nullopt, "/sp/nvidia/cu13/lib"};
  CHECK(judge_library(rp, "/x.so", s).state == Judgement::fits);
}

TEST_CASE("debris: lock files, dead writers' temporary and staging folders") {
  auto dead = [](long) { return false; };
  auto live = [](long) { return true; };
  CHECK(judge_debris("entry.lock", false, dead).state == Judgement::stale);
  CHECK(judge_debris(".lock", false, dead).state == Judgement::fits);
  CHECK(judge_debris("x.lock", true, dead).state == Judgement::fits);
  CHECK(judge_debris("tmp.pid_123_abc", true, dead).state == Judgement::stale);
  CHECK(judge_debris("tmp.pid_123_abc", true, live).state == Judgement::fits);
  CHECK(judge_debris(".triton.ccpack-staging.77", true, dead).state == Judgement::stale);
  CHECK(judge_debris(".triton.ccpack-staging.77", true, live).state == Judgement::fits);
  CHECK(judge_debris("kernel.json", false, dead).state == Judgement::fits);
}
