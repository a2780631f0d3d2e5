#include "tools/cli.hpp"

#include <cstdio>

namespace ccpack::tools {

void Reporter::say(const std::string& line) const {
  if (!quiet_ && !json_) std::fprintf(stderr, "ccpack: %s\n", line.c_str());
}

void Reporter::warn(const std::string& line) const {
  if (!quiet_) std::fprintf(stderr, "ccpack: warning: %s\n", line.c_str());
}

void Reporter::alarm(const std::string& line) const { std::fprintf(stderr, "ccpack: warning: %s\n", line.c_str()); }

void Reporter::report(ojson body) const {
  if (!json_) return;
  ojson out{{"ok", true}};
  for (auto& [key, value] : body.items()) out[key] = std::move(value);
  std::printf("%s\n", out.dump(2).c_str());
}

void add_common(CLI::App* cmd, CommonOptions& common, bool with_json) {
  cmd->add_option("-j,--jobs", common.jobs,
                  "Worker threads (default: the CPUs this process may use: its cgroup CPU quota (cpu.max or "
                  "cpu.cfs_quota_us) rounded up, at most its CPU affinity)")
      ->check(CLI::Range(1u, 1024u));
  cmd->add_flag("-q,--quiet", common.quiet, "Print nothing but errors");
  if (with_json) cmd->add_flag("--json", common.json, "Print the report as JSON on standard output");
}

void add_cache_dirs(CLI::App* cmd, manifest::CacheDirOptions& dirs, std::vector<std::string>& extras, const char* verb) {
  cmd->add_option("--inductor-dir", dirs.inductor_dir,
                  std::string("Inductor cache folder to ") + verb +
                      " (default: $TORCHINDUCTOR_CACHE_DIR, else <tmp>/torchinductor_<user>)");
  cmd->add_option("--triton-dir", dirs.triton_dir,
                  std::string("Triton cache folder to ") + verb +
                      " (default: $TRITON_CACHE_DIR, else <$TRITON_HOME or ~>/.triton/cache)");
  cmd->add_option("--add", extras,
                  std::string("Extra folder to ") + verb + ", as NAME=DIR (repeatable), e.g. ext=~/.cache/torch_extensions")
      ->allow_extra_args(false);  // one NAME=DIR per --add, so `--add x=DIR ARCHIVE` keeps ARCHIVE positional
}

void resolve_extras(manifest::CacheDirOptions& dirs, const std::vector<std::string>& extras) {
  for (const std::string& spec : extras) dirs.extras.push_back(manifest::parse_named_dir(spec));
}

std::string mb(std::uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return buf;
}

}  // namespace ccpack::tools
