// `ccpack inspect --card`: a Markdown model card of an archive, built only from what the archive records (its
// manifest and fingerprint), never from hand-typed values or from this machine. Where the cache's own kernels
// (fingerprint.triton_targets) and the fingerprint's fields disagree, or the kernels name several targets, the
// card says so; a GPU is named only by the fingerprint's gpu.name, and only when it holds one.
#pragma once

#include <cstdint>
#include <string>

#include "manifest/manifest.hpp"
#include "manifest/signature.hpp"

namespace ccpack::cli {

struct CardInput {
  std::string archive_name;
  std::string manifest_sha256;
  std::uint64_t archive_bytes = 0;
  const manifest::Manifest* manifest = nullptr;  // its fingerprint is what the card describes
  // The header's signature block as recorded (signer, signing time, note); the card says who signed, not whether
  // this machine trusts the signer (`ccpack verify` decides that). nullptr or empty: unsigned.
  const std::vector<manifest::Signature>* signatures = nullptr;
};

// Whether the archive was settled (`create --settle`, manifest/settle_record.hpp), in one line for `inspect`,
// `check` and the card: "settled after 2 settle runs (the last compiled 0 Triton kernels)", "NOT settled ...", or
// "not settled (not tried: made without --settle)"; for a merged archive, that of its base and what was not:
// "base settled after 2 settle runs (...); merged 2 deltas (their additions not settle-tested)".
[[nodiscard]] std::string settle_text(const manifest::Manifest& m);
// What the archive holds besides its create (manifest/delta_record.hpp), in one line for `inspect`, `check` and the
// card: "2 deltas into base 0123456789ab (7 files and symlinks added)", "a delta of archive ...", or "not merged".
[[nodiscard]] std::string merge_text(const manifest::Manifest& m);

// Pure: the same input gives the same bytes.
[[nodiscard]] std::string model_card(const CardInput& in);

}  // namespace ccpack::cli
