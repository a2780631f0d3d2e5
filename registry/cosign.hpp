// cosign's key-based signature of an OCI manifest, the form that cosign, sigstore's policy-controller, Kyverno and
// containers/image (skopeo, podman, CRI-O: a policy.json `sigstoreSigned` requirement) read and write. A format of
// the registry's, like oci.hpp's documents, so it lives here; push writes it, restore oci:// and pull check it.
//
// A signature is a tag beside the signed manifest whose image manifest holds one signed payload per layer (the
// shapes are drawn above kPayloadMediaType). Reading is as the verifiers read, so what they accept is accepted
// here and no more. Everything parsed here comes from the registry and is untrusted; rejections throw
// IntegrityError naming the field.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "registry/oci.hpp"

namespace ccpack::registry::cosign {

// The shapes:
//   tag "sha256-<hex>.sig" (the signed manifest's digest, ':' made '-')
//     --> image manifest (OCI), config application/vnd.oci.image.config.v1+json (oci::kImageConfigType)
//           layers[i]  mediaType application/vnd.dev.cosign.simplesigning.v1+json, the payload's bytes,
//                      annotation dev.cosignproject.cosign/signature = base64 (standard, padded) of the signature
//   payload := {"critical":{"identity":{"docker-reference":REF},
//                           "image":{"docker-manifest-digest":"sha256:<hex>"},
//                           "type":"cosign container image signature"},
//               "optional":OBJECT|null}
//   config  := {"architecture":"","os":"","config":{},"rootfs":{"type":"layers","diff_ids":[<each layer digest>]}}
//
// The signature covers the payload's exact bytes: Ed25519 over the bytes themselves, ECDSA P-256 over their
// SHA-256 (ASN.1 DER, or raw r||s as sigstore's verifier also reads). Several layers are several signatures (one per
// key and reference); one that verifies is enough, as for every reader above.
inline constexpr std::string_view kPayloadMediaType = "application/vnd.dev.cosign.simplesigning.v1+json";
inline constexpr std::string_view kSignatureAnnotation = "dev.cosignproject.cosign/signature";
inline constexpr std::string_view kSignatureType = "cosign container image signature";
inline constexpr std::string_view kTagSuffix = ".sig";
// What ccpack puts in "optional": who made the signature (containers/image writes "creator" too).
inline constexpr std::string_view kCreatorKey = "creator";
// cosign reads at most 1,000 layers of a signature manifest; so does ccpack, and it writes no more.
inline constexpr std::size_t kMaxSignatureLayers = 1000;
// A payload is a few hundred bytes; a layer announced larger is not fetched (containers/image reads up to 4 MiB).
inline constexpr std::size_t kMaxPayloadBytes = 64 << 10;

struct Payload {
  std::string docker_reference;  // "host/repo:tag" as ccpack writes it; cosign writes "host/repo"
  std::string manifest_digest;   // "sha256:<hex>"
  std::string creator;           // "optional.creator" when written; not read back
};

// "sha256-<hex>.sig" for "sha256:<hex>"; throws IntegrityError unless `manifest_digest` is a sha256 digest.
[[nodiscard]] std::string signature_tag(std::string_view manifest_digest);
// Compact JSON with keys in the order above (Go's encoding/json sorts them the same way); no timestamp, so the
// same artifact gives the same payload bytes.
[[nodiscard]] std::string payload_json(const Payload& payload);
// Parsed as containers/image parses it (sigstore_payload.go): exactly the keys above in "critical" and its objects,
// "optional" present (an object or null; of its members "creator" must be a string and "timestamp" an integer,
// others are not read), the type string exact. Throws IntegrityError "`what`: field 'critical.type' ..." for
// anything containers/image would refuse.
[[nodiscard]] Payload parse_payload(std::string_view json, std::string_view what);
// The config blob of a signature manifest whose layers have `layer_digests`.
[[nodiscard]] std::string config_json(const std::vector<std::string>& layer_digests);

// One layer of a signature manifest as read: its descriptor's JSON kept as it was (written back unchanged when
// signatures are added), and what ccpack judges of it.
struct SignatureLayer {
  std::string json;        // the descriptor, compact
  std::string media_type;  // "" when missing or not a string
  std::string digest;      // "" unless a sha256 digest
  std::uint64_t size = 0;
  std::optional<std::string> signature;  // the kSignatureAnnotation value, when a string
};

// The layers of a signature manifest. Throws IntegrityError naming `what` when it is not a JSON object, its
// "layers" is not an array of objects, or it has more than kMaxSignatureLayers layers. Nothing else of a layer
// is refused here: check_layer judges (or skips) each one. A layer of another media type (an attestation, another
// tool's) is kept and skipped, never judged; of ours only the signature annotation is read, and only it is bounded
// (oci::kMaxAnnotationBytes); a sigstore bundle or certificate annotation beside it, whatever its size, is another
// verifier's business.
[[nodiscard]] std::vector<SignatureLayer> parse_signature_layers(std::string_view json, std::string_view what);
// The layer ccpack writes for a payload of `payload_bytes` bytes with `signature_base64`.
[[nodiscard]] SignatureLayer payload_layer(const std::string& payload_digest, std::size_t payload_bytes,
                                           const std::string& signature_base64);
// The signature manifest over `layers` (each written as read) with the config whose digest is `config_digest`.
[[nodiscard]] std::string signature_manifest_json(const std::vector<SignatureLayer>& layers, const std::string& config_digest,
                                                  std::size_t config_bytes);

// Which docker-reference counts for a reference with a tag: `exact`, that tag (or the signed artifact's digest),
// containers/image's default (matchRepoDigestOrExact); `repository`, any tag of the repository (matchRepository,
// what cosign's own tagless signatures need).
enum class IdentityRule { exact, repository };
inline constexpr const char* kIdentityVar = "CCPACK_COSIGN_IDENTITY";
// "exact" or "repository"; nullopt for anything else.
[[nodiscard]] std::optional<IdentityRule> parse_identity_rule(std::string_view text);

// Whether a payload naming `docker_reference`, over the artifact `signed_digest` (already checked to be the
// payload's own), counts for `reference` under `rule`: always the same registry and repository; with `exact` and a
// tag in `reference`, that tag or a digest reference to `signed_digest`. Returns why not, or nullopt.
[[nodiscard]] std::optional<std::string> identity_mismatch(std::string_view docker_reference, std::string_view signed_digest,
                                                           const oci::Reference& reference, IdentityRule rule);

}  // namespace ccpack::registry::cosign
