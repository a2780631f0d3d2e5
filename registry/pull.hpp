// `pull`'s flow: one registry archive into one local file, checked before and after, and nothing left on failure.
//
//   1. select_remote (remote_archive.hpp): the tag's index or manifest, ranked against the machine's fingerprint;
//   1b. check_artifact, when set: the registry artifact's own signature (--require-cosign), before any archive byte;
//   2. fetch_header: the header frame alone, checked as a file's header is; its bytes also start the output file;
//   3. require_signed_fit: the signed fingerprint must not make any component stale or refused (exit 3), and the
//      caller's signature check (the trusted keys live in the front end) passes or throws (exit 4), all before any
//      payload byte;
//   4. fetch_payload (payload_fetch.hpp): frame by frame, each frame checked before it is written, a cut resumed at
//      the end of the last verified frame, the whole layer checked against its digest;
//   5. only then the file gets its name (util/fs.hpp AtomicFile): any failure leaves no file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "manifest/fingerprint.hpp"
#include "registry/payload_fetch.hpp"
#include "registry/remote_archive.hpp"
#include "registry/session.hpp"

namespace ccpack::registry {

struct PullRequest {
  std::filesystem::path output;
  manifest::Fingerprint machine;
  // Step 3's fit, and step 1 choosing only what fits (off: a tag of one archive is taken as it is): off for `merge`, which never
  // runs the cache here and judges a delta's fingerprint against its base's itself (converge/delta_gate.hpp).
  bool check_fit = true;
  // Checks the header's signatures against the trusted keys (`what` names the archive for messages); throws to
  // refuse; returns how it was signed.
  std::function<std::string(const manifest::ArchiveHeader&, const std::string& what)> check_signature;
  // Checks the chosen artifact before its header is fetched (a cosign signature, cosign_signatures.hpp); throws to
  // refuse; returns how it was signed. May be empty.
  std::function<std::string(Session&, const RemoteArchive&)> check_artifact;
  // Told how many bytes the layer has, then of each written piece (a progress meter); may be empty.
  std::function<void(std::uint64_t total)> on_start;
  std::function<void(std::size_t bytes)> on_bytes;
  ResumeNote on_resume;  // may be empty
};

struct PullResult {
  RemoteArchive remote;
  std::string signature;  // what check_signature returned
  std::string artifact;   // what check_artifact returned ("" without one)
  FetchLog log;
};

// Steps 1-5 above. Throws Refused (exit 3), IntegrityError (exit 4) or Error; the output is then absent.
void pull(Session& session, const PullRequest& request, PullResult& result);

}  // namespace ccpack::registry
