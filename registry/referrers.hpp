// OCI 1.1 referrers of a manifest: the documents whose `subject` names it (a cosign 3 bundle, an SBOM, an
// attestation), as the distribution spec lists them. Two ways, tried in this order:
//
//   API:     GET /v2/<name>/referrers/<digest> answers 200 with an image index of the referrers' descriptors;
//   fallback (the tag schema, for registries without the API, Debian's docker-registry 2.8 among them):
//            the image index stored under the tag "sha256-<hex of the subject digest>", which every writer
//            updates after pushing a referrer: read it, add its descriptor, put it back (other writers' entries kept
//            as they were, byte for byte). A registry that answers the referrer's PUT with an OCI-Subject header
//            indexes it itself, and then the tag is not written.
//
// An index from either source is untrusted: at most kMaxReferrers entries are read (more is refused, naming the
// field), an entry keeps its JSON as written, and what each entry points at is judged by whoever reads it
// (cosign_bundles.hpp reads the bundles and skips the rest). Entries are not proof of anything: a referrer's own
// manifest must name the subject, which the reader checks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "registry/session.hpp"

namespace ccpack::registry::referrers {

// As many referrers as cosign reads signature layers; an index of more is refused.
inline constexpr std::size_t kMaxReferrers = 1000;

// "sha256-<hex>" for "sha256:<hex>"; throws IntegrityError unless `subject_digest` is a sha256 digest.
[[nodiscard]] std::string fallback_tag(std::string_view subject_digest);

struct Entry {
  std::string json;  // the descriptor as read (compact), written back unchanged
  std::string media_type;
  std::string digest;  // "" unless a sha256 digest
  std::uint64_t size = 0;
  std::string artifact_type;  // "" when absent or not a string
};

// The entries of a referrers index. Throws IntegrityError naming `what` and the field when it is not an object,
// its "manifests" is not an array of objects, or it has more than kMaxReferrers entries.
[[nodiscard]] std::vector<Entry> parse_index(std::string_view json, std::string_view what);
// The index over `entries` (each written as read).
[[nodiscard]] std::string index_json(const std::vector<Entry>& entries);
// The entry ccpack writes for a referrer manifest.
[[nodiscard]] Entry entry_of(const std::string& digest, std::uint64_t size, std::string_view artifact_type);

struct Found {
  std::vector<Entry> entries;
  std::string source;  // "the referrers API" or "tag sha256-<hex>"
};
// The referrers of `subject_digest` in the session's repository: the API's answer when the registry has the API,
// else the fallback tag's index (none when the tag is missing). Throws IntegrityError for an index that does not
// parse, Error for the network.
[[nodiscard]] Found find(Session& session, const std::string& subject_digest);

// Adds `entry` to the fallback tag's index of `subject_digest` (created when missing; an entry of the same digest
// is not added twice). Throws Error when the tag holds something other than an index, or the index is full.
void add_to_fallback(Session& session, const std::string& subject_digest, const Entry& entry);

}  // namespace ccpack::registry::referrers
