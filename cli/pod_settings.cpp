// A pod's settings in words (pod_settings.hpp).
#include "cli/pod_settings.hpp"

#include "util/escape.hpp"

namespace ccpack::cli {

std::string shell_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string export_lines(const probe::PodEnvironment& env) {
  std::string out;
  for (const std::string& n : env.notes) out += "# " + n + "\n";
  for (const probe::PodVariable& v : env.variables) out += "export " + v.name + "=" + shell_quoted(v.value) + "\n";
  return out;
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
