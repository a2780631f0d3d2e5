// `ccpack status`: what happened to one cache folder since ccpack restored it.
//
// A restored folder holds the restore's marker (manifest/marker.hpp: which archive, signer, time, the fingerprint
// it was built for) and its entry list (manifest/restored_entries.hpp: every file the archive put there). One walk
// of the folder (readdir only; nothing is hashed unless `verify`) then sorts what the pod has now against the
// list: files added (what missed, grouped as FolderStatus says), files gone, and with `verify` files changed.
//
// The fingerprint comparison (does the archive still fit this machine) is not here: the caller runs
// manifest::compare on the marker's fingerprint, as `check` does on the archive's.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "manifest/cache_dir.hpp"
#include "manifest/marker.hpp"

namespace ccpack::unpack {

enum class FolderState : std::uint8_t {
  restored,       // marker and entry list: everything below is known
  no_entry_list,  // a marker (of an older ccpack, or a list that does not read): which archive, not what was added
  not_restored,   // the folder exists and holds no marker ccpack can read
  absent          // the folder does not exist
};
[[nodiscard]] std::string_view to_string(FolderState state);

struct AddedKernel {
  std::string name;    // "triton_poi_fused_add_0"; the folder's name when no kernel .json is there
  std::string folder;  // relative to the cache folder: "<hash>" or "triton/0/<hash>"
  bool operator==(const AddedKernel&) const = default;
};

// Paths are relative to the cache folder; every list is sorted.
//   - files the archive did not contain: what the pod compiled itself, that is what missed. Grouped:
//       fx_graphs   Inductor FX-graph cache entries (fxgraph/<xx>/<key>/<entry>)
//       kernels     Triton kernel folders with a file the archive did not hold: the triton component's <hash>/
//                   folders and Inductor's triton/<device>/<hash>/, named by the kernel (the stem of the folder's
//                   <kernel>.json, not __grp__*)
//       autotune    Inductor autotune results (*.best_config): autotuning ran again
//       other       anything else (generated code, AOTAutograd entries, launchers, ...)
//   - missing: files the archive put there that are gone (removed by hand or by `ccpack purge`);
//   - modified, with `verify`: files the archive put there whose bytes are not the archive's (SHA-256 against the
//     list); the files a relocating restore rewrites for the folder (unpack/relocate.hpp) are counted, not compared.
// Transient names are not counted: lock files and the top-level locks/ folder, Triton's tmp.pid_* folders and
// ccpack's own reserved names (the same rules as create's scanner).
struct FolderStatus {
  manifest::CacheDir dir;
  FolderState state = FolderState::absent;
  std::optional<manifest::Marker> marker;
  std::uint64_t archive_files = 0;  // entries of the list (files and symlinks)
  std::vector<std::string> fx_graphs;
  std::vector<AddedKernel> kernels;
  std::vector<std::string> autotune;
  std::vector<std::string> other;
  std::vector<std::string> missing;   // in the list, gone now
  std::vector<std::string> modified;  // verify: bytes differ from the list's size or SHA-256
  std::uint64_t unverified = 0;       // verify: files the restore may have rewritten (relocation), not compared
  bool verified = false;

  [[nodiscard]] std::uint64_t added() const { return fx_graphs.size() + kernels.size() + autotune.size() + other.size(); }
};

struct StatusOptions {
  bool verify = false;  // hash every file the archive put there
};

// The status of one cache folder; throws Error only for an I/O failure inside a folder that exists.
[[nodiscard]] FolderStatus folder_status(const manifest::CacheDir& dir, const StatusOptions& options = {});

}  // namespace ccpack::unpack
