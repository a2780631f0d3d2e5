// The install stage of `ccpack restore` (unpack/restore.hpp runs the stages before it): put an archive's
// components into this machine's cache folders, safely and atomically, once the fingerprint has been judged.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "manifest/cache_dir.hpp"
#include "manifest/fingerprint.hpp"
#include "unpack/archive.hpp"
#include "unpack/fault.hpp"
#include "unpack/plan.hpp"
#include "unpack/purge.hpp"
#include "unpack/relocate.hpp"
#include "unpack/trust.hpp"
#include "util/fs.hpp"

namespace ccpack::unpack {

// Settings: what the caller chose, the same for every archive it installs.
struct InstallOptions {
  unsigned jobs = 0;
  bool progress = false;
  bool durable = false;  // one syncfs before the folders are swapped in
  bool relocate = true;  // rewrite Triton's group files for the folders restored into (relocate.hpp)
  // Called when another restore or purge holds a folder's parent, before waiting for it (as long as it takes).
  std::function<void(const std::filesystem::path& folder)> on_lock_wait;
  FaultHook fault;  // test seam (fault.hpp)
};

// Run state: what the stages before the install decided about this archive (unpack/restore.cpp fills it).
struct InstallRun {
  // The fingerprint policy's verdict per manifest component; empty: every component fits.
  std::vector<std::pair<Fit, std::string>> fits;
  // --on-mismatch=purge: the components planned `purge` have their folders purged (purge.hpp) for this machine's
  // fingerprint, inside the restore's locks; nullopt: nothing is purged.
  std::optional<manifest::Fingerprint> purge_for;
  // The trust gate's report for this archive, read when the markers are written (their signed_by). nullptr: no
  // trusted signer recorded.
  const TrustReport* trust = nullptr;
  // The locks of the folders, when the caller already holds them (lock_install_folders, taken before the archive
  // was opened): the install then takes none, as a process must not take its own flock twice (folder_lock.hpp).
  const std::vector<UniqueFd>* held = nullptr;
  // Where the archive came from, for the markers (manifest::Marker::origin); empty: not recorded.
  std::string origin;
};

struct ComponentOutcome {
  std::string name;
  std::filesystem::path dir;
  Action action = Action::skip;
  std::string reason;
  std::uint64_t files = 0;
  std::uint64_t bytes = 0;
  std::filesystem::path build_dir;  // the folder it was packed from (the manifest's component source)
  RelocationStats relocation;       // restored into another folder than build_dir: what was rewritten
};

struct InstallReport {
  std::vector<ComponentOutcome> components;
  PurgeReport purged;  // what the purge of the components planned `purge` removed (InstallRun::purge_for)
  [[nodiscard]] bool noop() const;
};

// Restores every component of `archive` that has a folder in `dirs`. Each target folder is replaced as a whole:
// built in a hidden staging folder beside it, checked, then swapped in. The swaps are all-or-nothing as a set:
// when one fails, those already made are swapped back. Concurrent restores and purges of the same folders
// serialise on a lock of each parent folder (folder_lock.hpp); the later restores find the marker and do nothing.
// When a component is refused nothing is written or purged; otherwise the components planned `purge` are purged
// after the swap, still under the locks. Every run that takes the lock
// removes staging debris left by a killed run. `archive` may be open at ManifestDepth::top_level: the full
// manifest is loaded (Archive::load_full) unless every component is already restored or skipped, so a no-op
// restore costs the same at a million files as at ten. Throws IntegrityError / Error; on error no target has changed.
[[nodiscard]] InstallReport install(Archive& archive, const std::vector<manifest::CacheDir>& dirs, const InstallOptions& options,
                                    const InstallRun& run = {});

// The locks an install of `dirs` takes (the parent folder of each, created when missing), for a caller that needs
// them before it has an archive: a streamed restore fetches its archive under them.
[[nodiscard]] std::vector<UniqueFd> lock_install_folders(const std::vector<manifest::CacheDir>& dirs,
                                                         const std::function<void(const std::filesystem::path&)>& on_wait);

}  // namespace ccpack::unpack
