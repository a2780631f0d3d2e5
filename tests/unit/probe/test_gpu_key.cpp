// probe/gpu_key.cpp's gpu_memo_key under a made root: with the driver's version file the key is that file, the GPUs
// under /proc/driver/nvidia/gpus with their information files (sorted by PCI address), the /dev/nvidia<N> nodes
// and the device-choosing variables, exactly; without it, "driver" is null and the key holds what could make
// another probe answer (PATH, its nvidia-smi files, /dev/kfd, the KFD topology's nodes).
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "probe/memo.hpp"
#include "probe/probe.hpp"
#include "unit/support.hpp"

using namespace ccpack;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// The variables the key reads, all unset for the scope.
struct CleanEnv {
  test::ScopedEnv a{"CUDA_VISIBLE_DEVICES", std::nullopt};
  test::ScopedEnv b{"NVIDIA_VISIBLE_DEVICES", std::nullopt};
  test::ScopedEnv c{"CUDA_DEVICE_ORDER", std::nullopt};
  test::ScopedEnv d{"CCPACK_NVML_LIBRARY", std::nullopt};
  test::ScopedEnv e{"CCPACK_SYSFS_ROOT", std::nullopt};
};

}  // namespace

TEST_CASE("gpu_memo_key with the driver: version, GPUs, device nodes and variables", "[probe][gpu_key]") {
  CleanEnv clean;
  test::ScopedEnv visible("CUDA_VISIBLE_DEVICES", "1,0");
  test::ScratchDir t;
  test::write_file(t / "proc/driver/nvidia/version", "NVRM version: 550.54\n");
  test::write_file(t / "proc/driver/nvidia/gpus/0000:b0:00.0/information", "Model: H200\n");
  test::write_file(t / "proc/driver/nvidia/gpus/0000:1a:00.0/information", "Model: H100\n");
  fs::create_directories(t / "proc/driver/nvidia/gpus/0000:c0:00.0");  // no information file: ""
  test::write_file(t / "dev/nvidia1", "");
  test::write_file(t / "dev/nvidia0", "");
  test::write_file(t / "dev/nvidiactl", "");   // not a GPU's node
  test::write_file(t / "dev/nvidia-uvm", "");  // nor this
  test::write_file(t / "dev/nvidia", "");      // no number
  test::write_file(t / "dev/null", "");
  json expected = {{"driver", "NVRM version: 550.54\n"},
                   {"gpus", json::array({json::array({"0000:1a:00.0", "Model: H100\n"}),
                                         json::array({"0000:b0:00.0", "Model: H200\n"}), json::array({"0000:c0:00.0", ""})})},
                   {"nodes", json::array({json::array({"nvidia0", 0, 0}), json::array({"nvidia1", 0, 0})})},
                   {"env", {{"CUDA_VISIBLE_DEVICES", "1,0"}}}};
  std::optional<json> key = probe::gpu_memo_key(t.path().string());
  REQUIRE(key);
  CHECK(key->dump() == expected.dump());
}

TEST_CASE("gpu_memo_key without the driver: the key of no GPU", "[probe][gpu_key]") {
  CleanEnv clean;
  test::ScratchDir t;
  fs::create_directories(t / "bin");
  test::write_file(t / "bin/nvidia-smi", "#!/bin/sh\n", 0755);
  test::ScopedEnv path("PATH", (t / "bin").string() + ":" + (t / "none").string());
  test::ScopedEnv ld("LD_LIBRARY_PATH", std::nullopt);
  test::write_file(t / "dev/kfd", "");
  fs::create_directories(t / "sys/class/kfd/kfd/topology/nodes/1");
  fs::create_directories(t / "sys/class/kfd/kfd/topology/nodes/0");
  std::optional<json> key = probe::gpu_memo_key(t.path().string());
  REQUIRE(key);
  CHECK((*key)["driver"].is_null());
  CHECK((*key)["ld_library_path"].is_null());
  CHECK((*key)["ld_cache"].is_null());  // no etc/ld.so.cache under the root
  CHECK((*key)["path"] == (t / "bin").string() + ":" + (t / "none").string());
  REQUIRE((*key)["smi"].size() == 2);
  probe::FileId smi = *probe::file_id((t / "bin/nvidia-smi").string());
  CHECK((*key)["smi"][0] == json::array({smi.dev, smi.ino, smi.size, smi.mtime_ns}));
  CHECK((*key)["smi"][1].is_null());
  CHECK((*key)["kfd"] == true);
  CHECK((*key)["kfd_nodes"] == json::array({"0", "1"}));
  CHECK((*key)["gpus"] == json::array());
  CHECK((*key)["nodes"] == json::array());
  CHECK((*key)["env"] == json::object());
}

TEST_CASE("gpu_memo_key reads the KFD topology under CCPACK_SYSFS_ROOT and records that variable", "[probe][gpu_key]") {
  CleanEnv clean;
  test::ScratchDir t;
  fs::create_directories(t / "other-sys/class/kfd/kfd/topology/nodes/7");
  test::ScopedEnv sysfs("CCPACK_SYSFS_ROOT", (t / "other-sys").string());
  std::optional<json> key = probe::gpu_memo_key(t.path().string());
  REQUIRE(key);
  CHECK((*key)["kfd"] == false);
  CHECK((*key)["kfd_nodes"] == json::array({"7"}));
  CHECK((*key)["env"] == json{{"CCPACK_SYSFS_ROOT", (t / "other-sys").string()}});
}

TEST_CASE("gpu_memo_key: an empty version file counts as no driver", "[probe][gpu_key]") {
  CleanEnv clean;
  test::ScratchDir t;
  test::write_file(t / "proc/driver/nvidia/version", "");
  std::optional<json> key = probe::gpu_memo_key(t.path().string());
  REQUIRE(key);
  CHECK((*key)["driver"].is_null());
  CHECK(key->contains("smi"));
}
