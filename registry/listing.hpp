// `ccpack ls oci://REF`: what a tag holds, without fetching any archive byte. A tag names either an image index
// (`push --index`: one entry per environment) or one image manifest; each archive is listed with the selection
// annotations it is chosen by (oci.hpp's kSelectionFields), its manifest's digest and the archive layer's digest
// and size. An index entry's manifest is fetched (bounded, checked against the entry's digest and size) for its
// layer; entries that are no ccpack archive are listed as such, not skipped, so the listing shows what a pull
// would choose from and what it would pass over.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "registry/oci.hpp"
#include "registry/session.hpp"

namespace ccpack::registry {

struct ListedArchive {
  std::string manifest_digest;  // the image manifest's
  std::uint64_t manifest_size = 0;
  std::optional<oci::Selection> selection;  // nullopt: the entry carries no selection annotations
  bool ccpack = false;                      // artifactType and layer are a ccpack archive's (or `push --as-image`'s image)
  std::string layer_digest;                 // the archive file (the image's one tar layer for --as-image); "" when not ccpack
  std::uint64_t layer_size = 0;
  std::string media_type;  // the layer's, or the entry's when it is no image manifest
  std::string title;       // org.opencontainers.image.title, "" when absent
};

struct Listing {
  std::string digest;  // of the tag's document
  bool index = false;  // the tag names an index (else one manifest)
  std::vector<ListedArchive> archives;
};

// Throws Error when the reference is not found (exit 1), IntegrityError when a document does not parse or
// does not match its digest or size.
[[nodiscard]] Listing list_archives(Session& session);

}  // namespace ccpack::registry
