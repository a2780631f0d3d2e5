// The gate every delta passes before merge reads a byte of its payload: it is untrusted input (a pod made it), so
// it is opened with every check of a restore's reader and no signature required, and it must be a delta of this
// base made for this base's environment.
//
//   not a delta          no "delta" field: it is a whole cache                          exit 2, `delta` named
//   another base         "delta.base_manifest_sha256" is not the base's digest          exit 3, that field named
//   another environment  its fingerprint does not fit the base's (manifest::compare:     exit 3, `fingerprint.<f>`
//                        a field whose difference makes an archive stale or refused)
// A manifest that does not read (names, links, sizes, counts) is refused by the reader itself, exit 4.
#pragma once

#include <filesystem>

#include "unpack/archive.hpp"

namespace ccpack::converge {

// Opens `path` (whole manifest, validated) and checks it against `base`; throws as above.
[[nodiscard]] unpack::Archive open_delta(const std::filesystem::path& path, const unpack::Archive& base);

}  // namespace ccpack::converge
