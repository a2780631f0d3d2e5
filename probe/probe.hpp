// Probing this machine's fingerprint, cheaply and without importing torch (the ccpack_probe library).
// Not contract: the fingerprint's shape is manifest/fingerprint.hpp's; this is the code that runs programs, dlopens
// NVML and reads /sys to fill one in, so that manifest/ stays pure. Each probe fills its fields with a value and its
// source, or with null and the reason it could not tell; none guesses and none can hang start-up (the probes:
// probe_machine below). Parsers of probe output are exposed for the unit tests.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "manifest/cache_dir.hpp"
#include "manifest/fingerprint.hpp"
#include "probe/memo.hpp"
#include "util/subprocess.hpp"

namespace ccpack::probe {

struct ProbeOptions {
  std::string python;                                                          // empty: $CCPACK_PYTHON, else "python3"
  std::vector<CacheDir> dirs;                                                  // the cache folders, for paths.*
  RunLimits limits;                                                            // for each program run
  std::optional<std::filesystem::path> memo_file = ProbeMemo::default_file();  // nullopt: no memo
};

// The whole fingerprint of this machine. Programs run through run_program (hard deadline, bounded output, the
// process group killed on timeout) and the GPU probe runs on a thread that is abandoned past its deadline:
//   host     cpu.arch, os (uname), glibc (gnu_get_libc_version)
//   env      env.* (the cache-key TORCHINDUCTOR_* / TRITON_* settings, ...), world_size, paths.*
//   python   one interpreter call (--python, else $CCPACK_PYTHON, else python3 on PATH), or none when the probe
//            memo (memo.hpp) vouches for its last answer: version, SOABI, sys.path; then, read here on every
//            probe, the site-packages folders and the versions of torch, triton, ck4inductor and the CUDA wheels
//            from the .dist-info folder names on sys.path, and torch/version.py as text for torch.cuda / torch.hip
//   ptxas    $TRITON_PTXAS_PATH or Triton's bundled triton/backends/nvidia/bin/ptxas, `--version` (memoised too)
//   gpu      NVML by dlopen ($CCPACK_NVML_LIBRARY, else libnvidia-ml.so.1), else `nvidia-smi`, else AMD's
//            /sys/class/kfd topology ($CCPACK_SYSFS_ROOT in front of /sys, for tests)
// The python and gpu probes run concurrently. `memo_status` (when given) says how the python probe used the memo.
[[nodiscard]] Fingerprint probe_machine(const ProbeOptions& options, std::string* memo_status = nullptr);

// probe_machine for the interpreter `python` ("" as for ProbeOptions) and the folders `dirs`, with the default
// limits and memo: the fingerprint every command that judges or records this machine probes.
[[nodiscard]] Fingerprint probe_local(const std::string& python, const std::vector<CacheDir>& dirs,
                                      std::string* memo_status = nullptr);
// The interpreter the options name: --python, else $CCPACK_PYTHON, else python3.
[[nodiscard]] std::string python_of(const ProbeOptions& options);

void probe_host(Fingerprint& fp);
void probe_env(Fingerprint& fp, const std::vector<CacheDir>& dirs);
struct Discovery;
// Returns the sys.path folder holding triton (empty when unknown), for the ptxas probe; `found` (when given) gets
// the listing of sys.path.
std::string probe_python(Fingerprint& fp, const std::string& python, const RunLimits& limits, ProbeMemo& memo,
                         Discovery* found = nullptr);
void probe_ptxas(Fingerprint& fp, const std::string& triton_site, const RunLimits& limits, ProbeMemo& memo);

// What the listing of sys.path found (dists.cpp).
struct Discovery {
  std::map<std::string, std::pair<std::string, std::string>, std::less<>> dists;  // name -> version, folder
  std::vector<std::string> site;                                                  // python.site_packages, sorted
  std::optional<std::string> torch_version_py;  // its text, when torch was found and the file read
  std::vector<StartupFile> startup;             // *.pth, sitecustomize, usercustomize, in sys.path order
};
// Everything the interpreter does not report is read in C++, on every probe: each sys.path folder is listed and the
// distribution names and versions come from its .dist-info / .egg-info folder names, the first on sys.path
// winning as it does for an import (names sorted within a folder, so the result never depends on readdir order);
// torch/version.py is read as text (at most 64 KiB): torch is never imported, which would take seconds and
// initialise CUDA. python.site_packages lists the sys.path folders named site-packages or dist-packages and those
// holding a recorded distribution. The listing also collects the start-up files (*.pth, sitecustomize.py,
// usercustomize.py) that the probe memo (memo.hpp) checks before it reuses an interpreter's report.
[[nodiscard]] Discovery discover(const std::vector<std::string>& sys_path);
void probe_gpu(Fingerprint& fp, const RunLimits& limits);
// How the GPU probe says NVML's library could not be loaded ("nvml: libnvidia-ml.so.1 not loadable"): the memo
// keeps the answer "no GPU" only then (memo.cpp put_gpu).
inline constexpr std::string_view kNvmlNotLoadable = " not loadable";
// The key under which the probe memo keeps NVML's answer (gpu_key.cpp): the driver's version file, the GPUs it
// holds, this container's GPU device nodes and the device-choosing variables. Without the NVIDIA driver's /proc
// files ("driver": null) it also holds PATH and the nvidia-smi files on it, /dev/kfd and the KFD topology's nodes:
// under it the memo keeps only the answer that no GPU was found. `root` is put in front of /proc, /dev and /sys
// (tests).
[[nodiscard]] std::optional<nlohmann::json> gpu_memo_key(const std::string& root = "");

// A ptxas on this machine and what `--version` says (ptxas.cpp).
struct PtxasFile {
  std::string path;
  std::string version;
  std::string from;  // "torch's bin/ptxas", "triton's bundled ptxas", "$CUDA_HOME/bin/ptxas", ...
};
// The ptxas files this machine has, in the order a warm-up picks one: $TRITON_PTXAS_PATH, torch's bin/ptxas (what its compile
// workers set TRITON_PTXAS_PATH to), Triton's bundled one, then $CUDA_HOME/bin/ptxas and /usr/local/cuda/bin/ptxas; only
// executable files whose --version is read (memoised as the probe's). `python` as for ProbeOptions.
[[nodiscard]] std::vector<PtxasFile> ptxas_files(const ProbeOptions& options);

// --- parsers (pure; unit-tested) ---
// The JSON the python probe's script prints; nullopt when it is not a JSON object. Untrusted: bounded.
[[nodiscard]] std::optional<InterpreterReport> parse_interpreter_report(std::string_view json);
// The python fields from the interpreter's report and the listing; returns the folder holding triton.
std::string fill_python_fields(const InterpreterReport& interp, const Discovery& found, Fingerprint& fp);
// `cuda = '12.6'`, `hip: Optional[str] = None` lines of torch/version.py -> torch.cuda, torch.hip.
void parse_torch_version_py(std::string_view text, Fingerprint& fp);
// "Cuda compilation tools, release 12.8, V12.8.93" -> "12.8.93"; empty when not found.
[[nodiscard]] std::string parse_ptxas_version(std::string_view out);
// `nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader`; false when unusable.
bool parse_nvidia_smi(std::string_view out, Fingerprint& fp);
// KFD gfx_target_version (90402) -> "gfx942"; empty for 0.
[[nodiscard]] std::string gfx_name(std::uint64_t gfx_target_version);

// The names of the environment variables probe_env reads into env.inductor / env.triton, decided once.
[[nodiscard]] bool is_inductor_key_setting(std::string_view name);
[[nodiscard]] bool is_triton_key_setting(std::string_view name);

}  // namespace ccpack::probe
