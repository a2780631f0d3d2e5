// The registry's archive as a stream for `restore oci://`; see archive_stream.hpp.
#include "registry/archive_stream.hpp"

#include "manifest/manifest.hpp"

namespace ccpack::registry {

ArchiveStream::ArchiveStream(const oci::Reference& reference, SessionOptions options,
                             std::function<void(const std::string&)> warn, bool progress)
    : session_(reference, std::move(options)), warn_(std::move(warn)), progress_(progress) {
  session_.on_fallback = [this](const std::string& line) { warn_(line); };
}

void ArchiveStream::choose(const manifest::Fingerprint& machine, bool single_may_differ) {
  remote_ = select_remote(session_, machine, single_may_differ);
}

manifest::ArchiveHeader ArchiveStream::fetch_header() {
  RemoteHeader h =
      registry::fetch_header(session_, remote_, [this](const char* data, std::size_t size) { layer_hash_.update(data, size); });
  frames_ = h.manifest.frames;
  download_ = std::make_unique<Progress>("download", remote_.layer.size - remote_.header_size, progress_);
  return std::move(h.header);
}

void ArchiveStream::produce(const Push& push, const std::atomic<bool>& cancelled) {
  PayloadPlan plan{remote_.layer.digest, remote_.layer.size, remote_.header_size, frames_};
  fetch_payload(
      session_, plan, layer_hash_,
      [&push, this](const char* data, std::size_t size, std::uint64_t) {
        push(data, size);
        download_->advance(size);
      },
      log_, [this](const Resume& r) { warn_(describe(r)); }, &cancelled);
  download_->finish();  // the line goes before the restore's own report lines
}

void ArchiveStream::finish_progress() {
  if (download_) download_->finish();
}

nlohmann::ordered_json ArchiveStream::json() const {
  return {{"reference", session_.reference().str()},
          {"manifest_digest", remote_.manifest_digest},
          {"layer_digest", remote_.layer.digest},
          {"selection", remote_.selection},
          {"endpoints", session_.endpoint_names()},
          {"served_by", session_.served_by()},
          {"resumes", resumes_json(log_)}};
}

}  // namespace ccpack::registry
