// Where the caches live on this machine: the same rules PyTorch and Triton use, and the flags that override
// them, shared by every command that reads or writes the folders (create reads there, restore writes there), so
// both sides agree by construction. Only the front end resolves folders; the libraries take the CacheDir list
// (manifest/cache_dir.hpp) it produces.
//
// Inductor: TORCHINDUCTOR_CACHE_DIR, else <tempdir>/torchinductor_<user> (tempfile.gettempdir(): TMPDIR, then
// /tmp; getpass.getuser(): LOGNAME, USER, LNAME, USERNAME, then the password database).
// Triton: TRITON_CACHE_DIR, else <TRITON_HOME or home>/.triton/cache.
// Flags (--inductor-dir, --triton-dir, --add NAME=DIR) override both. Whatever gives a folder, it is made absolute
// and normal by the one rule, manifest::normal_folder ("/p/ind/" and "/p/x/../ind" are "/p/ind").
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "manifest/cache_dir.hpp"

namespace ccpack::cli {

struct CacheDirOptions {
  std::optional<std::filesystem::path> inductor_dir;
  std::optional<std::filesystem::path> triton_dir;
  std::vector<std::pair<std::string, std::filesystem::path>> extras;  // --add NAME=DIR
};

// The environment variable of a component kind's folder is manifest::folder_variable (manifest/cache_dir.hpp):
// resolving reads it, restore --print-env writes it, settle sets it for its runs.
using manifest::folder_variable;

// Resolves the folders for inductor, triton and every extra. Throws UsageError on a bad extra name or a repeat.
[[nodiscard]] std::vector<manifest::CacheDir> resolve_cache_dirs(const CacheDirOptions& options);

// Parses "NAME=DIR"; throws UsageError naming the value.
[[nodiscard]] std::pair<std::string, std::filesystem::path> parse_named_dir(const std::string& spec);

// --inductor-dir, --triton-dir and --add NAME=DIR; `extras` holds the raw --add values until resolve_extras.
void add_cache_dirs(CLI::App* cmd, CacheDirOptions& dirs, std::vector<std::string>& extras, const char* verb);
void resolve_extras(CacheDirOptions& dirs, const std::vector<std::string>& extras);

}  // namespace ccpack::cli
