// The one lock that `restore` and `purge` share, so a purge never runs while a restore swaps the same folders.
//
// What is locked: the parent folder P of each cache folder T, with flock() on a descriptor of P itself. Not T,
// because restore replaces T by a rename (a lock on T would stay on the old folder), and not a lock file, because
// a lock file would be left behind (and `purge` removes *.lock files). Concurrent restores and purges of the same
// folders queue here: a restore waits as long as it takes; a purge waits up to a bounded time, then gives up with
// an error. Each folder is locked once, in path order, so two processes with overlapping sets cannot deadlock.
// flock locks belong to an open file description: a process that holds them must not take them again (it would
// wait for itself), so the restore runs its purge through purge_locked (purge.hpp) inside its own locks.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

#include "util/fs.hpp"

namespace ccpack::unpack {

struct LockWait {
  std::optional<std::chrono::milliseconds> timeout;  // nullopt: wait as long as it takes
  // Called once for a folder another process holds, before waiting for it (a message, a test's signal).
  std::function<void(const std::filesystem::path& folder)> on_wait;
};

// The folder a cache folder really is: a cache folder that is a symlink to a folder (say onto a persistent
// volume) is restored and locked where it points. The path is first made manifest::normal_folder.
[[nodiscard]] std::filesystem::path resolve_cache_folder(const std::filesystem::path& dir);

// Locks each of `folders` (duplicates dropped, in path order) and returns the descriptors that hold the locks.
// Throws Error naming the folder when it cannot be opened, or when `wait.timeout` passes while another process
// holds it (nothing stays locked then).
[[nodiscard]] std::vector<UniqueFd> lock_folders(std::vector<std::filesystem::path> folders, const LockWait& wait);

}  // namespace ccpack::unpack
