// The names in a cache folder that are not compiled output but the moment's state of a writer: create never packs
// them (pack/scanner.cpp, pack/import_source.cpp), status does not count them (unpack/status.cpp), and purge judges
// them as debris by whether their writer still runs (unpack/purge_rules.cpp). One owner for all three.
#pragma once

#include <string_view>

#include "manifest/reserved_names.hpp"

namespace ccpack::manifest {

inline constexpr std::string_view kLockFolder = "locks";           // a folder directly inside a cache folder
inline constexpr std::string_view kTritonTempPrefix = "tmp.pid_";  // Triton's temporary folders: tmp.pid_<pid>_<n>
inline constexpr std::string_view kLockSuffix = ".lock";           // lock files, anywhere

// Why `name` is transient ("lock folder", "Triton temporary folder", "lock file", "ccpack marker or restore
// debris"), or nullptr when it is not. `at_root`: the name is directly inside a cache folder.
[[nodiscard]] inline const char* transient_reason(std::string_view name, bool is_dir, bool at_root) {
  if (is_dir && at_root && name == kLockFolder) return "lock folder";
  if (is_dir && name.starts_with(kTritonTempPrefix)) return "Triton temporary folder";
  if (!is_dir && name.ends_with(kLockSuffix)) return "lock file";
  if (is_reserved_name(name)) return "ccpack marker or restore debris";
  return nullptr;
}

}  // namespace ccpack::manifest
