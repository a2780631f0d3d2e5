// Where deltas live next to their base in a registry: a tag scheme, because Debian's docker-registry 2.8 (and
// other distribution 2.x registries) has no referrers API, while every registry lists tags.
//
//   <tag>.delta-<first 12 hex of the delta's manifest SHA-256>
//
// `push DELTA oci://REG/REPO:TAG --delta` pushes a delta (made by `create --since-restore` from folders restored
// from the archive under TAG) under that tag; `merge oci://REG/REPO:TAG --deltas-from-registry` lists the
// repository's tags (GET /v2/<repo>/tags/list, session.hpp) and takes every tag of that form for TAG. Twelve hex
// digits keep two pods' deltas apart (a clash needs 2^24 deltas of one base to be likely), and the same delta
// pushed twice lands on the same tag. The merge checks each delta's base and fingerprint itself: a tag names, it
// does not vouch. docs/REGISTRY.md documents the scheme.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ccpack::registry {

inline constexpr std::string_view kDeltaTagInfix = ".delta-";
inline constexpr std::size_t kDeltaTagHex = 12;

// The tag of a delta of the archive under `base_tag`; throws UsageError when it would pass the 128 characters a
// tag may have.
[[nodiscard]] std::string delta_tag(std::string_view base_tag, std::string_view delta_manifest_sha256_hex);
// Whether `tag` is a delta tag of `base_tag` (the infix, then exactly 12 lowercase hex digits).
[[nodiscard]] bool is_delta_tag_of(std::string_view tag, std::string_view base_tag);
// The delta tags of `base_tag` among `tags`, sorted.
[[nodiscard]] std::vector<std::string> delta_tags_of(const std::vector<std::string>& tags, std::string_view base_tag);

}  // namespace ccpack::registry
