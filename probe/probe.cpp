// The host and environment probes, and probe_machine, which runs every probe (python and gpu concurrently).
#include "probe/probe.hpp"

#include <gnu/libc-version.h>
#include <sys/utsname.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <functional>
#include <future>
#include <memory>
#include <thread>

#include "manifest/field_set.hpp"

extern char** environ;

namespace ccpack::probe {
namespace {

bool has_any(std::string_view name, std::initializer_list<std::string_view> parts) {
  return std::any_of(parts.begin(), parts.end(), [&](std::string_view p) { return name.find(p) != std::string_view::npos; });
}

// Settings that never enter a cache key, or may hold credentials (never recorded: a fingerprint is printed).
bool never_recorded(std::string_view name) { return has_any(name, {"PASSWORD", "TOKEN", "SECRET", "REDIS", "REMOTE"}); }

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// KEY=VALUE of every variable `pick` selects, sorted, joined as a settings list (manifest/field_set.hpp).
std::string joined_settings(bool (*pick)(std::string_view)) {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    std::string_view name = kv.substr(0, kv.find('='));
    if (pick(name)) out.emplace_back(kv);
  }
  std::sort(out.begin(), out.end());
  return manifest::join_entries(manifest::ListSyntax::settings, out);
}

}  // namespace

bool is_inductor_key_setting(std::string_view name) {
  // Where the cache lives, whether it is used, and thread counts do not change what is compiled.
  static constexpr std::array<std::string_view, 6> kNotInKey = {
      "TORCHINDUCTOR_CACHE_DIR",       "TORCHINDUCTOR_FX_GRAPH_CACHE",
      "TORCHINDUCTOR_AUTOGRAD_CACHE",  "TORCHINDUCTOR_FORCE_DISABLE_CACHES",
      "TORCHINDUCTOR_COMPILE_THREADS", "TORCHINDUCTOR_WORKER_START"};
  return name.starts_with("TORCHINDUCTOR_") && !never_recorded(name) &&
         std::find(kNotInKey.begin(), kNotInKey.end(), name) == kNotInKey.end();
}

bool is_triton_key_setting(std::string_view name) {
  // Triton's own cache-invalidating variables that do not start with TRITON_.
  static constexpr std::array<std::string_view, 8> kOtherKeyVars = {
      "DISABLE_LLVM_OPT", "DISABLE_MMA_V3", "DISABLE_PTXAS_OPT",     "LLVM_IR_ENABLE_DUMP",
      "MLIR_ENABLE_DUMP", "USE_IR_LOC",     "LLVM_PASS_PLUGIN_PATH", "AMDGCN_ENABLE_DUMP"};
  // Locations and tooling switches that do not change a kernel (ptxas is recorded as ptxas.version).
  static constexpr std::array<std::string_view, 11> kNotInKey = {
      "TRITON_CACHE_DIR",     "TRITON_HOME",           "TRITON_DUMP_DIR",         "TRITON_OVERRIDE_DIR",
      "TRITON_CACHE_MANAGER", "TRITON_PTXAS_PATH",     "TRITON_PRINT_AUTOTUNING", "TRITON_LIBCUDA_PATH",
      "TRITON_CUDACRT_PATH",  "TRITON_CUOBJDUMP_PATH", "TRITON_NVDISASM_PATH"};
  if (std::find(kOtherKeyVars.begin(), kOtherKeyVars.end(), name) != kOtherKeyVars.end()) return true;
  return name.starts_with("TRITON_") && !never_recorded(name) &&
         std::find(kNotInKey.begin(), kNotInKey.end(), name) == kNotInKey.end();
}

std::string python_of(const ProbeOptions& options) {
  if (!options.python.empty()) return options.python;
  std::string env = env_or_empty("CCPACK_PYTHON");
  return env.empty() ? "python3" : env;
}

