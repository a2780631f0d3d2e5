// Relocation: a restored cache must hit in a folder other than the one it was built in. Two kinds of file name
// the build folder by absolute path and are rewritten as they are written: Triton's group files (below) and
// Inductor's pickled FX-graph and AOTAutograd entries (unpack/pickle_paths.hpp holds that transformation).
//
// Triton stores, for each kernel, `<HASH>/__grp__<name>.json` = {"child_paths": {"<file>": "<absolute path>"}},
// and drops any child whose absolute path does not exist, so a Triton cache restored under another folder
// silently misses (docs/RELOCATION.md measures it). After the archive's bytes are checked and before the folder
// is swapped in, restore rewrites those paths (PathRelocator).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "manifest/manifest.hpp"
#include "unpack/pickle_paths.hpp"
#include "util/child_map.hpp"

namespace ccpack::unpack {

struct RelocationStats {
  std::uint64_t group_files = 0;             // __grp__*.json files seen
  std::uint64_t paths_rewritten = 0;         // child paths moved from the build folder to the target
  std::uint64_t paths_kept = 0;              // child paths left as they were (already there, or not a packed file)
  std::uint64_t files_unparsed = 0;          // group files that are not the expected JSON, left as packed
  std::uint64_t pickle_files = 0;            // Inductor FX-graph and AOTAutograd entries seen
  std::uint64_t pickle_paths_rewritten = 0;  // str values in them moved from the build folder to the target
  std::uint64_t pickle_files_unparsed = 0;   // entries that are not a pickle this reader takes, left as packed

  RelocationStats& operator+=(const RelocationStats& o);
};

// The path-bearing files of component `component` (index in `manifest`), rewritten for their final folder
// `target`: group files of every component, and for an Inductor component the files below its top-level
// `fxgraph/` and `aotautograd/` folders. Paths that already point into `target` are kept. rewrite() may be
// called from several threads at once.
//
// Where: as the extractor writes each such file into the staging folder (unpack/extractor.cpp), after its packed
// bytes are checked against the manifest, so a rewritten file costs no second write, no temporary and no rename
// (ext4 flushes a file renamed over another at once; docs/PERFORMANCE.md).
class PathRelocator {
 public:
  PathRelocator(const manifest::Manifest& manifest, std::size_t component, const std::filesystem::path& target);

  // Whether manifest entry `entry` is one of the files this relocator rewrites.
  [[nodiscard]] bool handles(std::size_t entry) const;
  // Whether file `entry` is too large to be read (a group file over 16 MiB, which no Triton group file comes
  // near): it is then written as packed, never held in memory, and counted as unparsed.
  [[nodiscard]] bool skips(std::size_t entry);
  // Whether file `entry` is a pickled entry, rewritten as it streams (stream()) when it does not lie whole in
  // one piece of the payload.
  [[nodiscard]] bool streams(std::size_t entry) const;
  // What to write for file `entry`, whose packed bytes (already checked) are `packed`: the rewritten bytes, or
  // nullopt to write the packed bytes (nothing to move, or not the expected form). Counts into stats().
  //
  // A group file, exactly: in a file F named `__grp__*.json` of a component restored into folder T, each value V
  // of the top-level "child_paths" object is considered with R = (F's folder relative to the component root) +
  // "/" + (V's last path element). When V is absolute, ends with "/" + R, and R names a file entry of the same
  // component in the archive, V becomes T + "/" + R. The folder V was built in is read from V itself, so caches
  // copied elsewhere before packing, or imported, relocate the same way. Nothing else changes: other keys and
  // values are kept, keys keep their order; the file is written as compact JSON with its mode. A group file that
  // is not such JSON is written as packed and counted.
  [[nodiscard]] std::optional<std::string> rewrite(std::size_t entry, std::string_view packed);
  // The streaming rewrite of pickled entry `entry`, writing through `write`; streamed() counts its outcome.
  [[nodiscard]] std::unique_ptr<PickleStream> stream(PickleStream::Write write);
  void streamed(const PickleStream& stream, bool rewritten);
  [[nodiscard]] RelocationStats stats() const;

 private:
  [[nodiscard]] bool rewrite_paths(nlohmann::ordered_json& doc, std::size_t entry, RelocationStats& stats) const;
  [[nodiscard]] std::optional<std::string> moved_child(std::uint32_t parent, std::string_view folder,
                                                       std::string_view path) const;
  [[nodiscard]] std::string group_folder(std::size_t entry) const;
  [[nodiscard]] bool is_group(std::size_t entry) const;
  [[nodiscard]] std::optional<std::string> rewrite_group(std::size_t entry, std::string_view packed);
  [[nodiscard]] std::optional<std::string> rewrite_pickle(std::string_view packed);
  [[nodiscard]] bool is_component_file(std::string_view relative);  // a file of this component, by its path in it
  void count(const RelocationStats& one);                           // adds one file's counts to stats(), under the lock

  manifest::EntryList scratch_;  // a compact copy of an edited list (entries_ may point here)
  const manifest::EntryList* entries_ = nullptr;
  std::string component_;
  std::string to_;  // the target folder, with a trailing '/'
  // This component's files (value 0) by (folder entry, name) in the compact entry list (manifest/entry_list.hpp):
  // the files a group file may name lie in its own folder, so that is enough, and no path is copied.
  ChildMap files_;
  std::string source_;               // the folder the component was packed from
  std::vector<bool> pickled_;        // per entry: a file below the component's fxgraph/ or aotautograd/
  std::once_flag file_hashes_once_;  // file_hashes_ is built at the first pickle (most restores have none)
  // (is_component_file may run from several threads: the lookups after call_once only read.)
  std::unordered_set<std::uint64_t> file_hashes_;  // hashes of this component's file paths, relative to its root
  mutable std::mutex mutex_;
  RelocationStats stats_;
};

}  // namespace ccpack::unpack
