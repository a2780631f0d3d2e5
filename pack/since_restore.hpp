// `ccpack create --since-restore`: a delta, the files a pod's restored cache folders gained since their restore.
//
//   base      each folder's restore marker and entry list (manifest/marker.hpp, manifest/restored_entries.hpp):
//             the folder must have been restored by ccpack, with its list, and every folder from the same archive
//             (its manifest digest is the delta's base);
//   keep      the scan of create, kept to the files and symlinks the list does not hold (what the pod compiled or
//             wrote since), with the folders above them (scanner.hpp: keep_only). Nothing the base covers is
//             read or hashed; a file of the base changed in place is left out (the base keeps its own bytes);
//   pack      create's stages (create.hpp), the manifest's "delta" field naming the base
//             (manifest/delta_record.hpp) and its fingerprint the pod's (the caller's probe).
// The same rule as `ccpack status` (unpack/status.hpp) decides what was added: status counts what this packs.
#pragma once

#include <cstdint>
#include <string>

#include "pack/create.hpp"

namespace ccpack::pack {

struct SinceRestoreResult {
  CreateResult created;
  std::string base_manifest_sha256;  // the archive the folders were restored from
  std::uint64_t base_entries = 0;    // files and symlinks of the base in the folders: left out, changed or not
};

// Throws Error with ExitCode::not_restored naming the folder when one was not restored by ccpack, holds no
// readable entry list, or the folders hold different archives; else what create throws. On a throw the output
// path is untouched.
[[nodiscard]] SinceRestoreResult create_since_restore(CreateRequest request);

}  // namespace ccpack::pack
