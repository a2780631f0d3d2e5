// A delta's files as if its pod had restored into the base's build folders, so that deltas compare by what they
// hold, not by where their pods' caches lie.
//
// Why: a pod's Triton group files (`__grp__*.json`) and Inductor pickles name the pod's own cache folders by
// absolute path (restore rewrote them for that folder, and what the pod compiled since names it too). Two pods
// whose folders differ in name compile the same kernel into files that differ only in those paths; compared as
// packed, every such file was a conflict. How: each delta component is extracted through restore's relocation
// (unpack/relocate.hpp: the same rule, the same files) with the base's build folder of that component as its
// target, and the files relocation handles are hashed again as written. The merged archive holds those bytes;
// it records the base's build folders, so a restore of it relocates them for each pod as it does the base's.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string_view>
#include <vector>

#include "manifest/cache_dir.hpp"
#include "manifest/manifest.hpp"
#include "unpack/relocate.hpp"
#include "util/sha256.hpp"

namespace ccpack::converge {

class DeltaFolders {
 public:
  // `delta` must outlive this; `build`: the base's build folders (manifest::build_dirs of the base). A component
  // the base does not have gets no relocator.
  DeltaFolders(const manifest::Manifest& delta, const std::vector<manifest::CacheDir>& build);

  // The relocator for the delta's component `name` (for unpack::StagingTarget), or nullptr.
  [[nodiscard]] unpack::PathRelocator* relocator(std::string_view name) const;
  // Entry `entry` of the delta, extracted under `root` (`root`/<entry path>), as merge compares it: for a file
  // relocation handles, the SHA-256 of the bytes written; for any other entry, the manifest's.
  [[nodiscard]] Digest identity(std::size_t entry, const std::filesystem::path& root) const;
  // What relocation did, all components together.
  [[nodiscard]] unpack::RelocationStats stats() const;

 private:
  const manifest::Manifest* delta_;
  std::vector<std::unique_ptr<unpack::PathRelocator>> relocators_;  // by the delta's component index
};

}  // namespace ccpack::converge
