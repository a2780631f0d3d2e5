// The --python and --ignore options (fingerprint_options.hpp).
#include "cli/fingerprint_options.hpp"

#include "manifest/policy.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"

namespace ccpack::cli {

void add_python_option(CLI::App* cmd, std::string& python) {
  cmd->add_option("--python", python,
                  "Python interpreter whose packages the fingerprint reads (default: $CCPACK_PYTHON, else python3)");
}

void add_ignore_option(CLI::App* cmd, std::vector<std::string>& ignored) {
  cmd->add_option("--ignore", ignored,
                  "Fingerprint field whose difference is accepted (repeatable; an informed override, e.g. gpu.driver)")
      ->allow_extra_args(false);  // one FIELD per --ignore, so a positional after it stays positional
}

void check_ignored(const std::vector<std::string>& ignored) {
  for (const std::string& name : ignored) {
    if (manifest::find_rule(name) != nullptr) continue;
    std::string known;
    for (const manifest::FieldRule& r : manifest::field_rules()) known += (known.empty() ? "" : ", ") + std::string(r.field);
    throw UsageError("--ignore: '" + escaped(name, 64) + "' is not a fingerprint field (fields: " + known + ")");
  }
}

}  // namespace ccpack::cli
