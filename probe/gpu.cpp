// The GPU probe: NVML loaded with dlopen, else nvidia-smi, else AMD's KFD topology in sysfs.
//
// NVML is the driver's own library, so it reports what the driver sees without initialising CUDA (no context,
// a few ms with persistence mode). It is loaded at run time so ccpack runs on machines without NVIDIA's driver;
// $CCPACK_NVML_LIBRARY names another library (the tests' stub). The SM count comes from
// nvmlDeviceGetAttributes_v2, which some drivers answer only for MIG devices: then it is absent, never derived.
// The warp size of every NVIDIA GPU is 32; AMD's comes from the KFD node's wave_front_size. Several GPUs of
// different kinds give a comma-separated list of their distinct values, in device order.
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>

#include "probe/probe.hpp"
#include "util/escape.hpp"
#include "util/fs.hpp"

namespace ccpack::probe {
namespace fs = std::filesystem;
namespace {

// The NVML ABI subset used here (nvml.h, stable since CUDA 11).
using nvmlDevice_t = void*;
struct NvmlAttributes {
  unsigned multiprocessorCount, sharedCopyEngineCount, sharedDecoderCount, sharedEncoderCount, sharedJpegCount, sharedOfaCount,
      gpuInstanceSliceCount, computeInstanceSliceCount;
  unsigned long long memorySizeMB;
};
using InitFn = int (*)();
using CountFn = int (*)(unsigned*);
using HandleFn = int (*)(unsigned, nvmlDevice_t*);
using NameFn = int (*)(nvmlDevice_t, char*, unsigned);
using CapFn = int (*)(nvmlDevice_t, int*, int*);
using AttrFn = int (*)(nvmlDevice_t, NvmlAttributes*);
using DriverFn = int (*)(char*, unsigned);

// Distinct values in first-seen order, joined by ", ".
class Distinct {
 public:
  void add(const std::string& v) {
    for (const std::string& s : seen_)
      if (s == v) return;
    seen_.push_back(v);
  }
  [[nodiscard]] std::string joined() const {
    std::string out;
    for (const std::string& s : seen_) out += (out.empty() ? "" : ", ") + s;
    return out;
  }
  [[nodiscard]] bool empty() const { return seen_.empty(); }

