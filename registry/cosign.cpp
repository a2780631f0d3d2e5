// The cosign signature format; the grammar and the rules are in cosign.hpp.
#include "registry/cosign.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "manifest/json_guard.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"

namespace ccpack::registry::cosign {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

[[noreturn]] void bad(std::string_view what, const std::string& field, const std::string& why) {
  throw IntegrityError(std::string(what) + ": field '" + field + "' " + why);
}

// The object at `key` of `obj` with exactly the keys `names`, as containers/image's
// ParanoidUnmarshalJSONObjectExactFields demands.
const json& exact_object(const json& obj, const std::string& key, std::initializer_list<std::string_view> names,
                         std::string_view what, const std::string& where) {
  const std::string field = where + key;
  auto it = obj.find(key);
  if (it == obj.end()) bad(what, field, "is missing");
  if (!it->is_object()) bad(what, field, "is not an object");
  for (std::string_view name : names) {
    if (!it->contains(std::string(name))) bad(what, field + "." + std::string(name), "is missing");
  }
  if (it->size() != names.size()) {
    for (const auto& [k, v] : it->items()) {
      if (std::find(names.begin(), names.end(), k) == names.end()) bad(what, field + "." + escaped(k, 80), "is not allowed");
    }
  }
  return *it;
}

std::string string_at(const json& obj, const char* key, std::string_view what, const std::string& field) {
  const json& v = obj.at(key);
  if (!v.is_string()) bad(what, field, "is not a string");
  return v.get<std::string>();
}

}  // namespace

std::string signature_tag(std::string_view manifest_digest) {
  if (!oci::parse_digest(manifest_digest)) {
    throw IntegrityError("'" + escaped(manifest_digest, 120) + "' is not a sha256 digest");
  }
  return "sha256-" + std::string(manifest_digest.substr(7)) + std::string(kTagSuffix);
}

std::string payload_json(const Payload& p) {
  ojson critical{{"identity", {{"docker-reference", p.docker_reference}}},
                 {"image", {{"docker-manifest-digest", p.manifest_digest}}},
                 {"type", kSignatureType}};
  ojson optional = p.creator.empty() ? ojson(nullptr) : ojson{{kCreatorKey, p.creator}};
  return ojson{{"critical", critical}, {"optional", optional}}.dump();
}

Payload parse_payload(std::string_view text, std::string_view what) {
  json doc = manifest::parse_untrusted<json>(text, what, nullptr, 8);
  if (!doc.is_object()) throw IntegrityError(std::string(what) + " is not a JSON object");
  for (const auto& [k, v] : doc.items()) {
    if (k != "critical" && k != "optional") bad(what, escaped(k, 80), "is not allowed");
  }
  auto optional = doc.find("optional");
  if (optional == doc.end()) bad(what, "optional", "is missing");
  if (!optional->is_object() && !optional->is_null()) bad(what, "optional", "is not an object or null");
  const json& critical = exact_object(doc, "critical", {"identity", "image", "type"}, what, "");
  if (string_at(critical, "type", what, "critical.type") != kSignatureType) {
    bad(what, "critical.type", "is not '" + std::string(kSignatureType) + "'");
  }
  Payload p;
  const json& image = exact_object(critical, "image", {"docker-manifest-digest"}, what, "critical.");
  p.manifest_digest = string_at(image, "docker-manifest-digest", what, "critical.image.docker-manifest-digest");
  if (!oci::parse_digest(p.manifest_digest)) {
    bad(what, "critical.image.docker-manifest-digest", "is not a sha256 digest: '" + escaped(p.manifest_digest, 120) + "'");
  }
  const json& identity = exact_object(critical, "identity", {"docker-reference"}, what, "critical.");
  p.docker_reference = string_at(identity, "docker-reference", what, "critical.identity.docker-reference");
  return p;
}

std::string config_json(const std::vector<std::string>& layer_digests) {
  ojson config{{"architecture", ""}, {"os", ""}, {"config", ojson::object()},
               {"rootfs", {{"type", "layers"}, {"diff_ids", layer_digests}}}};
  return config.dump();
}

std::optional<std::string> identity_mismatch(std::string_view docker_reference, const oci::Reference& reference) {
  oci::Reference signed_ref;
  try {
    signed_ref = oci::parse_reference(docker_reference);
  } catch (const Error&) {
    return "its docker-reference '" + escaped(docker_reference, 200) + "' is not a reference";
  }
  if (signed_ref.registry == reference.registry && signed_ref.repository == reference.repository) return std::nullopt;
  return "it names " + signed_ref.registry + "/" + signed_ref.repository + ", not " + reference.registry + "/" +
         reference.repository;
}

}  // namespace ccpack::registry::cosign
