// Relocation of Triton's group files: a restored Triton cache must hit in a folder other than the one it was
// built in.
//
// Triton stores, for each kernel, `<HASH>/__grp__<name>.json` = {"child_paths": {"<file>": "<absolute path>"}},
// and drops any child whose absolute path does not exist, so a Triton cache restored under another folder
// silently misses (measured on an H200: 59.8 s first step relocated, 27.3 s in place, 49.9 s cold). After the
// archive's bytes are checked and before the folder is swapped in, restore rewrites those paths.
//
// The transformation, exactly: in a file F named `__grp__*.json` of a component restored into folder T, each value
// V of the top-level "child_paths" object is considered with R = (F's folder relative to the component root) + "/"
// + (V's last path element). When V is absolute, ends with "/" + R, and R names a file entry of the same component
// in the archive, V becomes T + "/" + R. The folder V was built in is read from V itself, so caches copied
// elsewhere before packing, or imported, relocate the same way. Nothing else changes: other keys and values
// are kept, keys keep their order; the file is written as compact JSON with its mode. A group file that is not
// such JSON is written as packed and counted.
//
// Where: as the extractor writes each group file into the staging folder (unpack/extractor.cpp), after its packed
// bytes are checked against the manifest, so a rewritten file costs no second write, no temporary and no rename.
// (Rewriting them after extraction, read back and renamed over, took 1.1 s of a 3.8 s restore at 100k files,
// 11k group files, on one thread: ext4 flushes a file renamed over another at once.)
#pragma once

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>

#include <nlohmann/json_fwd.hpp>

#include "manifest/manifest.hpp"

namespace ccpack::unpack {

struct RelocationStats {
  std::uint64_t group_files = 0;     // __grp__*.json files seen
  std::uint64_t paths_rewritten = 0;  // child paths moved from the build folder to the target
  std::uint64_t paths_kept = 0;       // child paths left as they were (already there, or not a packed file)
  std::uint64_t files_unparsed = 0;   // group files that are not the expected JSON, left as packed
};

// The group files of component `component` (index in `manifest`), rewritten for their final folder `target`.
// Paths that already point into `target` are kept. rewrite() may be called from several threads at once.
class GroupRelocator {
 public:
  GroupRelocator(const manifest::Manifest& manifest, std::size_t component, const std::filesystem::path& target);

  // Whether manifest entry `entry` is one of the component's group files (a file named __grp__*.json).
  [[nodiscard]] bool handles(std::size_t entry) const;
  // Whether group file `entry` is too large to be read (its manifest size is over 16 MiB, which no Triton group
  // file comes near): it is then written as packed, never held in memory, and counted as unparsed.
  [[nodiscard]] bool skips(std::size_t entry);
  // What to write for group file `entry`, whose packed bytes (already checked) are `packed`: the rewritten JSON, or
  // nullopt to write the packed bytes (nothing to move, or not the expected JSON). Counts into stats().
  [[nodiscard]] std::optional<std::string> rewrite(std::size_t entry, std::string_view packed);
  [[nodiscard]] RelocationStats stats() const;

 private:
  // The files a group file may name lie in its own folder: (folder entry, name) in the compact entry list
  // (manifest/entry_list.hpp) is enough, and no path is copied.
  struct ChildKey {
    std::uint32_t parent;
    std::string_view name;
    bool operator==(const ChildKey&) const = default;
  };
  struct ChildHash {
    std::size_t operator()(const ChildKey& k) const noexcept;
  };
  using FileSet = std::unordered_set<ChildKey, ChildHash>;

  [[nodiscard]] bool rewrite_paths(nlohmann::ordered_json& doc, std::size_t entry, RelocationStats& stats) const;

  manifest::EntryList scratch_;  // a compact copy of an edited list (entries_ may point here)
  const manifest::EntryList* entries_ = nullptr;
  std::string component_;
  std::string to_;  // the target folder, with a trailing '/'
  FileSet files_;   // this component's files
  mutable std::mutex mutex_;
  RelocationStats stats_;
};

}  // namespace ccpack::unpack
