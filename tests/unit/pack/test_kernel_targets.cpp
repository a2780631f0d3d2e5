// pack/kernel_targets.cpp: the Triton kernel targets a cache names (in the triton folder and in Inductor's own
// triton/<device>/ folder; group files, non-JSON and foreign JSON skipped), counted and sorted; and reconcile,
// which makes the fingerprint agree with them and says so, naming both sides.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "manifest/fingerprint.hpp"
#include "pack/kernel_targets.hpp"
#include "unit/support.hpp"

using namespace ccpack;
using manifest::Fingerprint;
using manifest::TritonTarget;
namespace field = manifest::field;

namespace {

std::string kernel_json(const std::string& arch, const std::string& version) {
  return R"({"target":{"backend":"cuda","arch":)" + arch + R"(,"warp_size":32},"triton_version":")" + version + R"("})";
}

Fingerprint probed_h100() {
  Fingerprint fp;
  fp.set(field::gpu_arch, "sm_90", "nvml");
  fp.set(field::gpu_name, "NVIDIA H100", "nvml");
  fp.set(field::gpu_sm_count, "132", "nvml");
  fp.set(field::triton_version, "3.6.0", "python:dist-info (triton)");
  return fp;
}

}  // namespace

TEST_CASE("read_triton_targets: each kernel .json counted once by target, sorted, the rest skipped") {
  test::ScratchDir t;
  test::write_file(t / "tri/h1/k.json", kernel_json("90", "3.6.0"));
  test::write_file(t / "tri/h2/k.json", kernel_json("90", "3.6.0"));
  test::write_file(t / "tri/h3/k.json", kernel_json("80", "3.6.0"));
  test::write_file(t / "tri/h3/__grp__k.json", kernel_json("70", "3.6.0"));  // a group file, not a kernel
  test::write_file(t / "tri/h4/k.cubin", "CUBIN");
  test::write_file(t / "tri/h4/other.json", R"({"not":"a kernel"})");
  test::write_file(t / "tri/top.json", kernel_json("75", "3.6.0"));  // not in a kernel folder
  test::write_file(t / "ind/triton/0/h5/k.json", kernel_json("90", "3.5.1"));
  test::write_file(t / "ind/fxgraph/h6/k.json", kernel_json("86", "3.6.0"));  // not under triton/<device>/
  std::vector<TritonTarget> targets = pack::read_triton_targets(test::dirs_of(t / "ind", t / "tri"));
  CHECK(targets == std::vector<TritonTarget>{
                       {"cuda", "80", 32, "3.6.0", 1}, {"cuda", "90", 32, "3.5.1", 1}, {"cuda", "90", 32, "3.6.0", 2}});
  CHECK(pack::read_triton_targets(test::dirs_of(t / "none", t / "none2")).empty());
}

TEST_CASE("reconcile: one target agreeing with the probe changes nothing and says nothing") {
  Fingerprint fp = probed_h100();
  CHECK(pack::reconcile(fp, {{"cuda", "90", 32, "3.6.0", 5}}).empty());
  CHECK(fp.get(field::gpu_arch)->value == "sm_90");
  CHECK(fp.get(field::gpu_arch)->source == "nvml");
  CHECK(fp.get(field::gpu_name)->value == "NVIDIA H100");
  CHECK(pack::reconcile(fp, {}).empty());
}

TEST_CASE("reconcile: kernels for another GPU and another Triton: the cache's side recorded, both named") {
  Fingerprint fp = probed_h100();
  std::vector<std::string> w = pack::reconcile(fp, {{"cuda", "80", 32, "3.5.1", 3}});
  CHECK(w ==
        std::vector<std::string>{
            "the cache's Triton kernels target sm_80 but this machine's GPU is sm_90 (NVIDIA H100): the archive records "
            "the cache's target, not this machine's GPU",
            "the cache's Triton kernels were built by triton 3.5.1 but triton 3.6.0 is installed: the archive records 3.5.1"});
  CHECK(fp.get(field::gpu_arch)->value == "sm_80");
  CHECK(fp.get(field::gpu_arch)->source == "derived:triton-json; the probe said sm_90");
  CHECK(fp.get(field::triton_version)->value == "3.5.1");
  CHECK_FALSE(fp.get(field::gpu_name)->value);  // it describes another machine now
  CHECK_FALSE(fp.get(field::gpu_sm_count)->value);
}

TEST_CASE("reconcile: several targets or versions: the field is absent, and the warning lists them") {
  Fingerprint fp = probed_h100();
  std::vector<TritonTarget> targets = {{"cuda", "80", 32, "3.6.0", 1}, {"cuda", "90", 32, "3.6.1", 2}};
  std::vector<std::string> w = pack::reconcile(fp, targets);
  CHECK(w == std::vector<std::string>{
                 "the cache holds Triton kernels for 2 GPU targets: sm_80 (1 kernels, triton 3.6.0), sm_90 (2 kernels, "
                 "triton 3.6.1); gpu.arch is recorded as absent",
                 "the cache holds kernels of 2 Triton versions: sm_80 (1 kernels, triton 3.6.0), sm_90 (2 kernels, triton "
                 "3.6.1); triton.version is recorded as absent"});
  CHECK_FALSE(fp.get(field::gpu_arch)->value);
  CHECK_FALSE(fp.get(field::triton_version)->value);
}
