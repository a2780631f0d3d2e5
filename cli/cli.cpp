#include "cli/cli.hpp"

#include <charconv>
#include <cstdio>
#include <limits>

#include "util/error.hpp"
#include "util/escape.hpp"

namespace ccpack::cli {

namespace {

// Names on disk need not be UTF-8, and JSON strings must be: a string or key that is not UTF-8 is written as
// escaped() writes it in messages (bad bytes as \xNN), so every --json report is valid UTF-8.
ojson utf8_only(ojson value) {
  if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    // defence: json-utf8
    if (!is_valid_utf8(text)) return escaped(text);
    return value;
  }
  if (value.is_array()) {
    for (ojson& item : value) item = utf8_only(std::move(item));
    return value;
  }
  if (!value.is_object()) return value;
  ojson out = ojson::object();
  for (auto& [key, item] : value.items()) out[is_valid_utf8(key) ? key : escaped(key)] = utf8_only(std::move(item));
  return out;
}

}  // namespace

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
  out = utf8_only(std::move(out));
  std::printf("%s\n", out.dump(2).c_str());
}

namespace {
ThreadBudget& budget_of_process() {
  static ThreadBudget budget;
  return budget;
}
}  // namespace

const ThreadBudget& thread_budget() { return budget_of_process(); }

const ThreadBudget& size_thread_budget(const CommonOptions& common) {
  budget_of_process() = common.jobs != 0 ? ThreadBudget{common.jobs, "-j"} : cpu_budget();
  return budget_of_process();
}

void add_common(CLI::App* cmd, CommonOptions& common, bool with_json) {
  cmd->add_option("-j,--jobs", common.jobs,
                  "Worker threads (default: the CPUs this process may use: its cgroup CPU quota (cpu.max or "
                  "cpu.cfs_quota_us) rounded up, at most its CPU affinity)")
      ->check(CLI::Range(1u, 1024u));
  cmd->add_flag("-q,--quiet", common.quiet, "Print nothing but errors");
  if (with_json) cmd->add_flag("--json", common.json, "Print the report as JSON on standard output");
}

std::uint64_t count_option(std::string_view option, const std::string& value) {
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  std::uint64_t n = 0;
  const char* end = value.data() + value.size();
  bool digits = !value.empty() && value.find_first_not_of("0123456789") == std::string::npos;
  auto [at, ec] = std::from_chars(value.data(), end, n);
  // defence: count-option-range
  if (!digits || ec != std::errc{} || at != end || n > kMax) {
    throw UsageError(std::string(option) + ": " + quoted_name(value) + " is not a whole number from 0 to " +
                     std::to_string(kMax));
  }
  return n;
}

std::string mb(std::uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return buf;
}

int refused(const Reporter& out, ojson body, const std::string& message) {
  return finish_with(out, std::move(body), ExitCode::refused, message);
}

int finish_with(const Reporter& out, ojson body, ExitCode exit_code, const std::string& message) {
  const int code = static_cast<int>(exit_code);
  if (out.json()) {
    ojson head{{"ok", false}, {"exit_code", code}, {"error", message}};
    for (auto& [key, value] : body.items()) head[key] = std::move(value);
    out.report(std::move(head));
  }
  std::fprintf(stderr, "ccpack: error: %s\n", message.c_str());
  return code;
}

}  // namespace ccpack::cli
