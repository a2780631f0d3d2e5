// The settings a cache is warmed and served with, in a process's environment (docs/TUNING.md).
//
// create --settle sets ccpack's tuned settings (manifest/tuning_advice.hpp's kTunedSettings) in its own environment
// before it probes and runs anything, so the warm-up, every settle run and the recorded fingerprint see the same;
// what it set, kept or skipped goes into the manifest's settle record. A pod needs what the archive recorded:
// `ccpack env` prints it as `export` lines, `ccpack run` sets it before its restore probes the machine (so the
// restore judges the process the command will be) and then executes the command. What a pod gets:
//   folders     TORCHINDUCTOR_CACHE_DIR / TRITON_CACHE_DIR: the folders the restore fills
//   key         every entry of the archive's env.inductor and env.triton (they enter the cache keys: a pod without
//               them misses every entry), except a name that is no plain setting (a path, a plugin: never taken
//               from an archive)
//   ptxas       TRITON_PTXAS_PATH when the warm-up had one: a file of the recorded ptxas version on this machine
//   pod         TORCHINDUCTOR_COMPILE_THREADS=1 for an archive made with the tuned settings, unless the pod set its
//               own (no key: speed only)
// Both sides probe this machine (its ptxas files) and know the cache-key settings (probe_env's), so they live here.
#pragma once

#include <string>
#include <vector>

#include "manifest/cache_dir.hpp"
#include "manifest/manifest.hpp"
#include "manifest/settle_record.hpp"

namespace ccpack::probe {

// create --settle: sets every tuned setting in this process's environment that the user did not set (kept) and no
// known finding rules out (skipped, with why); `off` (--no-tuned-settings) sets none. Returns what was done.
[[nodiscard]] manifest::TuningRecord apply_tuned_settings(const std::string& python, bool off);

struct PodVariable {
  std::string name;
  std::string value;
  std::string why;  // "folder", "cache key", "ptxas 13.0.88", "pod"
};
struct PodEnvironment {
  std::vector<PodVariable> variables;  // in the order above
  std::vector<std::string> notes;      // what could not be given ("no ptxas 12.8.93 here: ...")
};

// What a pod must export to use `archive` restored into `dirs` (resolved as restore resolves them). `python`: the
// interpreter whose torch and triton hold the ptxas candidates.
[[nodiscard]] PodEnvironment pod_environment(const manifest::Manifest& archive, const std::vector<manifest::CacheDir>& dirs,
                                             const std::string& python);
// TORCHINDUCTOR_CACHE_DIR / TRITON_CACHE_DIR (manifest::folder_variable) for each of `dirs` that has one.
[[nodiscard]] std::vector<PodVariable> folder_variables(const std::vector<manifest::CacheDir>& dirs);
// Sets each variable in this process's environment (the command `run` executes inherits it).
void set_in_process(const PodEnvironment& env);

}  // namespace ccpack::probe
