// The fuzzers' oracle for escapes: after a restore into a jail, every symlink under a restored component folder
// must resolve inside that folder, the way the kernel resolves it (existing names through the filesystem, a
// dangling rest lexically, as manifest/links.hpp judges it). Any other answer is a finding: the fuzzer aborts.
#pragma once

#include <filesystem>
#include <system_error>

namespace ccpack::fuzz {

inline bool resolves_inside(const std::filesystem::path& link, const std::filesystem::path& root) {
  std::error_code ec;
  std::filesystem::path real = std::filesystem::weakly_canonical(link, ec);
  if (ec) return true;  // ELOOP and the like: the kernel refuses to resolve it, so nothing is reached
  std::filesystem::path rel = real.lexically_relative(std::filesystem::canonical(root));
  return !rel.empty() && *rel.begin() != "..";
}

// Aborts when a symlink under `root` (a restored component folder; absent is fine) resolves outside it.
inline void check_jail(const std::filesystem::path& root) {
  std::error_code ec;
  if (!std::filesystem::is_directory(std::filesystem::symlink_status(root, ec))) return;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    if (e.is_symlink() && !resolves_inside(e.path(), root)) __builtin_trap();  // a resolved escape
  }
}

}  // namespace ccpack::fuzz
