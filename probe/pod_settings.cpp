// The tuned settings in a process's environment, and what a pod must export (pod_settings.hpp).
#include "probe/pod_settings.hpp"

#include <algorithm>
#include <cstdlib>

#include "manifest/field_set.hpp"
#include "manifest/tuning_advice.hpp"
#include "probe/probe.hpp"
#include "util/escape.hpp"

namespace ccpack::probe {
namespace {

std::vector<PtxasFile> ptxas_here(const std::string& python) {
  ProbeOptions options;
  options.python = python;
  return ptxas_files(options);
}

std::string torch_version(const std::string& /*python*/) {
  // hurt_by knows no finding today, so no torch version is probed for it; a finding adds the probe here.
  return {};
}

// A name an archive may hand a pod: a plain upper-case setting of Inductor's or Triton's key, never one that names
// a file or folder of the build machine or loads code (paths, plugins).
bool exportable(const std::string& name) {
  if (name.empty() || name.size() > 128) return false;
  if (!std::all_of(name.begin(), name.end(), [](char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }))
    return false;
  if (name.ends_with("_PATH") || name.ends_with("_DIR") || name.ends_with("_HOME") || name.find("PLUGIN") != std::string::npos)
    return false;
  return is_inductor_key_setting(name) || is_triton_key_setting(name);
}

std::vector<std::string> settings_of(const manifest::Fingerprint& fp, std::string_view field) {
  const manifest::FieldValue* v = fp.get(field);
  if (v == nullptr || !v->value || v->value->empty()) return {};
  return manifest::split_entries(manifest::ListSyntax::settings, *v->value);
}

// The archive's ptxas version when TRITON_PTXAS_PATH named it on the build machine; nullopt otherwise.
std::optional<std::string> recorded_ptxas(const manifest::Fingerprint& fp) {
  const manifest::FieldValue* v = fp.get(manifest::field::ptxas_version);
  if (v == nullptr || !v->value || v->source.find(manifest::kPtxasFromEnv) == std::string::npos) return std::nullopt;
  return *v->value;
}

void add_key_settings(const manifest::Manifest& archive, PodEnvironment& env) {
  for (std::string_view field : {manifest::field::env_inductor, manifest::field::env_triton}) {
    for (const std::string& entry : settings_of(archive.fingerprint, field)) {
      std::size_t eq = entry.find('=');
      std::string name = entry.substr(0, eq);
      // defence: env-plain-settings
      if (eq == std::string::npos || !exportable(name)) {
        env.notes.push_back("not exported: " + escaped(name, 128) + " from the archive's " + std::string(field) +
                            " (not a plain setting: set it yourself if the pod needs it)");
        continue;
      }
      env.variables.push_back({name, entry.substr(eq + 1), "cache key"});
    }
  }
}

void add_ptxas(const manifest::Manifest& archive, const std::string& python, PodEnvironment& env) {
  std::optional<std::string> version = recorded_ptxas(archive.fingerprint);
  if (!version) return;
  std::vector<PtxasFile> files = ptxas_here(python);
  auto it = std::find_if(files.begin(), files.end(), [&](const PtxasFile& f) { return f.version == *version; });
  if (it == files.end()) {
    std::string seen;
    for (const PtxasFile& f : files) seen += (seen.empty() ? "" : ", ") + f.from + " " + f.version;
    env.notes.push_back("no ptxas " + *version + " on this machine (found: " + (seen.empty() ? "none" : seen) +
                        "): every Triton kernel will miss; set TRITON_PTXAS_PATH to a ptxas " + *version);
    return;
  }
  env.variables.push_back({std::string(manifest::kPtxasVariable), it->path, "ptxas " + *version});
}

}  // namespace

manifest::TuningRecord apply_tuned_settings(const std::string& python, bool off) {
  manifest::TuningRecord record;
  if (off) {
    record.skipped.emplace_back("all: --no-tuned-settings");
    return record;
  }
  std::string torch = torch_version(python);
  for (const manifest::TunedSetting& s : manifest::kTunedSettings) {
    std::string name(s.name);
    if (const char* own = std::getenv(name.c_str()); own && *own) {
      record.kept.push_back(name + "=" + own);
      continue;
    }
    if (std::optional<std::string> why = manifest::hurt_by(s, torch)) {
      record.skipped.push_back(name + ": " + *why);
      continue;
    }
    std::string value(s.value);
    if (value.empty()) {
      std::vector<PtxasFile> files = ptxas_here(python);
      if (files.empty()) {
        record.skipped.push_back(
            name + ": no ptxas found (torch's bin/ptxas, Triton's bundled one, $CUDA_HOME/bin, /usr/local/cuda/bin)");
        continue;
      }
      value = files.front().path;
    }
    ::setenv(name.c_str(), value.c_str(), 1);
    record.applied.push_back(name + "=");
    record.applied.back() += value;
  }
  return record;
}

PodEnvironment pod_environment(const manifest::Manifest& archive, const std::vector<manifest::CacheDir>& dirs,
                               const std::string& python) {
  PodEnvironment env;
  std::vector<manifest::CacheDir> used;  // the folders of the archive's components
  for (const manifest::Component& c : archive.components) {
    for (const manifest::CacheDir& d : dirs) {
      if (d.kind == c.kind) used.push_back(d);
    }
  }
  env.variables = folder_variables(used);
  add_key_settings(archive, env);
  add_ptxas(archive, python, env);
  // Speed only: a value the pod set is its own choice, kept.
  const char* own_threads = std::getenv(std::string(manifest::kPodCompileThreads.name).c_str());
  if (archive.settle && archive.settle->tuning && !archive.settle->tuning->applied.empty() &&
      (own_threads == nullptr || *own_threads == '\0')) {
    env.variables.push_back(
        {std::string(manifest::kPodCompileThreads.name), std::string(manifest::kPodCompileThreads.value), "pod"});
  }
  return env;
}

std::vector<PodVariable> folder_variables(const std::vector<manifest::CacheDir>& dirs) {
  std::vector<PodVariable> out;
  for (const manifest::CacheDir& d : dirs) {
    if (const char* var = manifest::folder_variable(d.kind)) out.push_back({var, d.dir.string(), "folder"});
  }
  return out;
}

void set_in_process(const PodEnvironment& env) {
  for (const PodVariable& v : env.variables) ::setenv(v.name.c_str(), v.value.c_str(), 1);
}

}  // namespace ccpack::probe
