// The machine an archive is judged for, by `check`, `restore` (file or oci://) and `pull`: this one as probed, or
// the target a container prepares a volume for.
//
// An init container often sees no GPU (the device plugin gives GPUs only to the containers that ask for them), so
// its probe says "gpu.arch absent". Two options name the target instead:
//   --fingerprint FILE   the fingerprint `ccpack fingerprint --json` wrote on the target machine (default
//                        $CCPACK_FINGERPRINT_FILE); it replaces the probe;
//   --select FIELD=VALUE fills in or overrides one field (repeatable), on top of the probe or the file; with no
//                        --select, $CCPACK_SELECT gives them (FIELD=VALUE entries separated by spaces or commas),
//                        so an init container's image or Helm chart sets them once.
// Each --select is said (a warning line, as an override of what the machine shows) and recorded in --json, with
// what the probe had found.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/cli.hpp"
#include "manifest/cache_dir.hpp"
#include "manifest/fingerprint.hpp"

namespace ccpack::cli {

inline constexpr const char* kSelectVar = "CCPACK_SELECT";

struct MachineOptions {
  std::string fingerprint_file;     // --fingerprint ("" : $CCPACK_FINGERPRINT_FILE, else the probe)
  std::vector<std::string> select;  // --select FIELD=VALUE, as given
};

// --fingerprint FILE and --select FIELD=VALUE.
void add_machine_options(CLI::App* cmd, MachineOptions& options);

struct Selected {
  std::string field;
  std::string value;
  std::optional<std::string> before;  // what the probe or the file said (nullopt: absent)
  std::string before_note;            // its source, or why it was absent
};

struct Machine {
  manifest::Fingerprint fingerprint;
  std::string source;  // "probe" or "file 'PATH'"
  std::vector<Selected> selected;
};

// The FIELD=VALUE selections in effect: the --select flags, else the entries of $CCPACK_SELECT.
[[nodiscard]] std::vector<std::string> selects_of(const MachineOptions& options);

// Checks every --select (a known fingerprint field, a value of printable ASCII, each field once); throws
// UsageError naming the one that is wrong. Run it before anything is probed or fetched.
void check_selects(const MachineOptions& options);

// The fingerprint file named by the options or the environment; "" for none.
[[nodiscard]] std::string fingerprint_file_of(const MachineOptions& options);

// The machine: the file's fingerprint or the probe's (`python`, `dirs` as for probe_local), then the --select
// values. Throws Error naming the file when it cannot be read or parsed.
[[nodiscard]] Machine target_machine(const MachineOptions& options, const std::string& python,
                                     const std::vector<manifest::CacheDir>& dirs);

// One warning line per --select (what it replaced), and the "machine" object of --json reports.
void say_selected(const Reporter& out, const Machine& machine);
[[nodiscard]] ojson machine_json(const Machine& machine);

}  // namespace ccpack::cli
