// The two steps every registry download starts with, shared by `pull` and `restore oci://`:
//   1. select_remote: read the tag's index (or manifest) and choose the entry whose selection annotations equal
//      this machine's; when none fits, exit 3 listing what is available, with no blob byte requested.
//   2. fetch_header: fetch only the header frame (Range; a 200 answer is cut off), check it with the same reader
//      as a local file (in a memory file sized like the layer), check that its manifest hashes to the annotation,
//      run the signature hook, and compare the *signed* fingerprint with this machine (annotations are hints):
//      exit 3 or 4 having read the header only.
#pragma once

#include <cstdint>
#include <string>

#include "manifest/format.hpp"
#include "manifest/oci.hpp"
#include "registry/session.hpp"

namespace ccpack::tools {

struct RemoteArchive {
  std::string manifest_digest;
  manifest::oci::ImageManifest manifest;
  manifest::oci::Descriptor layer;  // the archive file
  std::string selection;            // described, for reports
  std::uint64_t header_size = 0;    // from the annotation, bounded
  std::string what;                 // "archive sha256:... of host/repo:tag", for messages
};

struct RemoteHeader {
  manifest::ArchiveHeader header;
  std::string signature;  // what the signature hook said
};

[[nodiscard]] RemoteArchive select_remote(registry::Session& session, const manifest::oci::Selection& machine);

// `also` sees the header bytes as they arrive (pull writes them to its file); may be empty.
[[nodiscard]] RemoteHeader fetch_header(registry::Session& session, const RemoteArchive& remote,
                                        const manifest::oci::Selection& machine, const http::Sink& also);

}  // namespace ccpack::tools
