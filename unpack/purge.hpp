// Removing stale artifacts from this machine's cache folders: `ccpack purge` and `restore --on-mismatch=purge`.
//
// `purge` walks each folder (no link followed, at most kMaxPurgeEntries entries, kMaxPurgeDepth levels) and asks
// the rules of purge_rules.hpp about what it finds:
//   - the folder's ccpack marker (manifest/marker.hpp): stale -> the whole folder's contents go;
//   - Triton kernel folders: <triton>/<hash>/ and <inductor>/triton/<device>/<hash>/, judged by their .json;
//   - every *.so / *.so.N file: its ELF dynamic section (util/elf.hpp);
//   - *.lock files, tmp.pid_* folders, and ccpack staging folders beside or inside the folder.
// Each stale entry is removed on its own and atomically, under the lock restore takes; an entry a rule cannot
// judge is kept and counted.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "manifest/cache_dir.hpp"
#include "manifest/fingerprint.hpp"
#include "unpack/folder_lock.hpp"
#include "unpack/purge_rules.hpp"

namespace ccpack::unpack {

inline constexpr std::uint64_t kMaxPurgeEntries = 4'000'000;
inline constexpr int kMaxPurgeDepth = 48;

struct PurgeOptions {
  bool dry_run = false;
  // How `purge` waits for the folders' lock (folder_lock.hpp) when a restore or another purge holds it.
  LockWait lock;
};

struct PurgedEntry {
  std::string component;
  std::filesystem::path path;
  PurgeRule rule = PurgeRule::debris;
  std::string reason;
  bool folder = false;
  std::uint64_t files = 0;  // files in it (1 for a file)
  std::uint64_t bytes = 0;
};

struct UnjudgedEntry {
  std::filesystem::path path;
  std::string reason;
};

struct PurgeReport {
  std::vector<PurgedEntry> removed;              // removed, or that would be with dry_run
  std::uint64_t kept_files = 0;                  // files looked at and kept (judged fine or unjudged)
  std::uint64_t unjudged = 0;                    // entries no rule could judge, kept
  std::vector<UnjudgedEntry> unjudged_examples;  // the first few
  bool truncated = false;                        // kMaxPurgeEntries reached: the rest was not looked at
};

// The folders in which a needed library is looked for, after its own RUNPATH/RPATH: LD_LIBRARY_PATH, then
// $CCPACK_LIB_SEARCH_DIRS (colon-separated) when it is set, else the standard folders (/lib, /usr/lib, their
// x86_64/aarch64 multiarch folders, /lib64, /usr/lib64, /usr/local/lib, and the folders /etc/ld.so.conf.d/*.conf
// name); then torch/lib and the nvidia/*/lib folders of the site-packages folders the fingerprint `local` names
// (a process running torch has them loaded already).
[[nodiscard]] std::vector<std::string> library_search_dirs(const manifest::Fingerprint& local);

// Purges `dirs` (each with its component name and kind) for this machine's fingerprint `local`, holding the lock
// restore takes (folder_lock.hpp: the parent of each folder that exists) for the whole walk, the dry run too.
// Throws Error when the lock is not had within options.lock.timeout: nothing is removed then. Under the lock a
// purge never sees a restore's half-swapped folders nor removes its staging folder.
//
// Each stale entry is removed on its own and atomically: a folder is renamed aside to a ccpack staging name
// (manifest/reserved_names.hpp) and then deleted, so a reader sees it whole or not at all and a killed purge leaves
// only debris the next run removes; a file is unlinked. With `dry_run` nothing is touched and the report is the
// same. An entry a rule cannot judge (a .so that is not ELF, a kernel folder without a readable .json, a fact
// absent on this machine) is kept and counted.
[[nodiscard]] PurgeReport purge(const std::vector<manifest::CacheDir>& dirs, const manifest::Fingerprint& local,
                                const PurgeOptions& options);
// The same for a caller that already holds those locks (restore --on-mismatch=purge, installer.hpp: a restore's
// own purge runs inside the restore's lock).
[[nodiscard]] PurgeReport purge_locked(const std::vector<manifest::CacheDir>& dirs, const manifest::Fingerprint& local,
                                       const PurgeOptions& options);

}  // namespace ccpack::unpack
