// The fingerprint options `check`, `restore`, `create`, `fingerprint` and `status` share: --python (the interpreter
// whose packages the probe reads) and --ignore (a field whose difference is accepted, checked against the table).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace ccpack::cli {

// --python PATH (the interpreter the pod runs; default $CCPACK_PYTHON, else python3).
void add_python_option(CLI::App* cmd, std::string& python);
// --ignore FIELD (repeatable).
void add_ignore_option(CLI::App* cmd, std::vector<std::string>& ignored);
// Throws UsageError for a name that is not a fingerprint field.
void check_ignored(const std::vector<std::string>& ignored);

}  // namespace ccpack::cli
