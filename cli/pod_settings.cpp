// The tuned settings in a process's environment, and what a pod must export (pod_settings.hpp).
#include "cli/pod_settings.hpp"

#include <algorithm>
#include <cstdlib>

#include "manifest/field_set.hpp"
#include "manifest/tuning_advice.hpp"
#include "probe/probe.hpp"
#include "util/escape.hpp"

namespace ccpack::cli {
namespace {

std::string joined(const std::vector<std::string>& list) {
  std::string out;
  for (const std::string& s : list) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::vector<probe::PtxasFile> ptxas_here(const std::string& python) {
  probe::ProbeOptions options;
  options.python = python;
  return probe::ptxas_files(options);
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
  return probe::is_inductor_key_setting(name) || probe::is_triton_key_setting(name);
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
  std::vector<probe::PtxasFile> files = ptxas_here(python);
  auto it = std::find_if(files.begin(), files.end(), [&](const probe::PtxasFile& f) { return f.version == *version; });
  if (it == files.end()) {
    std::string seen;
    for (const probe::PtxasFile& f : files) seen += (seen.empty() ? "" : ", ") + f.from + " " + f.version;
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
      std::vector<probe::PtxasFile> files = ptxas_here(python);
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

std::string tuning_line(const manifest::TuningRecord& record) {
  std::string line =
      "tuned settings for the warm-up and its runs: " + (record.applied.empty() ? std::string("none") : joined(record.applied));
  if (!record.kept.empty()) line += "; kept yours: " + joined(record.kept);
  if (!record.skipped.empty()) line += "; not applied: " + joined(record.skipped);
  return line;
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

std::string shell_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string export_lines(const PodEnvironment& env) {
  std::string out;
  for (const std::string& n : env.notes) out += "# " + n + "\n";
  for (const PodVariable& v : env.variables) out += "export " + v.name + "=" + shell_quoted(v.value) + "\n";
  return out;
}

void set_in_process(const PodEnvironment& env) {
  for (const PodVariable& v : env.variables) ::setenv(v.name.c_str(), v.value.c_str(), 1);
}

std::vector<std::string> missing_settings(const manifest::Comparison& fit, bool* only) {
  std::vector<std::string> missing;
  std::string ptxas;  // said last, after the settings
  bool others = false;
  for (const manifest::ComparisonRow& row : fit.rows) {
    bool blocks =
        std::any_of(row.verdicts.begin(), row.verdicts.end(), [](manifest::Verdict v) { return v >= manifest::Verdict::stale; });
    if (!blocks) continue;
    if (row.field == manifest::field::ptxas_version && row.archive) {
      ptxas = std::string(manifest::kPtxasVariable) + "=<a ptxas " + *row.archive + ">";
      continue;
    }
    if (row.field != manifest::field::env_inductor && row.field != manifest::field::env_triton) {
      others = true;
      continue;
    }
    auto entries = [](const std::optional<std::string>& v) {
      return v ? manifest::split_entries(manifest::ListSyntax::settings, *v) : std::vector<std::string>{};
    };
    std::vector<std::string> archive = entries(row.archive);
    std::vector<std::string> here = entries(row.local);
    for (const std::string& e : archive) {
      if (std::find(here.begin(), here.end(), e) == here.end()) missing.push_back(e);
    }
    for (const std::string& e : here) {
      std::string name = e.substr(0, e.find('='));
      bool named =
          std::any_of(archive.begin(), archive.end(), [&](const std::string& a) { return a.substr(0, a.find('=')) == name; });
      if (!named) missing.push_back("unset " + name);
    }
  }
  if (!ptxas.empty()) missing.push_back(ptxas);
  if (only) *only = !others && !missing.empty();
  return missing;
}

std::string settings_clause(const std::vector<std::string>& missing, const std::string& archive) {
  if (missing.empty()) return {};
  std::string list;
  for (const std::string& m : missing) list += (list.empty() ? "" : " ") + m;
  std::string a = escaped(archive, 200);
  return "this process lacks the settings its cache was built with, so every entry would miss: " + list + "; `ccpack run " + a +
         " -- CMD` restores and runs CMD with them, `eval \"$(ccpack env " + a + ")\"` exports them";
}

}  // namespace ccpack::cli
