// cosign 3's key-based signature of an OCI artifact: a sigstore bundle (protobuf-specs v0.3) holding a DSSE envelope
// of an in-toto statement, stored as an OCI referrer of the signed manifest (registry/referrers.hpp finds and
// indexes referrers). A format of the registry's, like cosign.hpp's `.sig` form; cosign_bundles.hpp writes and
// checks it. The shapes, as cosign 3 writes them, are drawn above kMediaType.
//
// Everything parsed here comes from the registry and is untrusted: JSON through manifest::parse_untrusted (depth
// bounded, repeated keys refused), base64 strict (padded standard alphabet, what every writer writes), at most
// kMaxEnvelopeSignatures signatures and kMaxStatementSubjects subjects. Refusals throw IntegrityError
// "`what`: field 'dsseEnvelope.payloadType' ...".
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "manifest/keys.hpp"

namespace ccpack::registry::bundle {

// The shapes, as cosign 3 writes them (cmd/cosign/cli/sign/sign.go signDigestBundle,
// pkg/oci/remote/write.go WriteAttestationNewBundleFormat):
//
//   statement := {"_type":"https://in-toto.io/Statement/v1",
//                 "subject":[{"name":REF?,"digest":{"sha256":"<hex>"}}],
//                 "predicateType":"https://sigstore.dev/cosign/sign/v1","predicate":{}}
//     cosign writes no "name"; ccpack writes REG/REPO:TAG there (in-toto's name of the subject), the identity that
//     the legacy payload's docker-reference carries, checked by the same rule (cosign::identity_mismatch).
//   bundle := {"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json",
//              "verificationMaterial":{"publicKey":{"hint":base64(SHA-256(SPKI DER))}},
//              "dsseEnvelope":{"payload":base64(statement),"payloadType":"application/vnd.in-toto+json",
//                              "signatures":[{"sig":base64(signature over PAE)}]}}
//     PAE := "DSSEv1 " len(type) " " type " " len(payload) " " payload; Ed25519 signs PAE, ECDSA P-256 its SHA-256.
//   referrer manifest := image manifest (OCI), artifactType = the bundle media type, config the empty descriptor,
//     one layer (the bundle, media type the same), subject = the signed manifest's descriptor, annotations
//     dev.sigstore.bundle.content=dsse-envelope and dev.sigstore.bundle.predicateType=the predicate type.
inline constexpr std::string_view kMediaType = "application/vnd.dev.sigstore.bundle.v0.3+json";
// The same version in the older spelling, which sigstore's readers accept too.
inline constexpr std::string_view kMediaTypeParam = "application/vnd.dev.sigstore.bundle+json;version=0.3";
inline constexpr std::string_view kPayloadType = "application/vnd.in-toto+json";
inline constexpr std::string_view kStatementType = "https://in-toto.io/Statement/v1";
inline constexpr std::string_view kPredicateType = "https://sigstore.dev/cosign/sign/v1";
inline constexpr std::string_view kContentAnnotation = "dev.sigstore.bundle.content";
inline constexpr std::string_view kContentDsse = "dsse-envelope";
inline constexpr std::string_view kPredicateAnnotation = "dev.sigstore.bundle.predicateType";
// A key-based bundle is about 1 KB, a keyless one with its certificate chain and log entry under 16 KB.
inline constexpr std::size_t kMaxBundleBytes = 64 << 10;
inline constexpr std::size_t kMaxEnvelopeSignatures = 16;
inline constexpr std::size_t kMaxStatementSubjects = 1024;

// Whether `media_type` names a v0.3 bundle (either spelling).
[[nodiscard]] bool is_bundle_type(std::string_view media_type);

struct Subject {
  std::optional<std::string> name;  // absent in cosign's statements
  std::string sha256_hex;           // "" when the subject has no sha256 digest
};

struct Statement {
  std::string predicate_type;
  std::vector<Subject> subjects;
};

// The statement ccpack signs for `digest` ("sha256:<hex>") named `name` (REG/REPO:TAG): compact, keys in the order
// above, no time, so the same artifact and tag give the same bytes.
[[nodiscard]] std::string statement_json(std::string_view name, std::string_view digest);
// Throws IntegrityError naming `what` and the field unless `json` is an in-toto v1 statement: "_type" exact,
// "subject" a non-empty array (at most kMaxStatementSubjects) of objects whose "digest" is an object of strings and
// "name", when present, a string; "predicateType" a string. The predicate is not read.
[[nodiscard]] Statement parse_statement(std::string_view json, std::string_view what);

// DSSE's pre-authentication encoding: what the envelope's signatures sign.
[[nodiscard]] std::string pae(std::string_view payload_type, std::string_view payload);
// sigstore's key hint: base64 of the SHA-256 of the key's SPKI DER (what cosign writes).
[[nodiscard]] std::string key_hint(const manifest::PublicKey& key);
// The bundle of `statement` signed with `signature` (raw bytes, over pae(kPayloadType, statement)).
[[nodiscard]] std::string bundle_json(std::string_view statement, std::string_view signature, std::string_view hint);

struct Envelope {
  std::string payload;  // the statement's bytes (decoded)
  std::string payload_type;
  std::vector<std::string> signatures;  // decoded
};
// The DSSE envelope of a key-based bundle. Returns nullopt (with why in `not_ours`) for a bundle that is not
// key-based (a certificate instead of a public key: keyless) or holds a message signature: another verifier's,
// never judged. Throws IntegrityError naming the field for anything malformed.
[[nodiscard]] std::optional<Envelope> parse_bundle(std::string_view json, std::string_view what, std::string& not_ours);

// The referrer manifest of a bundle blob for `subject` (its media type, digest, size); the config is the empty
// descriptor (oci::kEmptyConfig*).
struct Blob {
  std::string media_type;
  std::string digest;
  std::uint64_t size = 0;
};
[[nodiscard]] std::string referrer_manifest_json(const Blob& subject, const Blob& bundle);

// What a referrer manifest says: its subject's digest and its layers. Throws IntegrityError naming `what` and
// the field when it is not an object, has no "subject" with a sha256 digest, or its "layers" is not an array of at
// most oci::kMaxLayers descriptors.
struct Referrer {
  std::string subject_digest;
  std::vector<Blob> layers;
};
[[nodiscard]] Referrer parse_referrer_manifest(std::string_view json, std::string_view what);

}  // namespace ccpack::registry::bundle