 private:
  std::vector<std::string> seen_;
};

struct Devices {
  Distinct names, archs, sms, warps;
  unsigned count = 0;
};

void record(Fingerprint& fp, const Devices& d, const std::string& vendor, const std::string& driver, const std::string& src,
            const std::string& sm_why) {
  fp.set(field::gpu_vendor, vendor, src);
  fp.set(field::gpu_count, std::to_string(d.count), src);
  d.names.empty() ? fp.absent(field::gpu_name, src + ": no name") : fp.set(field::gpu_name, d.names.joined(), src);
  d.archs.empty() ? fp.absent(field::gpu_arch, src + ": no arch") : fp.set(field::gpu_arch, d.archs.joined(), src);
  d.sms.empty() ? fp.absent(field::gpu_sm_count, sm_why) : fp.set(field::gpu_sm_count, d.sms.joined(), src);
  d.warps.empty() ? fp.absent(field::gpu_warp_size, src + ": no warp size") : fp.set(field::gpu_warp_size, d.warps.joined(), src);
  driver.empty() ? fp.absent(field::gpu_driver, src + ": no driver version") : fp.set(field::gpu_driver, driver, src);
}

template <typename Fn>
Fn sym(void* lib, const char* name) {
  return reinterpret_cast<Fn>(::dlsym(lib, name));
}

// Fills the gpu fields from NVML; returns false (with `why`) when NVML is unusable or sees no GPU.
bool probe_nvml(Fingerprint& fp, std::string& why) {
  const char* env = std::getenv("CCPACK_NVML_LIBRARY");
  std::string lib_name = env && *env ? env : "libnvidia-ml.so.1";
  void* lib = ::dlopen(lib_name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    why = "nvml: " + lib_name + std::string(kNvmlNotLoadable);
    return false;
  }
  auto init = sym<InitFn>(lib, "nvmlInit_v2");
  auto shutdown = sym<InitFn>(lib, "nvmlShutdown");
  auto count_fn = sym<CountFn>(lib, "nvmlDeviceGetCount_v2");
  auto handle_fn = sym<HandleFn>(lib, "nvmlDeviceGetHandleByIndex_v2");
  auto name_fn = sym<NameFn>(lib, "nvmlDeviceGetName");
  auto cap_fn = sym<CapFn>(lib, "nvmlDeviceGetCudaComputeCapability");
  auto attr_fn = sym<AttrFn>(lib, "nvmlDeviceGetAttributes_v2");
  auto driver_fn = sym<DriverFn>(lib, "nvmlSystemGetDriverVersion");
  unsigned count = 0;
  if (!init || !count_fn || !handle_fn || !name_fn || !cap_fn || !driver_fn) {
    why = "nvml: " + lib_name + " lacks the functions ccpack uses";
  } else if (int rc = init(); rc != 0) {
    why = "nvml: nvmlInit_v2 failed (" + std::to_string(rc) + ")";
  } else {
    Devices d;
    char driver[96] = {};
    std::string driver_version = driver_fn(driver, sizeof driver - 1) == 0 ? std::string(driver) : "";
    if (count_fn(&count) == 0 && count > 0 && count <= 4096) {
      d.count = count;
      for (unsigned i = 0; i < count; ++i) {
        nvmlDevice_t dev = nullptr;
        if (handle_fn(i, &dev) != 0) continue;
        char name[128] = {};
        if (name_fn(dev, name, sizeof name - 1) == 0) d.names.add(escaped(name, 96));
        int major = 0, minor = 0;
        if (cap_fn(dev, &major, &minor) == 0) d.archs.add("sm_" + std::to_string(major) + std::to_string(minor));
        NvmlAttributes attr{};
        if (attr_fn && attr_fn(dev, &attr) == 0 && attr.multiprocessorCount > 0)
          d.sms.add(std::to_string(attr.multiprocessorCount));
        d.warps.add("32");
      }
      record(fp, d, "nvidia", escaped(driver_version, 64), "nvml",
             "nvml: nvmlDeviceGetAttributes_v2 gives no SM count on this device");
    } else {
      why = "nvml: no NVIDIA GPU";
      count = 0;
    }
    if (shutdown) shutdown();
  }
  // Not dlclose()d: NVML keeps threads of its own on some drivers.
  return count > 0;
}

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

// "key value" lines of a KFD properties file, at most 64 KiB read.
std::map<std::string, std::string> read_properties(const fs::path& file) {
  std::map<std::string, std::string> out;
  std::ifstream in(file);
  std::string line;
  std::size_t total = 0;
  while (total < (64u << 10) && std::getline(in, line)) {
    total += line.size() + 1;
    auto sp = line.find(' ');
    if (sp != std::string::npos) out[line.substr(0, sp)] = trim(std::string_view(line).substr(sp + 1));
  }
  return out;
}

std::uint64_t number(const std::map<std::string, std::string>& props, const std::string& key) {
  auto it = props.find(key);
  if (it == props.end()) return 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(it->second.c_str(), &end, 10);
  return end && *end == '\0' ? v : 0;
}

bool probe_kfd(Fingerprint& fp, std::string& why) {
  const char* root_env = std::getenv("CCPACK_SYSFS_ROOT");
  fs::path sys = root_env && *root_env ? fs::path(root_env) : fs::path("/sys");
  fs::path nodes = sys / "class/kfd/kfd/topology/nodes";
  std::error_code ec;
  std::vector<fs::path> found;
  for (fs::directory_iterator it(nodes, ec), end; !ec && it != end && found.size() < 1024; it.increment(ec))
    found.push_back(it->path());
  std::sort(found.begin(), found.end(), [](const fs::path& a, const fs::path& b) {
    return std::strtoul(a.filename().c_str(), nullptr, 10) < std::strtoul(b.filename().c_str(), nullptr, 10);
  });
  Devices d;
  for (const fs::path& node : found) {
    auto props = read_properties(node / "properties");
    std::string gfx = gfx_name(number(props, "gfx_target_version"));
    if (gfx.empty() || number(props, "simd_count") == 0) continue;  // a CPU node
    ++d.count;
    d.archs.add(gfx);
    char id[32];
    std::snprintf(id, sizeof id, "AMD device 0x%04llx", static_cast<unsigned long long>(number(props, "device_id")));
    d.names.add(id);
    std::uint64_t per_cu = number(props, "simd_per_cu");
    if (per_cu > 0) d.sms.add(std::to_string(number(props, "simd_count") / per_cu));
    if (std::uint64_t w = number(props, "wave_front_size")) d.warps.add(std::to_string(w));
  }
  if (d.count == 0) {
    why = "kfd: no GPU node in " + quoted_path(nodes);
    return false;
  }
  std::string driver;
  std::ifstream version(sys / "module/amdgpu/version");
  std::getline(version, driver);
  record(fp, d, "amd", escaped(trim(driver), 64), "/sys/class/kfd", "kfd: no simd_per_cu");
  return true;
}

}  // namespace

std::string gfx_name(std::uint64_t v) {
  if (v == 0 || v > 999999) return {};
  char buf[32];
  std::snprintf(buf, sizeof buf, "gfx%llu%llx%llx", static_cast<unsigned long long>(v / 10000),
                static_cast<unsigned long long>((v / 100) % 100), static_cast<unsigned long long>(v % 100));
  return buf;
}

bool parse_nvidia_smi(std::string_view out, Fingerprint& fp) {
  Devices d;
  std::string driver;
  while (!out.empty()) {
    std::string_view line = out.substr(0, out.find('\n'));
    out.remove_prefix(std::min(out.size(), line.size() + 1));
    if (trim(line).empty()) continue;
    auto c1 = line.find(',');
    auto c2 = c1 == std::string_view::npos ? c1 : line.find(',', c1 + 1);
    if (c2 == std::string_view::npos || d.count >= 4096) return false;
    std::string name = trim(line.substr(0, c1));
    std::string cap = trim(line.substr(c1 + 1, c2 - c1 - 1));
    std::string drv = trim(line.substr(c2 + 1));
    auto dot = cap.find('.');
    if (name.empty() || dot == std::string::npos || dot == 0 || cap.size() > 8 ||
        cap.find_first_not_of("0123456789.") != std::string::npos) {
      return false;
    }
    ++d.count;
    d.names.add(escaped(name, 96));
    d.archs.add("sm_" + cap.substr(0, dot) + cap.substr(dot + 1));
    d.warps.add("32");
    driver = escaped(drv, 64);
  }
  if (d.count == 0) return false;
  record(fp, d, "nvidia", driver, "nvidia-smi", "nvidia-smi: reports no SM count");
  return true;
}

void probe_gpu(Fingerprint& fp, const RunLimits& limits) {
  std::string nvml_why;
  if (probe_nvml(fp, nvml_why)) return;
  RunLimits bounded = limits;
  bounded.max_output = 256 << 10;
  RunResult smi = run_program({"nvidia-smi", "--query-gpu=name,compute_cap,driver_version", "--format=csv,noheader"}, bounded);
  std::string smi_why = "nvidia-smi: " + (smi.ok() ? std::string("unreadable output") : smi.why(bounded));
  if (smi.ok() && parse_nvidia_smi(smi.out, fp)) return;
  std::string kfd_why;
  if (probe_kfd(fp, kfd_why)) return;
  std::string why = nvml_why + "; " + smi_why + "; " + kfd_why;
  for (std::string_view f :
       {field::gpu_vendor, field::gpu_name, field::gpu_arch, field::gpu_sm_count, field::gpu_warp_size, field::gpu_driver}) {
    fp.absent(f, why);
  }
  fp.absent(field::gpu_count, why);
}

}  // namespace ccpack::probe
