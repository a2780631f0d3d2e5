// `ccpack restore oci://REF`: restore straight from a registry, with no copy of the archive on disk.
//
// Selection and the header frame go as for `pull` (registry/remote_archive.hpp): a machine that fits no archive exits 3
// having read no blob byte, a header whose signature does not verify stops there. The archive is then known by
// its header alone, and `restore` judges its signed fingerprint with the full policy of a local file; its payload
// is a StreamedPayload (unpack/payload_source.hpp) fed by a download thread, so download and extraction overlap. The stream starts on the first payload read: when every
// folder already holds this archive (restore's marker check), nothing more is downloaded. The extractor checks
// every frame and file hash as for a local file. The download hands on only frames whose hash checked, and a cut
// resumes at the end of the last of them (registry/payload_fetch.hpp); any failure leaves the previous cache folders
// as they were (restore's staging and swap). On a terminal the one progress line is the download's (compressed
// bytes of the payload, with rate and time left): the extraction follows it.
#include <fcntl.h>
#include <sys/file.h>

#include <cerrno>

#include "tools/fleet.hpp"
#include "unpack/archive.hpp"
#include "unpack/folder_lock.hpp"
#include "unpack/payload_source.hpp"
#include "util/error.hpp"
#include "util/progress.hpp"

namespace ccpack::tools {
namespace fs = std::filesystem;
namespace oci = registry::oci;

namespace {

// Restores on one machine into the same folders (pods of a node sharing a hostPath volume) fetch one after the
// other: the first one fills the registry's pull-through mirrors, the others find the folders restored and fetch
// the header frame only, from the mirror. A lock file beside the folders (flock; it stays, empty, as the parent's
// folder lock cannot be taken twice by the restore that holds it); nothing is serialised where it cannot be made.
constexpr const char* kFetchLock = ".ccpack-fetch";

UniqueFd fetch_lock(const std::vector<manifest::CacheDir>& dirs, const Reporter& out) {
  if (dirs.empty()) return {};
  fs::path parent = unpack::resolve_cache_folder(dirs[0].dir).parent_path();
  std::error_code ec;
  fs::create_directories(parent, ec);
  UniqueFd fd(::open((parent / kFetchLock).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (!fd.valid()) return {};
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    out.say("another restore on this machine is fetching into " + quoted_path(parent) + ": waiting for it");
    while (::flock(fd.get(), LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  return fd;
}

}  // namespace

bool is_registry_reference(const std::string& text) { return text.starts_with("oci://"); }

RegistryArchive open_from_registry(const std::string& reference, const manifest::Fingerprint& machine, bool single_may_differ,
                                   const RegistryOptions& registry_options, const unpack::Archive::HeaderGate& trust,
                                   const std::vector<manifest::CacheDir>& dirs, const Reporter& reporter) {
  oci::Reference ref = oci::parse_reference(reference);
  RegistryArchive out;
  out.session = std::make_unique<registry::Session>(ref, session_options(registry_options, false, ref));
  registry::Session* s = out.session.get();
  s->on_fallback = [&reporter](const std::string& line) { reporter.warn(line); };
  out.remote = registry::select_remote(*s, machine, single_may_differ);
  out.fetch_lock = fetch_lock(dirs, reporter);
  registry::ResumeNote note = [&reporter](const registry::Resume& r) { reporter.warn(registry::describe(r)); };
  auto layer_hash = std::make_shared<Sha256>();
  registry::RemoteHeader h = registry::fetch_header(*s, out.remote, [layer_hash](const char* data, std::size_t size) { layer_hash->update(data, size); });
  registry::PayloadPlan plan{out.remote.layer.digest, out.remote.layer.size, out.remote.header_size, h.manifest.frames};
  out.log = std::make_shared<registry::FetchLog>();
  out.download = std::make_shared<Progress>("download", plan.layer_size - plan.payload_start, reporter.progress());
  auto produce = [s, plan, layer_hash, log = out.log, note, download = out.download](const unpack::StreamedPayload::Push& push, const std::atomic<bool>& cancelled) {
    registry::fetch_payload(
        *s, plan, *layer_hash,
        [&push, &download](const char* data, std::size_t size, std::uint64_t) {
          push(data, size);
          download->advance(size);
        },
        *log, note, &cancelled);
    download->finish();  // the line goes before the restore's own report lines
  };
  auto payload = std::make_shared<unpack::StreamedPayload>(plan.payload_start, produce);
  out.archive = unpack::Archive::from_header(out.remote.what, std::move(h.header), payload, trust);
  return out;
}

nlohmann::ordered_json registry_json(const RegistryArchive& r) {
  return {{"reference", r.session->reference().str()},
          {"manifest_digest", r.remote.manifest_digest},
          {"layer_digest", r.remote.layer.digest},
          {"selection", r.remote.selection},
          {"endpoints", r.session->endpoint_names()},
          {"served_by", r.session->served_by()},
          {"resumes", registry::resumes_json(*r.log)}};
}

}  // namespace ccpack::tools
