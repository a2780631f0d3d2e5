// Writing and checking cosign signatures in a registry; see cosign_signatures.hpp.
#include "registry/cosign_signatures.hpp"

#include <algorithm>

#include "registry/cosign.hpp"
#include "util/base64.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"

namespace ccpack::registry {
namespace {

// The signature manifest under `tag`, or an empty one when there is none.
oci::ImageManifest existing_signatures(Session& s, const std::string& tag) {
  std::optional<Document> doc = s.get_manifest(tag);
  if (!doc) return {};
  return oci::parse_image_manifest(doc->bytes, "signature manifest " + s.reference().registry + "/" + s.reference().repository + ":" + tag);
}

// Whether `layer` holds `payload` signed by one of `keys` (the signature that a new one replaces).
bool signed_by_one_of(const oci::Descriptor& layer, const std::string& payload, const std::string& payload_digest,
                      const std::vector<const manifest::PrivateKey*>& keys) {
  if (layer.digest != payload_digest) return false;
  auto it = layer.annotations.find(std::string(cosign::kSignatureAnnotation));
  if (it == layer.annotations.end()) return false;
  std::optional<std::string> sig = base64_decode(it->second);
  if (!sig) return false;
  return std::any_of(keys.begin(), keys.end(), [&](const manifest::PrivateKey* k) { return k->public_key().verify_detached(payload, *sig); });
}

// The payload blob of `layer` (at most kMaxPayloadBytes, announced size checked before), checked against its digest.
std::string fetch_payload(Session& s, const oci::Descriptor& layer, const std::string& manifest_digest) {
  std::string payload;
  (void)s.get_blob(layer.digest, 0, std::nullopt, [&payload, &layer](const char* data, std::size_t size) {
    if (payload.size() + size > cosign::kMaxPayloadBytes) throw IntegrityError("payload " + escaped(layer.digest) + " is longer than announced");
    payload.append(data, size);
  });
  if (payload.size() != layer.size || oci::digest_of(payload) != layer.digest) {
    throw IntegrityError("payload " + layer.digest + " of the cosign signature of " + manifest_digest + " does not match its digest");
  }
  return payload;
}

// The first trusted key that verifies `signature` over `payload`, or null.
const manifest::PublicKey* signer_of(const std::string& payload, const std::string& signature, const manifest::TrustStore& trust) {
  for (const manifest::PublicKey* key : trust.keys()) {
    // defence: cosign-key
    if (key->verify_detached(payload, signature)) return key;
  }
  return nullptr;
}

// Whether layer `i` of the signature manifest passes; else why not, in `problem`.
std::string check_layer(Session& s, const oci::Descriptor& layer, const std::string& manifest_digest, const oci::Reference& ref,
                        const manifest::TrustStore& trust, std::string& problem) {
  if (layer.media_type != cosign::kPayloadMediaType) {
    problem = "media type '" + escaped(layer.media_type, 120) + "' is not a cosign signature";
    return {};
  }
  auto annotation = layer.annotations.find(std::string(cosign::kSignatureAnnotation));
  std::optional<std::string> decoded;
  if (annotation != layer.annotations.end()) decoded = base64_decode(annotation->second);
  const std::string signature = decoded.value_or("");
  // defence: cosign-annotation
  if (signature.empty()) {
    problem = std::string("annotation ") + std::string(cosign::kSignatureAnnotation) + " is missing or not base64";
    return {};
  }
  if (layer.size > cosign::kMaxPayloadBytes) {
    problem = "payload of " + std::to_string(layer.size) + " bytes is larger than " + std::to_string(cosign::kMaxPayloadBytes);
    return {};
  }
  const std::string payload = fetch_payload(s, layer, manifest_digest);
  const manifest::PublicKey* by = signer_of(payload, signature, trust);
  if (by == nullptr) {
    problem = "signed by no trusted key";
    return {};
  }
  cosign::Payload p;
  std::string malformed;
  try {
    p = cosign::parse_payload(payload, "payload");
  } catch (const IntegrityError& e) {
    malformed = e.what();
  }
  // defence: cosign-payload
  if (!malformed.empty()) {
    problem = "key " + by->key_id() + " signed a malformed " + malformed;
    return {};
  }
  // defence: cosign-digest
  if (p.manifest_digest != manifest_digest) {
    problem = "key " + by->key_id() + " signed " + p.manifest_digest + ", another artifact";
    return {};
  }
  std::optional<std::string> why = cosign::identity_mismatch(p.docker_reference, ref);
  // defence: cosign-identity
  if (why) {
    problem = "key " + by->key_id() + " signed this digest for another reference: " + *why;
    return {};
  }
  return by->key_id();
}

}  // namespace

CosignAttach attach_cosign_signatures(Session& s, const std::string& manifest_digest, const std::string& docker_reference,
                                      const std::vector<const manifest::PrivateKey*>& keys, const std::string& creator) {
  CosignAttach r;
  r.tag = cosign::signature_tag(manifest_digest);
  const std::string payload = cosign::payload_json({docker_reference, manifest_digest, creator});
  const std::string payload_digest = oci::digest_of(payload);
  oci::ImageManifest m = existing_signatures(s, r.tag);
  std::erase_if(m.layers, [&](const oci::Descriptor& d) { return signed_by_one_of(d, payload, payload_digest, keys); });
  for (const manifest::PrivateKey* key : keys) {
    oci::Descriptor layer{std::string(cosign::kPayloadMediaType), payload_digest, payload.size(), {}, {}};
    layer.annotations.emplace(cosign::kSignatureAnnotation, base64_encode(key->sign_detached(payload)));
    m.layers.push_back(std::move(layer));
    r.key_ids.push_back(key->key_id());
  }
  if (m.layers.size() > oci::kMaxLayers) throw Error("signature manifest " + r.tag + " is full (" + std::to_string(oci::kMaxLayers) + " signatures)");
  if (!s.blob_exists(payload_digest)) s.upload_blob(payload_digest, payload);
  std::vector<std::string> diff_ids;
  for (const oci::Descriptor& d : m.layers) diff_ids.push_back(d.digest);
  const std::string config = cosign::config_json(diff_ids);
  m.config = {std::string(cosign::kConfigMediaType), oci::digest_of(config), config.size(), {}, {}};
  m.artifact_type.clear();
  if (!s.blob_exists(m.config.digest)) s.upload_blob(m.config.digest, config);
  r.manifest_digest = s.put_manifest(r.tag, oci::to_json(m), oci::kImageManifestType);
  r.layers = m.layers.size();
  return r;
}

CosignCheck check_cosign_signatures(Session& s, const std::string& manifest_digest, const oci::Reference& ref,
                                    const manifest::TrustStore& trust) {
  CosignCheck r;
  r.tag = cosign::signature_tag(manifest_digest);
  oci::ImageManifest m;
  try {
    m = existing_signatures(s, r.tag);
  } catch (const IntegrityError& e) {
    r.problems.emplace_back(e.what());
    return r;
  }
  if (m.layers.empty()) r.problems.emplace_back("no signature (the tag is missing or holds no layer)");
  for (std::size_t i = 0; i < m.layers.size() && !r.verified(); ++i) {
    std::string problem;
    r.verified_by = check_layer(s, m.layers[i], manifest_digest, ref, trust, problem);
    if (!r.verified()) r.problems.push_back("layer " + std::to_string(i) + ": " + problem);
  }
  return r;
}

void require_cosign(const CosignCheck& check, const std::string& what) {
  // defence: cosign-gate
  if (check.verified()) return;
  std::string why;
  for (const std::string& p : check.problems) why += (why.empty() ? "" : "; ") + p;
  throw IntegrityError(what + " has no cosign signature by a trusted key (" + check.tag + ": " + why +
                       "); trust the signer's public key with --trust FILE or CCPACK_TRUSTED_KEYS");
}

}  // namespace ccpack::registry
