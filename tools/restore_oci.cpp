// `ccpack restore oci://REF`: restore straight from a registry, with no copy of the archive on disk.
//
// Selection and the header frame go as for `pull` (tools/oci_fetch.hpp): a machine that fits no archive exits 3
// having read no blob byte, a header whose signature or signed fingerprint does not fit stops there. The archive
// is then known by its header alone; its payload is a StreamedPayload (unpack/payload_source.hpp) fed by a
// download thread, so download and extraction overlap. The stream starts on the first payload read: when every
// folder already holds this archive (restore's marker check), nothing more is downloaded. The extractor checks
// every frame and file hash as for a local file; a cut connection resumes with Range inside the HTTP layer, and
// any failure leaves the previous cache folders as they were (restore's staging and swap). On a terminal the one
// progress line is the download's (compressed bytes received of the payload, with rate and time left): the
// extraction follows it, so it is what a slow registry makes a user wait for.
#include "tools/fleet.hpp"
#include "tools/oci_fetch.hpp"
#include "unpack/archive.hpp"
#include "unpack/payload_source.hpp"
#include "util/progress.hpp"

namespace ccpack::tools {
namespace oci = manifest::oci;

bool is_registry_reference(const std::string& text) { return text.starts_with("oci://"); }

unpack::RestoreReport restore_from_registry(const std::string& reference, const std::vector<manifest::CacheDir>& dirs,
                                            const unpack::RestoreOptions& options, const RegistryOptions& registry_options,
                                            const unpack::Archive::HeaderGate& trust) {
  oci::Reference ref = oci::parse_reference(reference);
  oci::Selection machine = local_selection(registry_options);
  registry::Session s(ref, session_options(registry_options, false));
  RemoteArchive r = select_remote(s, machine);
  RemoteHeader h = fetch_header(s, r, machine, {});
  std::uint64_t header_size = r.header_size;
  std::uint64_t last = r.layer.size - 1;
  std::string digest = r.layer.digest;
  Progress download("download", last + 1 - header_size, options.progress);
  auto produce = [&s, &download, digest, header_size, last](const unpack::StreamedPayload::Push& push,
                                                            const std::atomic<bool>& cancelled) {
    (void)s.get_blob(
        digest, header_size, last,
        [&push, &download](const char* data, std::size_t size) {
          push(data, size);
          download.advance(size);
        },
        &cancelled);
  };
  auto payload = std::make_shared<unpack::StreamedPayload>(header_size, produce);
  unpack::Archive a = unpack::Archive::from_header(r.what, std::move(h.header), payload, trust);
  unpack::RestoreOptions extracting = options;
  extracting.progress = false;  // one line on the terminal: the download's
  unpack::RestoreReport report = unpack::restore(a, dirs, extracting);
  download.finish();
  return report;  // `a` and `payload` go before `s`: the stream's thread is joined before the session ends
}

}  // namespace ccpack::tools
