// The cosign signature format; the grammar and the rules are in cosign.hpp.
#include "registry/cosign.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
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

// The members of "optional" that containers/image reads, typed as it types them (Go's encoding/json into a string
// and a float64 that must hold an int64; null leaves either unset); the others are not read.
void check_optional(const json& optional, std::string_view what) {
  auto creator = optional.find(std::string(kCreatorKey));
  // defence: cosign-optional-types
  if (creator != optional.end() && !creator->is_null() && !creator->is_string()) bad(what, "optional.creator", "is not a string");
  auto timestamp = optional.find("timestamp");
  if (timestamp == optional.end() || timestamp->is_null()) return;
  bool integral = timestamp->is_number_integer() &&
                  !(timestamp->is_number_unsigned() && timestamp->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX));
  if (timestamp->is_number_float()) {
    double t = timestamp->get<double>();
    integral = t >= -9223372036854775808.0 && t < 9223372036854775808.0 && std::trunc(t) == t;
  }
  // defence: cosign-optional-types
  if (!integral) bad(what, "optional.timestamp", "is not an integer");
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
  if (optional->is_object()) check_optional(*optional, what);
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
  ojson config{{"architecture", ""},
               {"os", ""},
               {"config", ojson::object()},
               {"rootfs", {{"type", "layers"}, {"diff_ids", layer_digests}}}};
  return config.dump();
}

std::optional<IdentityRule> parse_identity_rule(std::string_view text) {
  if (text == "exact") return IdentityRule::exact;
  if (text == "repository") return IdentityRule::repository;
  return std::nullopt;
}

std::optional<std::string> identity_mismatch(std::string_view docker_reference, std::string_view signed_digest,
                                             const oci::Reference& reference, IdentityRule rule) {
  oci::Reference signed_ref;
  try {
    // A docker reference has no scheme; parse_reference would take ccpack's "oci://" off.
    if (oci::is_reference(docker_reference)) throw UsageError("a scheme");
    signed_ref = oci::parse_reference(docker_reference);
  } catch (const Error&) {
    return "its docker-reference '" + escaped(docker_reference, 200) + "' is not a reference";
  }
  const std::string repo = reference.registry + "/" + reference.repository;
  if (signed_ref.registry != reference.registry || signed_ref.repository != reference.repository) {
    return "it names " + signed_ref.registry + "/" + signed_ref.repository + ", not " + repo;
  }
  // A digest reference asks for the repository only: the digest is compared separately.
  if (rule == IdentityRule::repository || reference.tag.empty()) return std::nullopt;
  if (!signed_ref.digest.empty()) {
    if (signed_ref.digest == signed_digest) return std::nullopt;
    return "it names " + repo + "@" + signed_ref.digest + ", not this artifact";
  }
  // parse_reference reads a name alone as ":latest"; containers/image never adds that tag to a signature.
  const bool name_only = !docker_reference.ends_with(":" + signed_ref.tag);
  const std::string wanted = repo + ":" + reference.tag;
  // defence: cosign-identity-exact
  if (name_only || signed_ref.tag != reference.tag) {
    return "it names " + (name_only ? repo + " (no tag)" : repo + ":" + signed_ref.tag) + ", not " + wanted +
           " (--cosign-identity repository accepts any tag of the repository)";
  }
  return std::nullopt;
}

std::vector<SignatureLayer> parse_signature_layers(std::string_view text, std::string_view what) {
  // Ordered, so that a layer written back keeps its keys in the order its writer chose.
  ojson doc = manifest::parse_untrusted<ojson>(text, what, nullptr, oci::kMaxJsonDepth);
  if (!doc.is_object()) throw IntegrityError(std::string(what) + " is not a JSON object");
  auto layers = doc.find("layers");
  if (layers == doc.end() || !layers->is_array()) bad(what, "layers", "is missing or not an array");
  // defence: cosign-layer-count
  if (layers->size() > kMaxSignatureLayers)
    bad(what, "layers", "has more than " + std::to_string(kMaxSignatureLayers) + " entries");
  std::vector<SignatureLayer> out;
  out.reserve(layers->size());
  for (std::size_t i = 0; i < layers->size(); ++i) {
    const ojson& d = (*layers)[i];
    if (!d.is_object()) bad(what, "layers[" + std::to_string(i) + "]", "is not an object");
    SignatureLayer l;
    l.json = d.dump();
    auto get = [&d](const char* key) {
      auto it = d.find(key);
      return it != d.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    l.media_type = get("mediaType");
    l.digest = get("digest");
    if (!oci::parse_digest(l.digest)) l.digest.clear();
    auto size = d.find("size");
    if (size != d.end() && size->is_number_unsigned()) l.size = size->get<std::uint64_t>();
    auto annotations = d.find("annotations");
    if (annotations != d.end() && annotations->is_object()) {
      auto sig = annotations->find(std::string(kSignatureAnnotation));
      if (sig != annotations->end() && sig->is_string()) l.signature = sig->get<std::string>();
    }
    out.push_back(std::move(l));
  }
  return out;
}

SignatureLayer payload_layer(const std::string& payload_digest, std::size_t payload_bytes, const std::string& signature_base64) {
  ojson d{{"mediaType", kPayloadMediaType},
          {"digest", payload_digest},
          {"size", payload_bytes},
          {"annotations", {{kSignatureAnnotation, signature_base64}}}};
  return {d.dump(), std::string(kPayloadMediaType), payload_digest, payload_bytes, signature_base64};
}

std::string signature_manifest_json(const std::vector<SignatureLayer>& layers, const std::string& config_digest,
                                    std::size_t config_bytes) {
  ojson list = ojson::array();
  for (const SignatureLayer& l : layers) list.push_back(ojson::parse(l.json));
  ojson m{{"schemaVersion", 2},
          {"mediaType", oci::kImageManifestType},
          {"config", {{"mediaType", oci::kImageConfigType}, {"digest", config_digest}, {"size", config_bytes}}},
          {"layers", list}};
  return m.dump();
}

}  // namespace ccpack::registry::cosign
