// The two steps every registry download starts with, shared by `pull` and `restore oci://`:
//   1. select_remote: read the tag's index (or manifest) and rank its candidates by the comparison of a local
//      restore (registry/selection.hpp); when none fits, exit 3 listing what is available, and when the best ones
//      differ only in fields this machine does not show, exit 3 naming those fields and how to supply them; no
//      blob byte is requested in either case.
//   2. fetch_header: fetch only the header frame (Range; a 200 answer is cut off), check it with the same reader
//      as a local file (in a memory file sized like the layer) and check that its manifest hashes to the
//      annotation; the caller runs its signature check on the header. The caller judges the *signed* fingerprint (annotations are
//      hints): restore with the full policy of a local file, pull with signed_fit.
#pragma once

#include <cstdint>
#include <string>

#include "http/http.hpp"
#include "manifest/fingerprint.hpp"
#include "manifest/format.hpp"
#include "manifest/manifest.hpp"
#include "registry/oci.hpp"
#include "registry/session.hpp"

namespace ccpack::registry {

struct RemoteArchive {
  std::string manifest_digest;
  std::string index_digest;  // of the index the tag resolved to; "" when the tag names the manifest itself
  registry::oci::ImageManifest manifest;
  registry::oci::Descriptor layer;  // the archive file
  std::string selection;            // described, for reports
  std::uint64_t header_size = 0;    // from the annotation, bounded
  std::string what;                 // "archive sha256:... of host/repo:tag", for messages
};

struct RemoteHeader {
  manifest::ArchiveHeader header;
  manifest::Manifest manifest;  // parsed from the header (frames included)
};

// `single_may_differ`: a tag that names one archive (no index) is chosen even when its annotations do not fit,
// so that --on-mismatch=force or purge judge it as they judge a file; an index never offers an archive that
// does not fit.
[[nodiscard]] RemoteArchive select_remote(registry::Session& session, const manifest::Fingerprint& machine,
                                          bool single_may_differ);

// `also` sees the header bytes as they arrive (pull writes them to its file); may be empty.
[[nodiscard]] RemoteHeader fetch_header(registry::Session& session, const RemoteArchive& remote, const http::Sink& also);

// pull: exit 3 (Error) when the archive's signed fingerprint makes any component stale or refused here.
void require_signed_fit(const RemoteArchive& remote, const RemoteHeader& header, const manifest::Fingerprint& machine);

}  // namespace ccpack::registry
