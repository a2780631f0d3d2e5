// The install's checks before any payload byte is fetched or extracted: a restore that cannot finish should say
// why at once, not after it has downloaded and extracted the whole payload (a non-root pod into a root-owned
// folder, a volume too small).
//
// For each folder a restore will write (its target T, in parent P, where the staging folder goes):
//   - P must be writable by this process (faccessat with the effective ids), and not on a read-only file system;
//   - an existing T must be replaceable: writable by this process (its old content is removed after the swap),
//     and, in a sticky P (/tmp), owned by this process unless it owns P or is root (rename(2)'s rule);
//   - the file system of P must have the space of every component restored onto it (the manifest's byte total)
//     and an inode per file, where it reports inodes (statvfs; f_bavail, f_favail).
// A failure is one Error (exit 1, the code of a folder that cannot be written) naming the folder, who owns it
// and how to fix it ("run as uid N or set fsGroup"), or the size needed and free ("needs N MB, M MB free on P").
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ccpack::unpack {

struct PreflightTarget {
  std::string component;         // "inductor", for messages
  std::filesystem::path target;  // T
  std::filesystem::path parent;  // P (exists: the install created and locked it)
  std::uint64_t bytes = 0;       // what the component's files hold (the manifest's total)
  std::uint64_t files = 0;
};

// Free space of the file system holding a folder: bytes and inodes an unprivileged process may use; inodes
// nullopt where the file system reports none.
struct FreeSpace {
  std::uint64_t bytes = 0;
  std::optional<std::uint64_t> inodes;
};
// statvfs by default; a test passes its own.
using FreeSpaceProbe = std::function<FreeSpace(const std::filesystem::path& folder)>;

// Throws Error (exit 1) when a folder cannot be written or its file system lacks the space.
void preflight(const std::vector<PreflightTarget>& targets, const FreeSpaceProbe& probe = {});

}  // namespace ccpack::unpack
