// How the front end words a pod's settings: `ccpack env`'s export lines, restore --print-env's quoting, and the
// clause restore and check end a refusal with when this process lacks the archive's settings. What a pod gets is
// probe/pod_settings.hpp's; what it lacks, manifest::missing_settings (manifest/policy.hpp).
#pragma once

#include <string>
#include <vector>

#include "probe/pod_settings.hpp"

namespace ccpack::cli {

// `export NAME='VALUE'` lines (values single-quoted for sh), each note as a `# ` line first.
[[nodiscard]] std::string export_lines(const probe::PodEnvironment& env);
// 'text' for sh: single quotes, each ' written as '\''.
[[nodiscard]] std::string shell_quoted(const std::string& text);
// The clause restore and check end a refusal with, from missing_settings' list (empty for an empty list): "this
// process lacks the settings its cache was built with, so every entry would miss: K=V ...; `ccpack run A -- CMD`
// restores and runs CMD with them, `eval "$(ccpack env A)"` exports them".
[[nodiscard]] std::string settings_clause(const std::vector<std::string>& missing, const std::string& archive);

}  // namespace ccpack::cli
