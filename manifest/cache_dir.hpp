// A cache folder of one component (its name, kind and absolute path), the unit every library takes: create packs
// the folders it is given and restore writes into them. Where the folders are on a machine is the front end's
// rule (cli/cache_dirs.hpp); the folders an archive was packed from are the manifest's (build_dirs).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "manifest/manifest.hpp"

namespace ccpack::manifest {

struct CacheDir {
  std::string name;
  ComponentKind kind = ComponentKind::extra;
  std::filesystem::path dir;  // absolute
  std::string origin;         // how it was chosen, for messages: "--triton-dir", "TRITON_CACHE_DIR", "default"
};

// The environment variable that points torch or Triton at a component's folder ("TORCHINDUCTOR_CACHE_DIR",
// "TRITON_CACHE_DIR"; nullptr for an extra component): the one map, read by the front end's folder rules and by
// settle, which points its runs at scratch folders through it.
[[nodiscard]] const char* folder_variable(ComponentKind kind);

// The one rule for a folder path as a user or a manifest writes it, applied where a path enters (flags,
// TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR, --add, the manifest's recorded build folders): `.` and `..` are
// resolved lexically (no symlink is followed) and a trailing slash is dropped, so "/p/ind/", "/p/./ind" and
// "/p/x/../ind" are all "/p/ind". The root stays "/". The path is made absolute against the current folder first.
[[nodiscard]] std::filesystem::path normal_folder(const std::filesystem::path& path);

// The folders each component of `manifest` was packed from (restore --at-build-paths). Throws IntegrityError
// when a component does not record an absolute build folder.
[[nodiscard]] std::vector<CacheDir> build_dirs(const Manifest& manifest);

}  // namespace ccpack::manifest
