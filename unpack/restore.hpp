// `ccpack restore` as one call: every stage from an archive's header to its folders, in order.
//
//   header   open the archive from its source (archive_source.hpp): a file, or a stream (a registry's), which is
//            chosen for this machine's fingerprint, then fetched under the install's folder locks; parse its
//            signature block;
//   gate     the trust check on the header, before the manifest is parsed (the caller's HeaderGate);
//   target   the folders (given, or with at_build_paths the manifest's own, checked writable; a file only) and
//            this machine's fingerprint, probed while a file's header is read when the folders are known
//            beforehand (a stream needs it first, to choose);
//   fit      the fingerprint comparison for the components that have a folder, and the policy's decision: refuse
//            (nothing written), force (all restored), or purge (a verdict per component);
//   install  lock, plan, stage, check, swap all or nothing, purge (installer.hpp).
// The front end parses flags, probes through `machine`, and prints what comes back: it never reads a marker or a
// manifest stage itself.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "manifest/cache_dir.hpp"
#include "manifest/fingerprint.hpp"
#include "manifest/policy.hpp"
#include "unpack/archive.hpp"
#include "unpack/archive_source.hpp"
#include "unpack/installer.hpp"

namespace ccpack::unpack {

struct RestoreRequest {
  // The archive, opened here with `gate` run on its header.
  ArchiveSource source;
  Archive::HeaderGate gate;
  // The folders to restore into. With at_build_paths, none are given: each component goes to the folder it was
  // packed from, which must be creatable and writable here (said before anything is written).
  std::vector<manifest::CacheDir> dirs;
  bool at_build_paths = false;
  // This machine's fingerprint for those folders (a probe, or a file a pod wrote).
  std::function<manifest::Fingerprint(const std::vector<manifest::CacheDir>& dirs)> machine;
  // Called once the machine is known, on the calling thread, before the fit is judged (the front end says what
  // --select replaced).
  std::function<void()> on_machine;
  manifest::OnMismatch policy = manifest::OnMismatch::refuse;
  std::vector<std::string> ignored;  // fingerprint fields accepted whatever they say (--ignore)
  InstallOptions install;            // the install's settings (its run state comes from the stages before it)
  // The gate's report for this archive, filled by `gate` before the manifest is read and read when the markers are
  // written (their signed_by); nullptr: no trusted signer recorded.
  const TrustReport* trust = nullptr;
  // Where the archive came from, as the markers record it for `status`: the archive file's absolute path, or
  // oci://REFERENCE; empty: not recorded.
  std::string origin;
};

struct RestoreResult {
  std::vector<manifest::CacheDir> dirs;  // the folders judged (with at_build_paths: the build folders)
  manifest::Comparison fit;              // the comparison for the components with a folder
  bool refused = false;                  // the fingerprint refuses the archive under the policy: nothing written or purged
  bool purging = false;                  // the policy is purge: report.purged says what was removed
  InstallReport report;                  // empty when refused
  // top_level: the entries were never parsed (a no-op: every folder held this archive already)
  ManifestDepth depth = ManifestDepth::top_level;
  // No manifest byte was read: the top-level fields came from the folders' markers (archive.hpp, MarkedArchive).
  bool top_level_from_markers = false;
};

// Folders that all carry a restore's marker most likely hold this archive already, so the header stage then
// streams the manifest instead of keeping it (archive.hpp: ManifestText::stream); the install reads the markers
// again under its locks and decides.
//
// Throws what the stages throw (Error, IntegrityError, UsageError, or the gate's exception); on a throw no
// target folder has changed. A refusal by the fingerprint is not thrown: it is `refused`, after the whole
// manifest was read and validated (a manifest that fails validation is refused as such, before any verdict).
[[nodiscard]] RestoreResult restore(const RestoreRequest& request);

}  // namespace ccpack::unpack
