// `restore oci://REF`'s source: an ArchiveStream (archive_stream.hpp) handed to unpack::restore as the
// unpack::StreamedArchive it reads, so the front end only says "this reference" and the restore runs the stages it
// runs on a file. The archive is chosen for the machine before any folder is touched; its header is fetched under
// the restore's folder locks, after `before_header` (a check of the chosen archive, such as --require-cosign).
#pragma once

#include <functional>

#include "registry/archive_stream.hpp"
#include "unpack/archive_source.hpp"

namespace ccpack::registry {

// `single_may_differ`: a tag's single archive is offered even when it does not fit (select_remote), so that
// --on-mismatch force and purge judge it as they judge a file. `stream` outlives the restore.
[[nodiscard]] unpack::StreamedArchive restore_source(ArchiveStream& stream, bool single_may_differ,
                                                     std::function<void()> before_header);

}  // namespace ccpack::registry
