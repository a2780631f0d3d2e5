// The delta tag scheme (delta_tags.hpp).
#include "registry/delta_tags.hpp"

#include <algorithm>

#include "util/error.hpp"

namespace ccpack::registry {
namespace {

constexpr std::size_t kMaxTag = 128;  // the distribution spec's bound on a tag

bool lower_hex(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

}  // namespace

std::string delta_tag(std::string_view base_tag, std::string_view delta_manifest_sha256_hex) {
  if (delta_manifest_sha256_hex.size() < kDeltaTagHex || !lower_hex(delta_manifest_sha256_hex.substr(0, kDeltaTagHex))) {
    throw Error("internal: a delta tag needs a hex manifest digest");
  }
  std::string tag =
      std::string(base_tag) + std::string(kDeltaTagInfix) + std::string(delta_manifest_sha256_hex.substr(0, kDeltaTagHex));
  if (tag.size() > kMaxTag) {
    throw UsageError("tag '" + std::string(base_tag) + "' is too long for its delta tags (" + std::to_string(tag.size()) +
                     " characters with '" + std::string(kDeltaTagInfix) + "<12 hex>', at most " + std::to_string(kMaxTag) + ")");
  }
  return tag;
}

bool is_delta_tag_of(std::string_view tag, std::string_view base_tag) {
  std::size_t prefix = base_tag.size() + kDeltaTagInfix.size();
  return tag.size() == prefix + kDeltaTagHex && tag.starts_with(base_tag) &&
         tag.substr(base_tag.size(), kDeltaTagInfix.size()) == kDeltaTagInfix && lower_hex(tag.substr(prefix));
}

std::vector<std::string> delta_tags_of(const std::vector<std::string>& tags, std::string_view base_tag) {
  std::vector<std::string> out;
  for (const std::string& t : tags) {
    if (is_delta_tag_of(t, base_tag)) out.push_back(t);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace ccpack::registry
