// The registry archive into a local file; see pull.hpp.
#include "registry/pull.hpp"

#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"

namespace ccpack::registry {

void pull(Session& session, const PullRequest& request, PullResult& result) {
  result.remote = select_remote(session, request.machine, !request.check_fit);
  const RemoteArchive& r = result.remote;
  if (request.check_artifact) result.artifact = request.check_artifact(session, r);
  if (request.on_start) request.on_start(r.layer.size);
  AtomicFile file(request.output);
  std::string where = quoted_path(request.output);
  Sha256 hash;
  std::uint64_t written = 0;
  RemoteHeader h = fetch_header(session, r, [&](const char* data, std::size_t size) {
    pwrite_all(file.fd(), data, size, static_cast<off_t>(written), where);
    hash.update(data, size);
    written += size;
    if (request.on_bytes) request.on_bytes(size);
  });
  if (request.check_fit) require_signed_fit(r, h, request.machine);
  result.signature = request.check_signature(h.header, r.what);
  // Only frames whose hash checked reach the file; the layer's digest is checked before the last one does.
  fetch_payload(
      session, {r.layer.digest, r.layer.size, r.header_size, h.manifest.frames}, hash,
      [&](const char* data, std::size_t size, std::uint64_t offset) {
        pwrite_all(file.fd(), data, size, static_cast<off_t>(offset), where);
        if (request.on_bytes) request.on_bytes(size);
      },
      result.log, request.on_resume);
  file.commit();
}

}  // namespace ccpack::registry
