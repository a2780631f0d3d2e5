#include "cli/cache_dirs.hpp"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>

#include "util/error.hpp"

namespace ccpack::cli {
namespace fs = std::filesystem;
namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

std::string user_name() {
  for (const char* var : {"LOGNAME", "USER", "LNAME", "USERNAME"}) {
    if (auto v = env(var)) return *v;
  }
  if (const passwd* pw = ::getpwuid(::getuid())) return pw->pw_name;
  return std::to_string(::getuid());
}

fs::path home_dir() {
  if (auto v = env("HOME")) return *v;
  if (const passwd* pw = ::getpwuid(::getuid())) return pw->pw_dir;
  return "/";
}

fs::path absolute_normal(const fs::path& p) { return manifest::normal_folder(p); }

}  // namespace

std::pair<std::string, fs::path> parse_named_dir(const std::string& spec) {
  auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
    throw UsageError("--add expects NAME=DIR, got '" + spec + "'");
  }
  std::string name = spec.substr(0, eq);
  if (!manifest::is_valid_component_name(name) || name == "inductor" || name == "triton") {
    throw UsageError("--add name '" + name + "' is not allowed: use 1-64 of A-Z a-z 0-9 _ . - (not 'inductor' or 'triton')");
  }
  return {name, fs::path(spec.substr(eq + 1))};
}

namespace {

// A standard folder: its flag, else its variable, else torch's or Triton's default (computed only when needed).
manifest::CacheDir standard_dir(const char* name, manifest::ComponentKind kind, const std::optional<fs::path>& flag,
                                const char* flag_name, const std::function<fs::path()>& fallback) {
  manifest::CacheDir d{name, kind, {}, {}};
  const char* var = folder_variable(kind);
  if (flag) {
    d.dir = absolute_normal(*flag);
    d.origin = flag_name;
  } else if (auto v = env(var)) {
    d.dir = absolute_normal(*v);
    d.origin = var;
  } else {
    d.dir = absolute_normal(fallback());
    d.origin = "default";
  }
  return d;
}

}  // namespace

std::vector<manifest::CacheDir> resolve_cache_dirs(const CacheDirOptions& options) {
  std::vector<manifest::CacheDir> out;
  out.push_back(standard_dir("inductor", manifest::ComponentKind::inductor, options.inductor_dir, "--inductor-dir",
                             [] { return fs::path(env("TMPDIR").value_or("/tmp")) / ("torchinductor_" + user_name()); }));
  out.push_back(standard_dir("triton", manifest::ComponentKind::triton, options.triton_dir, "--triton-dir",
                             [] { return fs::path(env("TRITON_HOME").value_or(home_dir().string())) / ".triton" / "cache"; }));
  for (const auto& [name, dir] : options.extras) {
    for (const manifest::CacheDir& existing : out) {
      if (existing.name == name) throw UsageError("--add " + name + " is given twice");
    }
    out.push_back(manifest::CacheDir{name, manifest::ComponentKind::extra, absolute_normal(dir), "--add"});
  }
  return out;
}

void add_cache_dirs(CLI::App* cmd, CacheDirOptions& dirs, std::vector<std::string>& extras, const char* verb) {
  cmd->add_option("--inductor-dir", dirs.inductor_dir,
                  std::string("Inductor cache folder to ") + verb + " (default: $" +
                      folder_variable(manifest::ComponentKind::inductor) + ", else <tmp>/torchinductor_<user>)");
  cmd->add_option("--triton-dir", dirs.triton_dir,
                  std::string("Triton cache folder to ") + verb + " (default: $" +
                      folder_variable(manifest::ComponentKind::triton) + ", else <$TRITON_HOME or ~>/.triton/cache)");
  cmd->add_option("--add", extras,
                  std::string("Extra folder to ") + verb + ", as NAME=DIR (repeatable), e.g. ext=~/.cache/torch_extensions")
      ->allow_extra_args(false);  // one NAME=DIR per --add, so `--add x=DIR ARCHIVE` keeps ARCHIVE positional
}

void resolve_extras(CacheDirOptions& dirs, const std::vector<std::string>& extras) {
  for (const std::string& spec : extras) dirs.extras.push_back(parse_named_dir(spec));
}

}  // namespace ccpack::cli
