// probe/gpu.cpp without a GPU: NVML made unloadable ($CCPACK_NVML_LIBRARY), a stand-in nvidia-smi on PATH,
// and a KFD topology under $CCPACK_SYSFS_ROOT. Checked: the order of the fallbacks, what each fills (distinct
// values in device order, the sources), the parsers' refusals, and every field absent with the three reasons
// when nothing answers.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "probe/probe.hpp"
#include "unit/support.hpp"

using namespace ccpack;
using namespace ccpack::manifest;
namespace probe = ccpack::probe;
namespace fs = std::filesystem;

namespace {

// No NVML, PATH holding only `bin` (with sh's folders for the scripts' interpreter), sysfs at `sys`.
struct FakeHost {
  explicit FakeHost(const test::ScratchDir& t)
      : nvml("CCPACK_NVML_LIBRARY", (t / "no-libnvidia-ml.so").string()),
        path("PATH", (t / "bin").string()),
        sysfs("CCPACK_SYSFS_ROOT", (t / "sys").string()) {}
  test::ScopedEnv nvml, path, sysfs;
};

void kfd_node(const fs::path& sys, const std::string& n, const std::string& properties) {
  test::write_file(sys / "class/kfd/kfd/topology/nodes" / n / "properties", properties);
}

}  // namespace

TEST_CASE("gpu probe: no NVML, then nvidia-smi's CSV: names, archs and driver, no SM count", "[probe-gpu]") {
  test::ScratchDir t;
  FakeHost host(t);
  test::write_file(t / "bin/nvidia-smi",
                   "#!/bin/sh\necho 'NVIDIA H200, 9.0, 580.159.04'\necho 'NVIDIA H100 80GB HBM3, 9.0, 580.159.04'\n"
                   "echo 'NVIDIA A100-SXM4-80GB, 8.0, 580.159.04'\n",
                   0755);
  Fingerprint fp;
  probe::probe_gpu(fp, test::kNoDeadline);
  CHECK(test::field_text(fp, field::gpu_vendor) == "nvidia [nvidia-smi]");
  CHECK(test::field_text(fp, field::gpu_count) == "3 [nvidia-smi]");
  CHECK(test::field_text(fp, field::gpu_name) == "NVIDIA H200, NVIDIA H100 80GB HBM3, NVIDIA A100-SXM4-80GB [nvidia-smi]");
  CHECK(test::field_text(fp, field::gpu_arch) == "sm_90, sm_80 [nvidia-smi]");
  CHECK(test::field_text(fp, field::gpu_warp_size) == "32 [nvidia-smi]");
  CHECK(test::field_text(fp, field::gpu_driver) == "580.159.04 [nvidia-smi]");
  CHECK(test::field_text(fp, field::gpu_sm_count) == "<absent: nvidia-smi: reports no SM count>");
}

TEST_CASE("gpu probe: nvidia-smi failing or unreadable falls to KFD: gfx arch, CUs, wave size, driver", "[probe-gpu]") {
  test::ScratchDir t;
  FakeHost host(t);
  test::write_file(t / "bin/nvidia-smi", "#!/bin/sh\necho 'NVIDIA-SMI has failed'\nexit 9\n", 0755);
  kfd_node(t / "sys", "0", "cpu_cores_count 64\nsimd_count 0\ngfx_target_version 0\n");  // a CPU node
  kfd_node(t / "sys", "10", "gfx_target_version 90010\nsimd_count 440\nsimd_per_cu 4\nwave_front_size 64\ndevice_id 29704\n");
  kfd_node(t / "sys", "2", "gfx_target_version 90402\nsimd_count 1216\nsimd_per_cu 4\nwave_front_size 64\ndevice_id 29857\n");
  kfd_node(t / "sys", "3", "gfx_target_version 90402\nsimd_count 1216\nsimd_per_cu 4\nwave_front_size 64\ndevice_id 29857\n");
  test::write_file(t / "sys/module/amdgpu/version", "6.8.5 \n");
  Fingerprint fp;
  probe::probe_gpu(fp, test::kNoDeadline);
  const std::string src = " [/sys/class/kfd]";
  CHECK(test::field_text(fp, field::gpu_vendor) == "amd" + src);
  CHECK(test::field_text(fp, field::gpu_count) == "3" + src);
  CHECK(test::field_text(fp, field::gpu_arch) == "gfx942, gfx90a" + src);  // node 2 before node 10
  CHECK(test::field_text(fp, field::gpu_name) == "AMD device 0x74a1, AMD device 0x7408" + src);
  CHECK(test::field_text(fp, field::gpu_sm_count) == "304, 110" + src);
  CHECK(test::field_text(fp, field::gpu_warp_size) == "64" + src);
  CHECK(test::field_text(fp, field::gpu_driver) == "6.8.5" + src);
}

