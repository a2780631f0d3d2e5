// Downloads an archive's payload from a registry frame by frame, each frame's SHA-256 checked (against the
// manifest of the header already fetched and checked) before its bytes are handed on; shared by `pull` and
// `restore oci://`.
//
// The bytes of the frame in transfer are staged in memory (one compressed frame; pack/layout.hpp decides how
// large frames are). Once the frame's hash checks, the frame is handed to `deliver` (pull writes it to its file,
// restore pushes it to the extraction's stream) and the layer's digest is carried on over it; before the last
// frame is handed on, the whole layer must hash to its descriptor's digest. So a consumer only ever sees
// verified frames, and a corrupt or tampered blob stops at its first bad frame (IntegrityError, exit 4).
//
// After a cut (a reset connection, a stall under the low-speed limit, a body that ends early) the transfer
// resumes with Range from the end of the last verified frame and drops what was staged after it: the frame is
// fetched again whole, never spliced from two answers. A registry that ignores Range answers 200 from byte zero;
// the HTTP layer skips to the frame's start, and the resume says so. Each resume is recorded (Resume) and reported
// as it happens; a frame that cannot be fetched within http::Options::max_attempts resumes in a row is an Error.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "manifest/manifest.hpp"
#include "registry/oci.hpp"
#include "registry/session.hpp"
#include "util/sha256.hpp"

namespace ccpack::registry {

struct Resume {
  std::uint64_t cut_at = 0;        // the blob offset the transfer had reached
  std::uint64_t resumed_from = 0;  // the end of the last verified frame (a frame's first byte)
  std::size_t frame = 0;           // the frame that was in transfer, fetched again whole
  std::uint64_t dropped = 0;       // staged bytes dropped (cut_at - resumed_from)
  bool range_ignored = false;      // the answer that was cut ignored Range (a 200 from byte zero, skipped into)
  std::string why;                 // the cut, as the HTTP layer said it
};

// What a fetch did, read by the report after the transfer (the producer runs in another thread).
class FetchLog {
 public:
  void add(const Resume& r);
  [[nodiscard]] std::vector<Resume> resumes() const;

 private:
  mutable std::mutex mutex_;
  std::vector<Resume> resumes_;
};

struct PayloadPlan {
  std::string digest;               // the layer's
  std::uint64_t layer_size = 0;     // header frame + payload
  std::uint64_t payload_start = 0;  // the header frame's size
  std::vector<manifest::Frame> frames;
};

// Hands a verified frame on: its bytes and its offset in the blob.
using FrameSink = std::function<void(const char* data, std::size_t size, std::uint64_t offset)>;
// Told of each resume as it happens (for the log); may be empty.
using ResumeNote = std::function<void(const Resume& r)>;

// The resumes as --json shows them.
[[nodiscard]] nlohmann::ordered_json resumes_json(const FetchLog& log);

// Fetches the payload of `plan` (see above). `layer_hash` has hashed the header frame already. Throws
// IntegrityError (a frame or the layer does not match), Error (network, too many cuts), or what `deliver` throws.
void fetch_payload(registry::Session& session, const PayloadPlan& plan, Sha256& layer_hash, const FrameSink& deliver,
                   FetchLog& log, const ResumeNote& note, const std::atomic<bool>* cancelled = nullptr);

// "cut at byte N in frame K; resumed at byte M, the end of the last verified frame (D bytes dropped)".
[[nodiscard]] std::string describe(const Resume& r);

}  // namespace ccpack::registry
