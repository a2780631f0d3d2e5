// `restore oci://REF`'s side of the registry: the archive of REF that fits a machine best, its header frame, and
// its payload as a stream of verified frames, with no copy of the archive written anywhere.
//
// Selection and the header frame go as for `pull` (remote_archive.hpp): a machine that fits no archive exits 3
// having read no blob byte; the header is checked against the layer and its annotations. The restore
// (unpack/restore.hpp, through unpack::StreamedArchive) then runs its trust gate on the header and judges the
// signed fingerprint with the full policy of a local file. The payload is produced by fetch_payload
// (payload_fetch.hpp) into the restore's StreamedPayload, so download and extraction overlap; it starts on the
// first payload read, so a restore that finds every folder already restored downloads no more. A cut resumes at
// the end of the last verified frame. On a terminal the one progress line is the download's (compressed bytes of
// the payload, with rate and time left): the extraction follows it.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "manifest/fingerprint.hpp"
#include "manifest/format.hpp"
#include "registry/oci.hpp"
#include "registry/payload_fetch.hpp"
#include "registry/remote_archive.hpp"
#include "registry/session.hpp"
#include "util/progress.hpp"
#include "util/sha256.hpp"

namespace ccpack::registry {

class ArchiveStream {
 public:
  using Push = std::function<void(const char* data, std::size_t size)>;
  // Nothing is fetched yet. `warn` hears of resumes and mirror fallbacks; `progress`: the download's line.
  ArchiveStream(const oci::Reference& reference, SessionOptions options, std::function<void(const std::string&)> warn,
                bool progress);
  ArchiveStream(const ArchiveStream&) = delete;
  ArchiveStream& operator=(const ArchiveStream&) = delete;

  // Chooses the archive for `machine` (`single_may_differ` as for select_remote): the tag's index or manifest only.
  void choose(const manifest::Fingerprint& machine, bool single_may_differ);
  // After choose: fetches and checks the header frame.
  [[nodiscard]] manifest::ArchiveHeader fetch_header();
  // After choose: "archive sha256:... of REF", and the archive offset where the payload starts.
  [[nodiscard]] const std::string& what() const { return remote_.what; }
  [[nodiscard]] std::uint64_t payload_start() const { return remote_.header_size; }
  // After choose: the archive chosen, and the session it came through (a check of the chosen archive before its
  // header is fetched, such as a signature of the registry's own, runs over them).
  [[nodiscard]] const RemoteArchive& chosen() const { return remote_; }
  [[nodiscard]] Session& session() { return session_; }
  // After fetch_header: downloads the payload, handing each verified frame to `push` in order (another thread may call it).
  void produce(const Push& push, const std::atomic<bool>& cancelled);
  // Ends the progress line (before the restore's report lines).
  void finish_progress();
  // The "registry" object of restore's --json report.
  [[nodiscard]] nlohmann::ordered_json json() const;

 private:
  Session session_;
  std::function<void(const std::string&)> warn_;
  bool progress_;
  RemoteArchive remote_;
  std::vector<manifest::Frame> frames_;
  Sha256 layer_hash_;  // the header frame's bytes, then the payload's
  FetchLog log_;
  std::unique_ptr<Progress> download_;
};

}  // namespace ccpack::registry
