// Writing and checking cosign signatures in a registry; see cosign_signatures.hpp.
#include "registry/cosign_signatures.hpp"

#include <algorithm>
#include <map>

#include "registry/cosign_bundles.hpp"
#include "util/base64.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"

namespace ccpack::registry {
namespace {

// The layers of the signature manifest under `tag` (none when there is no such tag), and its digest ("" then).
std::vector<cosign::SignatureLayer> existing_signatures(Session& s, const std::string& tag, std::string* digest = nullptr) {
  std::optional<Document> doc = s.get_manifest(tag);
  if (!doc) return {};
  if (digest != nullptr) *digest = doc->digest;
  return cosign::parse_signature_layers(
      doc->bytes, "signature manifest " + s.reference().registry + "/" + s.reference().repository + ":" + tag);
}

// The signature bytes of a layer's annotation: padded standard base64, as cosign and containers/image decode it
// (Go's base64.StdEncoding); nullopt for anything else.
std::optional<std::string> signature_bytes(const std::string& annotation) {
  std::optional<std::string> decoded = base64_decode(annotation);
  // defence: cosign-base64-strict
  if (decoded && !base64_decode_strict(annotation)) decoded.reset();
  if (decoded && decoded->empty()) decoded.reset();
  return decoded;
}

// Whether `layers` holds `payload` signed by `key` already.
bool already_signed(const std::vector<cosign::SignatureLayer>& layers, const std::string& payload,
                    const std::string& payload_digest, const manifest::PrivateKey& key) {
  return std::any_of(layers.begin(), layers.end(), [&](const cosign::SignatureLayer& l) {
    if (l.digest != payload_digest || l.media_type != cosign::kPayloadMediaType || !l.signature) return false;
    std::optional<std::string> sig = signature_bytes(*l.signature);
    return sig && key.public_key().verify_detached(payload, *sig);
  });
}

// The payload blob of `layer` (at most kMaxPayloadBytes, announced size checked before), checked against its digest.
std::string fetch_payload(Session& s, const cosign::SignatureLayer& layer, const std::string& manifest_digest) {
  std::string payload;
  (void)s.get_blob(layer.digest, 0, std::nullopt, [&payload, &layer](const char* data, std::size_t size) {
    if (payload.size() + size > cosign::kMaxPayloadBytes)
      throw IntegrityError("payload " + escaped(layer.digest) + " is longer than announced");
    payload.append(data, size);
  });
  if (payload.size() != layer.size || oci::digest_of(payload) != layer.digest) {
    throw IntegrityError("payload " + layer.digest + " of the cosign signature of " + manifest_digest +
                         " does not match its digest");
  }
  return payload;
}

// The first trusted key that verifies `signature` over `payload`, or null.
const manifest::PublicKey* signer_of(const std::string& payload, const std::string& signature,
                                     const manifest::TrustStore& trust) {
  for (const manifest::PublicKey* key : trust.keys()) {
    // defence: cosign-key
    if (key->verify_detached(payload, signature)) return key;
  }
  return nullptr;
}

// One signature manifest's check: its layers, the artifact they sign, the rule, and the payloads fetched so far.
struct LayerCheck {
  Session& session;
  const std::string& signed_digest;
  const oci::Reference& reference;
  const manifest::TrustStore& trust;
  cosign::IdentityRule identity;
  std::map<std::string, std::string> payloads;  // by digest: layers of one payload (one per key) fetch it once
};

// Why `layer` cannot carry a key-based signature ccpack judges, before its payload is fetched; "" when it can.
std::string unjudged(const cosign::SignatureLayer& layer) {
  if (layer.media_type != cosign::kPayloadMediaType) {
    return "skipped: media type '" + escaped(layer.media_type, 120) + "' is not a cosign signature";
  }
  const std::string annotation = "annotation " + std::string(cosign::kSignatureAnnotation);
  if (layer.signature && layer.signature->size() > oci::kMaxAnnotationBytes) {
    return annotation + " is longer than " + std::to_string(oci::kMaxAnnotationBytes) + " bytes";
  }
  // defence: cosign-annotation
  if (!layer.signature || !signature_bytes(*layer.signature)) return annotation + " is missing or not padded standard base64";
  if (layer.digest.empty()) return "digest is not a sha256 digest";
  if (layer.size > cosign::kMaxPayloadBytes) {
    return "payload of " + std::to_string(layer.size) + " bytes is larger than " + std::to_string(cosign::kMaxPayloadBytes);
  }
  return {};
}

// The key id that `layer` is a valid signature by; else "" and why not, in `problem`.
std::string check_layer(LayerCheck& c, const cosign::SignatureLayer& layer, std::string& problem) {
  problem = unjudged(layer);
  if (!problem.empty()) return {};
  auto cached = c.payloads.find(layer.digest);
  if (cached == c.payloads.end())
    cached = c.payloads.emplace(layer.digest, fetch_payload(c.session, layer, c.signed_digest)).first;
  const std::string& payload = cached->second;
  std::optional<std::string> signature = layer.signature ? signature_bytes(*layer.signature) : std::nullopt;
  const manifest::PublicKey* by = signer_of(payload, signature.value_or(""), c.trust);
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
  if (p.manifest_digest != c.signed_digest) {
    problem = "key " + by->key_id() + " signed " + p.manifest_digest + ", another artifact";
    return {};
  }
  std::optional<std::string> why = cosign::identity_mismatch(p.docker_reference, c.signed_digest, c.reference, c.identity);
  // defence: cosign-identity
  if (why) {
    problem = "key " + by->key_id() + " signed this digest for another reference: " + *why;
    return {};
  }
  return by->key_id();
}

// The signatures of `signed_digest`: the first trusted key whose layer passes, else "" with each layer's problem
// (prefixed with `label`) added to `problems`.
std::string check_signed(Session& s, const std::string& signed_digest, const CosignSubject& subject,
                         const manifest::TrustStore& trust, cosign::IdentityRule identity, const std::string& label,
                         std::vector<std::string>& problems) {
  std::vector<cosign::SignatureLayer> layers;
  try {
    layers = existing_signatures(s, cosign::signature_tag(signed_digest));
  } catch (const IntegrityError& e) {
    problems.push_back(label + e.what());
    return {};
  }
  if (layers.empty()) problems.push_back(label + "no signature (the tag is missing or holds no layer)");
  LayerCheck c{s, signed_digest, subject.reference, trust, identity, {}};
  for (std::size_t i = 0; i < layers.size(); ++i) {
    std::string problem;
    std::string by = check_layer(c, layers[i], problem);
    if (!by.empty()) return by;
    std::string line = label;
    line += "layer " + std::to_string(i) + ": ";
    line += problem;
    problems.push_back(std::move(line));
  }
  return {};
}

}  // namespace

CosignAttach attach_cosign_signatures(Session& s, const std::string& manifest_digest, const std::string& docker_reference,
                                      const std::vector<const manifest::PrivateKey*>& keys, const std::string& creator) {
  CosignAttach r;
  r.tag = cosign::signature_tag(manifest_digest);
  const std::string payload = cosign::payload_json({docker_reference, manifest_digest, creator});
  const std::string payload_digest = oci::digest_of(payload);
  std::vector<cosign::SignatureLayer> layers = existing_signatures(s, r.tag, &r.manifest_digest);
  for (const manifest::PrivateKey* key : keys) {
    r.key_ids.push_back(key->key_id());
    if (already_signed(layers, payload, payload_digest, *key)) continue;
    layers.push_back(cosign::payload_layer(payload_digest, payload.size(), base64_encode(key->sign_detached(payload))));
    ++r.added;
  }
  r.layers = layers.size();
  if (r.added == 0) return r;
  if (layers.size() > cosign::kMaxSignatureLayers) {
    throw Error("signature manifest " + r.tag + " is full (" + std::to_string(cosign::kMaxSignatureLayers) + " signatures)");
  }
  if (!s.blob_exists(payload_digest)) s.upload_blob(payload_digest, payload);
  std::vector<std::string> diff_ids;
  diff_ids.reserve(layers.size());
  for (const cosign::SignatureLayer& l : layers) diff_ids.push_back(l.digest);
  const std::string config = cosign::config_json(diff_ids);
  const std::string config_digest = oci::digest_of(config);
  if (!s.blob_exists(config_digest)) s.upload_blob(config_digest, config);
  r.manifest_digest =
      s.put_manifest(r.tag, cosign::signature_manifest_json(layers, config_digest, config.size()), oci::kImageManifestType);
  return r;
}

CosignCheck check_cosign_signatures(Session& s, const CosignSubject& subject, const manifest::TrustStore& trust,
                                    cosign::IdentityRule identity) {
  CosignCheck r;
  r.tag = cosign::signature_tag(subject.manifest_digest);
  r.verified_by = check_signed(s, subject.manifest_digest, subject, trust, identity, "", r.problems);
  // Then cosign 3's form: the sigstore bundles among the artifact's referrers.
  if (!r.verified())
    r.verified_by = check_cosign_bundles(s, subject.manifest_digest, subject.reference, trust, identity, "", r.problems);
  if (r.verified() || subject.index_digest.empty()) return r;
  const std::string label = "index " + cosign::signature_tag(subject.index_digest) + " ";
  r.verified_by = check_signed(s, subject.index_digest, subject, trust, identity, label, r.problems);
  if (!r.verified())
    r.verified_by = check_cosign_bundles(s, subject.index_digest, subject.reference, trust, identity, "index ", r.problems);
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
