// `ccpack restore`'s options and flow, shared with `ccpack run` (restore, then execute a command with the folders
// and settings; cmd_run.cpp), which takes the same flags.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/cache_dirs.hpp"
#include "cli/cli.hpp"
#include "cli/machine.hpp"
#include "cli/registry_options.hpp"
#include "cli/trust_options.hpp"
#include "manifest/manifest.hpp"

namespace ccpack::cli {

struct RestoreOptions {
  CommonOptions common;
  std::filesystem::path archive;
  CacheDirOptions dirs;
  std::vector<std::string> extras;
  bool durable = false;
  bool no_relocate = false;
  bool at_build_paths = false;
  bool print_env = false;
  TrustOptions trust;
  std::string python;
  std::vector<std::string> ignored;
  std::string on_mismatch;  // empty: $CCPACK_ON_MISMATCH, else refuse
  MachineOptions machine;
  RegistryOptions registry;
  bool verbose = false;  // -v: also what needs no action (each component, relocation, --select, unseen GPU fields)
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

// Every flag of restore, the archive argument included; `for_run`: the report lines that restore prints and run
// does not need (--print-env, --json) are left out.
void add_restore_flags(CLI::App* cmd, RestoreOptions& o, bool for_run);
// The restore (restore's whole run): its exit code (0, or 3 when the fingerprint refuses); throws on other failures.
[[nodiscard]] int run_restore(RestoreOptions& o);
// The manifest of the archive the options name, its signature checked as restore checks it (a registry reference:
// the archive a restore would choose here, from its header alone), and the folders the restore would fill.
struct ArchiveForPod {
  manifest::Manifest manifest;
  std::vector<manifest::CacheDir> dirs;
};
[[nodiscard]] ArchiveForPod archive_for_pod(const RestoreOptions& o, const Reporter& out);

}  // namespace ccpack::cli
