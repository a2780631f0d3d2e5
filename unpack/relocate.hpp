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
// are kept, keys keep their order; the file is written back as compact JSON with the same mode, through a
// temporary and a rename inside the staging folder. A group file that is not such JSON is left as packed and
// counted. The rewritten file is read back and compared with what was written, before the swap.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "manifest/manifest.hpp"

namespace ccpack::unpack {

struct RelocationStats {
  std::uint64_t group_files = 0;     // __grp__*.json files seen
  std::uint64_t paths_rewritten = 0;  // child paths moved from the build folder to the target
  std::uint64_t paths_kept = 0;       // child paths left as they were (already there, or not a packed file)
  std::uint64_t files_unparsed = 0;   // group files that are not the expected JSON, left as packed
};

// Rewrites the group files of component `component` (index in `manifest`) extracted under `staging_fd`, for
// their final folder `target`. Paths that already point into `target` are kept. Throws Error on I/O.
RelocationStats relocate_group_files(const manifest::Manifest& manifest, std::size_t component, int staging_fd,
                                     const std::filesystem::path& target);

}  // namespace ccpack::unpack
