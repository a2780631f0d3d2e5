// The GPU probe's memo key: what NVML's answer depends on, read in well under a millisecond.
//
// Why: loading NVML and nvmlInit_v2 cost ~20 ms on an H200 host, most of a no-op restore once the Python probe is
// memoised (docs/FINGERPRINT.md). NVML reports the GPUs this container can open, their names, compute capability,
// SM counts and the driver's version. Those change only with the driver (its /proc version file), the GPUs the
// driver holds (the PCI addresses under /proc/driver/nvidia/gpus and each one's information file, which names the
// model), the device nodes this container was given (/dev/nvidia<N>: names and device numbers, so another GPU of
// the node is another key), and the variables that choose devices or the probe's library. Without the driver's
// /proc files the key is that of "no GPU": what could make NVML, nvidia-smi or KFD answer (the library named, the
// nvidia-smi files on PATH, the loader's search for NVML's library, /dev/kfd and the KFD topology, the device
// nodes and variables), so a GPU-less pod's
// no-op restore forks nothing (probe.cpp keeps only the answer "no GPU" under it: memo.cpp put_gpu).
#include <dirent.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "probe/probe.hpp"

namespace ccpack::probe {
namespace {

constexpr std::size_t kMaxKeyFile = 4096;
constexpr std::size_t kMaxKeyNames = 4096;

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
  if (!d) return names;
  while (dirent* e = ::readdir(d.get())) {
    std::string_view n(e->d_name);
    if (n != "." && n != ".." && names.size() < kMaxKeyNames) names.emplace_back(n);
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool is_gpu_node(std::string_view name) {
  return name.size() > 6 && name.starts_with("nvidia") && name.find_first_not_of("0123456789", 6) == std::string_view::npos;
}

// The identity of every nvidia-smi that a PATH search would try, in PATH order (absent ones as null).
nlohmann::json smi_on_path() {
  nlohmann::json out = nlohmann::json::array();
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "";
  for (std::size_t n = 0; n < kMaxKeyNames && !dirs.empty(); ++n) {
    std::string_view dir = dirs.substr(0, dirs.find(':'));
    std::optional<FileId> id = file_id((dir.empty() ? std::string(".") : std::string(dir)) + "/nvidia-smi");
    out.push_back(id ? nlohmann::json::array({id->dev, id->ino, id->size, id->mtime_ns}) : nlohmann::json(nullptr));
    dirs.remove_prefix(std::min(dirs.size(), dir.size() + 1));
  }
  return out;
}

// Without the NVIDIA driver: the inputs of the answer "no GPU" besides the nodes and variables. Where the dynamic
// loader looks for NVML's library (LD_LIBRARY_PATH, and /etc/ld.so.cache, which ldconfig rewrites when a library
// is installed) is part of it: the answer "NVML not loadable" holds only while that search is the same.
nlohmann::json no_driver_key(const std::string& root) {
  const char* sys_env = std::getenv("CCPACK_SYSFS_ROOT");
  std::string sys = sys_env && *sys_env ? sys_env : root + "/sys";
  struct stat st {};
  std::optional<FileId> ld_cache = file_id(root + "/etc/ld.so.cache");
  const char* ld_path = std::getenv("LD_LIBRARY_PATH");
  return {{"driver", nullptr},
          {"ld_library_path", ld_path ? nlohmann::json(ld_path) : nlohmann::json(nullptr)},
          {"ld_cache", ld_cache ? nlohmann::json::array({ld_cache->dev, ld_cache->ino, ld_cache->size, ld_cache->mtime_ns})
                                : nlohmann::json(nullptr)},
          {"path", std::getenv("PATH") ? std::getenv("PATH") : ""},
          {"smi", smi_on_path()},
          {"kfd", ::stat((root + "/dev/kfd").c_str(), &st) == 0},
          {"kfd_nodes", names_in(sys + "/class/kfd/kfd/topology/nodes")}};
}

}  // namespace

std::optional<nlohmann::json> gpu_memo_key(const std::string& root) {
  std::optional<std::string> version = read_prefix(root + "/proc/driver/nvidia/version", kMaxKeyFile);
  if (!version) version = "";
  nlohmann::json key = version->empty() ? no_driver_key(root) : nlohmann::json{{"driver", *version}};
  nlohmann::json gpus = nlohmann::json::array();
  const std::string gpu_dir = root + "/proc/driver/nvidia/gpus";
  for (const std::string& pci : names_in(gpu_dir)) {
    std::string info = gpu_dir;
    info.append("/").append(pci).append("/information");
    gpus.push_back({pci, read_prefix(info, kMaxKeyFile).value_or("")});
  }
  nlohmann::json nodes = nlohmann::json::array();
  const std::string dev_dir = root + "/dev";
  for (const std::string& n : names_in(dev_dir)) {
    struct stat st {};
    std::string node = dev_dir;
    node.append("/").append(n);
    if (!is_gpu_node(n) || ::stat(node.c_str(), &st) != 0) continue;
    nodes.push_back({n, ::major(st.st_rdev), ::minor(st.st_rdev)});
  }
  nlohmann::json env = nlohmann::json::object();
  for (const char* v :
       {"CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CCPACK_NVML_LIBRARY", "CCPACK_SYSFS_ROOT"}) {
    if (const char* value = std::getenv(v)) env[v] = value;
  }
  key["gpus"] = std::move(gpus);
  key["nodes"] = std::move(nodes);
  key["env"] = std::move(env);
  return key;
}

}  // namespace ccpack::probe
