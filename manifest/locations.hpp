// Where the caches live: the same rules PyTorch and Triton use, shared by create (where to read) and restore
// (where to write), so both sides agree by construction.
//
// Inductor: TORCHINDUCTOR_CACHE_DIR, else <tempdir>/torchinductor_<user> (tempfile.gettempdir(): TMPDIR, then
// /tmp; getpass.getuser(): LOGNAME, USER, LNAME, USERNAME, then the password database).
// Triton: TRITON_CACHE_DIR, else <TRITON_HOME or home>/.triton/cache.
// Flags (--inductor-dir, --triton-dir, --add NAME=DIR) override both.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "manifest/manifest.hpp"

namespace ccpack::manifest {

struct CacheDirOptions {
  std::optional<std::filesystem::path> inductor_dir;
  std::optional<std::filesystem::path> triton_dir;
  std::vector<std::pair<std::string, std::filesystem::path>> extras;  // --add NAME=DIR
};

struct CacheDir {
  std::string name;
  ComponentKind kind = ComponentKind::extra;
  std::filesystem::path dir;  // absolute
  std::string origin;         // how it was chosen, for messages: "--triton-dir", "TRITON_CACHE_DIR", "default"
};

// Resolves the folders for inductor, triton and every extra. Throws UsageError on a bad extra name or a repeat.
[[nodiscard]] std::vector<CacheDir> resolve_cache_dirs(const CacheDirOptions& options);

// The folders each component of `manifest` was packed from (restore --at-build-paths). Throws IntegrityError
// when a component does not record an absolute build folder.
[[nodiscard]] std::vector<CacheDir> build_dirs(const Manifest& manifest);

// Parses "NAME=DIR"; throws UsageError naming the value.
[[nodiscard]] std::pair<std::string, std::filesystem::path> parse_named_dir(const std::string& spec);

}  // namespace ccpack::manifest