void probe_host(Fingerprint& fp) {
  utsname u{};
  if (::uname(&u) == 0) {
    fp.set(field::cpu_arch, u.machine, "uname");
    fp.set(field::os, u.sysname, "uname");
  } else {
    fp.absent(field::cpu_arch, "uname failed");
    fp.absent(field::os, "uname failed");
  }
  fp.set(field::glibc, gnu_get_libc_version(), "gnu_get_libc_version");
}

void probe_env(Fingerprint& fp, const std::vector<CacheDir>& dirs) {
  fp.set(field::env_inductor, joined_settings(is_inductor_key_setting), "env");
  fp.set(field::env_triton, joined_settings(is_triton_key_setting), "env");
  fp.set(field::env_torch_cuda_arch_list, env_or_empty("TORCH_CUDA_ARCH_LIST"), "env");
  fp.set(field::env_cuda_visible_devices, env_or_empty("CUDA_VISIBLE_DEVICES"), "env");
  fp.set(field::env_compile_threads, env_or_empty("TORCHINDUCTOR_COMPILE_THREADS"), "env");
  fp.set(field::world_size, env_or_empty("WORLD_SIZE"), "env WORLD_SIZE");
  for (const CacheDir& d : dirs) {
    if (d.kind == manifest::ComponentKind::inductor) fp.set(field::paths_inductor, d.dir.string(), "cache folder");
    if (d.kind == manifest::ComponentKind::triton) fp.set(field::paths_triton, d.dir.string(), "cache folder");
  }
}

namespace {

// The GPU fields: from the memo when it holds NVML's answer for this machine's GPU key, else from the GPU probe.
// The probe runs on its own thread while `meanwhile` runs; NVML calls cannot be interrupted, so past the deadline
// the thread is left to finish (or not) on its own copy of the state, and the fields say it timed out.
void probe_gpu_fields(Fingerprint& fp, const ProbeOptions& options, ProbeMemo& memo, const std::function<void()>& meanwhile) {
  std::optional<nlohmann::json> key = memo.enabled() ? gpu_memo_key() : std::nullopt;
  if (key) {
    if (std::optional<Fingerprint> known = memo.gpu(*key)) {
      meanwhile();
      for (auto& [name, v] : known->fields) fp.fields.insert_or_assign(name, v);
      return;
    }
  }
  auto gpu = std::make_shared<Fingerprint>();
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> gpu_done = done->get_future();
  RunLimits limits = options.limits;
  std::thread worker([gpu, done, limits] {
    probe_gpu(*gpu, limits);
    done->set_value();
  });

  meanwhile();
  if (gpu_done.wait_for(options.limits.timeout + std::chrono::milliseconds(500)) == std::future_status::ready) {
    worker.join();
    if (key) memo.put_gpu(*key, *gpu);
    for (auto& [name, v] : gpu->fields) fp.fields.insert_or_assign(name, v);
  } else {
    worker.detach();
    std::string why = "gpu probe timed out after " + std::to_string(options.limits.timeout.count()) + " ms";
    for (std::string_view f : {field::gpu_vendor, field::gpu_count, field::gpu_name, field::gpu_arch, field::gpu_sm_count,
                               field::gpu_warp_size, field::gpu_driver}) {
      fp.absent(f, why);
    }
  }
}

}  // namespace

Fingerprint probe_machine(const ProbeOptions& options, std::string* memo_status) {
  Fingerprint fp;
  ProbeMemo memo(options.memo_file);
  probe_gpu_fields(fp, options, memo, [&] {
    probe_host(fp);
    probe_env(fp, options.dirs);
    std::string triton_site = probe_python(fp, python_of(options), options.limits, memo);
    probe_ptxas(fp, triton_site, options.limits, memo);
  });
  memo.save();
  if (memo_status) *memo_status = memo.python_status;
  return fp;
}

Fingerprint probe_local(const std::string& python, const std::vector<CacheDir>& dirs, std::string* memo_status) {
  ProbeOptions options;
  options.python = python;
  options.dirs = dirs;
  return probe_machine(options, memo_status);
}

}  // namespace ccpack::probe
