// OCI referrers: the API and the tag-schema fallback; see referrers.hpp.
#include "registry/referrers.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "manifest/json_guard.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"

namespace ccpack::registry::referrers {
namespace {

using rjson = nlohmann::ordered_json;

[[noreturn]] void index_field(std::string_view what, const std::string& field, const std::string& why) {
  throw IntegrityError(std::string(what) + ": field '" + field + "' " + why);
}

std::string string_member(const rjson& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::string fallback_tag(std::string_view subject_digest) {
  if (!oci::parse_digest(subject_digest)) throw IntegrityError("'" + escaped(subject_digest, 120) + "' is not a sha256 digest");
  return "sha256-" + std::string(subject_digest.substr(7));
}

std::vector<Entry> parse_index(std::string_view text, std::string_view what) {
  rjson doc = manifest::parse_untrusted<rjson>(text, what, nullptr, oci::kMaxJsonDepth);
  if (!doc.is_object()) throw IntegrityError(std::string(what) + " is not a JSON object");
  auto manifests = doc.find("manifests");
  if (manifests == doc.end() || !manifests->is_array()) index_field(what, "manifests", "is missing or not an array");
  // defence: referrers-count
  if (manifests->size() > kMaxReferrers)
    index_field(what, "manifests", "has more than " + std::to_string(kMaxReferrers) + " entries");
  std::vector<Entry> out;
  out.reserve(manifests->size());
  for (std::size_t i = 0; i < manifests->size(); ++i) {
    const rjson& d = (*manifests)[i];
    if (!d.is_object()) index_field(what, "manifests[" + std::to_string(i) + "]", "is not an object");
    Entry e;
    e.json = d.dump();
    e.media_type = string_member(d, "mediaType");
    e.digest = string_member(d, "digest");
    if (!oci::parse_digest(e.digest)) e.digest.clear();
    auto size = d.find("size");
    if (size != d.end() && size->is_number_unsigned()) e.size = size->get<std::uint64_t>();
    e.artifact_type = string_member(d, "artifactType");
    out.push_back(std::move(e));
  }
  return out;
}

std::string index_json(const std::vector<Entry>& entries) {
  rjson list = rjson::array();
  for (const Entry& e : entries) list.push_back(rjson::parse(e.json));
  return rjson{{"schemaVersion", 2}, {"mediaType", oci::kImageIndexType}, {"manifests", list}}.dump();
}

Entry entry_of(const std::string& digest, std::uint64_t size, std::string_view artifact_type) {
  rjson d{{"mediaType", oci::kImageManifestType}, {"digest", digest}, {"size", size}, {"artifactType", artifact_type}};
  return {d.dump(), std::string(oci::kImageManifestType), digest, size, std::string(artifact_type)};
}

Found find(Session& s, const std::string& subject_digest) {
  const std::string repo = s.reference().registry + "/" + s.reference().repository;
  Found f;
  if (std::optional<std::string> api = s.get_referrers(subject_digest)) {
    f.source = "the referrers API";
    f.entries = parse_index(*api, "referrers of " + subject_digest + " in " + repo);
    return f;
  }
  const std::string tag = fallback_tag(subject_digest);
  f.source = "tag " + tag;
  std::optional<Document> doc = s.get_manifest(tag);
  if (!doc) return f;
  if (doc->media_type != oci::kImageIndexType) {
    throw IntegrityError("referrers tag " + repo + ":" + tag + " holds " + escaped(doc->media_type, 120) +
                         ", not an image index");
  }
  f.entries = parse_index(doc->bytes, "referrers index " + repo + ":" + tag);
  return f;
}

void add_to_fallback(Session& s, const std::string& subject_digest, const Entry& entry) {
  const std::string tag = fallback_tag(subject_digest);
  const std::string where = s.reference().registry + "/" + s.reference().repository + ":" + tag;
  std::vector<Entry> entries;
  if (std::optional<Document> doc = s.get_manifest(tag)) {
    if (doc->media_type != oci::kImageIndexType)
      throw Error("referrers tag " + where + " holds " + escaped(doc->media_type, 120) + ", not an image index");
    entries = parse_index(doc->bytes, "referrers index " + where);
  }
  if (std::any_of(entries.begin(), entries.end(), [&](const Entry& e) { return e.digest == entry.digest; })) return;
  if (entries.size() >= kMaxReferrers)
    throw Error("referrers index " + where + " is full (" + std::to_string(kMaxReferrers) + " referrers)");
  entries.push_back(entry);
  (void)s.put_manifest(tag, index_json(entries), oci::kImageIndexType);
}

}  // namespace ccpack::registry::referrers