TEST_CASE("gpu probe: nothing answers: every gpu field absent, with NVML's, nvidia-smi's and KFD's reasons", "[probe-gpu]") {
  test::ScratchDir t;
  FakeHost host(t);
  Fingerprint fp;
  probe::probe_gpu(fp, test::kNoDeadline);
  const std::string why = "nvml: " + (t / "no-libnvidia-ml.so").string() +
                          " not loadable; nvidia-smi: not found; kfd: no GPU node in '" +
                          (t / "sys/class/kfd/kfd/topology/nodes").string() + "'";
  for (std::string_view f : {field::gpu_vendor, field::gpu_count, field::gpu_name, field::gpu_arch, field::gpu_sm_count,
                             field::gpu_warp_size, field::gpu_driver}) {
    CHECK(test::field_text(fp, f) == "<absent: " + why + ">");
  }
  // A KFD node without simd_per_cu or wave size: the GPU is named, the rest absent with its reason.
  kfd_node(t / "sys", "1", "gfx_target_version 110000\nsimd_count 96\ndevice_id x\n");
  Fingerprint partial;
  probe::probe_gpu(partial, test::kNoDeadline);
  CHECK(test::field_text(partial, field::gpu_arch) == "gfx1100 [/sys/class/kfd]");
  CHECK(test::field_text(partial, field::gpu_name) == "AMD device 0x0000 [/sys/class/kfd]");
  CHECK(test::field_text(partial, field::gpu_sm_count) == "<absent: kfd: no simd_per_cu>");
  CHECK(test::field_text(partial, field::gpu_warp_size) == "<absent: /sys/class/kfd: no warp size>");
  CHECK(test::field_text(partial, field::gpu_driver) == "<absent: /sys/class/kfd: no driver version>");
}

TEST_CASE("nvidia-smi output: refused whole when any line is not name, compute capability, driver", "[probe-gpu]") {
  auto parses = [](std::string_view out) {
    Fingerprint fp;
    return probe::parse_nvidia_smi(out, fp);
  };
  CHECK(parses("NVIDIA H200, 9.0, 580.159.04\n\n"));
  CHECK(parses("  NVIDIA H200 ,  9.0 , 580.159.04 \r\n"));
  CHECK_FALSE(parses(""));
  CHECK_FALSE(parses("\n\n"));
  CHECK_FALSE(parses("NVIDIA H200, 9.0\n"));
  CHECK_FALSE(parses("NVIDIA H200, 9.0, 580\nNo devices were found\n"));
  CHECK_FALSE(parses(", 9.0, 580\n"));
  CHECK_FALSE(parses("NVIDIA H200, 90, 580\n"));
  CHECK_FALSE(parses("NVIDIA H200, .9, 580\n"));
  CHECK_FALSE(parses("NVIDIA H200, [N/A], 580\n"));
  CHECK_FALSE(parses("NVIDIA H200, 1234567.0, 580\n"));
  Fingerprint hostile;
  REQUIRE(probe::parse_nvidia_smi("GPU\x1b[2J, 9.0, 580\x07\n", hostile));
  CHECK(test::field_text(hostile, field::gpu_name) == "GPU\\x1b[2J [nvidia-smi]");
  CHECK(test::field_text(hostile, field::gpu_driver) == "580\\x07 [nvidia-smi]");
}

TEST_CASE("gfx names from KFD's gfx_target_version: major in decimal, minor and stepping in hex", "[probe-gpu]") {
  CHECK(probe::gfx_name(90402) == "gfx942");
  CHECK(probe::gfx_name(90010) == "gfx90a");
  CHECK(probe::gfx_name(100300) == "gfx1030");
  CHECK(probe::gfx_name(110001) == "gfx1101");
  CHECK(probe::gfx_name(120001) == "gfx1201");
  CHECK(probe::gfx_name(0).empty());
  CHECK(probe::gfx_name(1000000).empty());
}
