// Where `restore` reads its archive from: one value, a file or a stream (a registry's), so that unpack::restore
// runs the same stages on both and the front end only says which.
//
// A file is opened by the restore (header, gate, manifest) and read with pread. A stream is an archive known by
// its header alone whose payload arrives while it is extracted (StreamedPayload, payload_source.hpp). The restore
// calls its `choose` with this machine's fingerprint before it touches any folder (a refusal there writes
// nothing), then its `open` once it holds its folder locks (folder_lock.hpp): restores of one machine into the
// same folders therefore fetch one after the other, the later ones finding the folders restored and downloading
// no payload byte. unpack/ knows nothing of registries: registry/archive_stream.hpp supplies the stream of
// `restore oci://`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <variant>

#include "manifest/fingerprint.hpp"
#include "manifest/format.hpp"
#include "unpack/payload_source.hpp"

namespace ccpack::unpack {

// A stream's archive once its header frame is fetched and checked.
struct OpenedStream {
  std::string name;  // stands for the archive's path in messages ("archive sha256:... of REF")
  manifest::ArchiveHeader header;
  std::uint64_t payload_start = 0;    // the archive offset of the payload's first byte (the header frame's size)
  StreamedPayload::Producer produce;  // delivers the payload in order, started on the first read
};

struct StreamedArchive {
  // Chooses the archive for `machine`; nothing of it is read yet. Called first, before any folder is touched.
  std::function<void(const manifest::Fingerprint& machine)> choose;
  // Fetches the chosen archive's header; called once, under the restore's folder locks.
  std::function<OpenedStream()> open;
};

using ArchiveSource = std::variant<std::filesystem::path, StreamedArchive>;

}  // namespace ccpack::unpack
