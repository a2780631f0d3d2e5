// cosign's key-based signature of an OCI manifest, the form that cosign, sigstore's policy-controller, Kyverno and
// containers/image (skopeo, podman, CRI-O: a policy.json `sigstoreSigned` requirement) read and write. A format of
// the registry's, like oci.hpp's documents, so it lives here; push writes it, restore oci:// and pull check it.
//
//   tag "sha256-<hex>.sig" (the signed manifest's digest, ':' made '-')
//     --> image manifest (OCI), config application/vnd.oci.image.config.v1+json = kConfig below
//           layers[i]  mediaType application/vnd.dev.cosign.simplesigning.v1+json, the payload's bytes,
//                      annotation dev.cosignproject.cosign/signature = base64 (standard, padded) of the signature
//   payload := {"critical":{"identity":{"docker-reference":REF},
//                           "image":{"docker-manifest-digest":"sha256:<hex>"},
//                           "type":"cosign container image signature"},
//               "optional":OBJECT|null}
//   config  := {"architecture":"","os":"","config":{},"rootfs":{"type":"layers","diff_ids":[<each layer digest>]}}
//
// The signature covers the payload's exact bytes: Ed25519 over the bytes themselves, ECDSA P-256 over their
// SHA-256 in ASN.1 DER (sigstore's LoadVerifier with SHA-256, which containers/image hard-codes). Several layers
// are several signatures (one per key); one that verifies is enough, as for every reader above.
//
// Parsing is as strict as containers/image's (signature/internal/sigstore_payload.go): exactly the keys above in
// "critical" and its objects, "optional" present (an object or null; its members are not read), the type string
// exact. Everything parsed here comes from the registry and is untrusted; rejections throw IntegrityError naming
// the field.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "registry/oci.hpp"

namespace ccpack::registry::cosign {

inline constexpr std::string_view kPayloadMediaType = "application/vnd.dev.cosign.simplesigning.v1+json";
inline constexpr std::string_view kSignatureAnnotation = "dev.cosignproject.cosign/signature";
inline constexpr std::string_view kSignatureType = "cosign container image signature";
inline constexpr std::string_view kConfigMediaType = "application/vnd.oci.image.config.v1+json";
inline constexpr std::string_view kTagSuffix = ".sig";
// What ccpack puts in "optional": who made the signature (containers/image writes "creator" too).
inline constexpr std::string_view kCreatorKey = "creator";
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
// Throws IntegrityError "`what`: field 'critical.type' ..." for anything containers/image would refuse.
[[nodiscard]] Payload parse_payload(std::string_view json, std::string_view what);
// The config blob of a signature manifest whose layers have `layer_digests`.
[[nodiscard]] std::string config_json(const std::vector<std::string>& layer_digests);

// The identity rule: a payload names `reference` when its docker-reference has the same registry and repository
// (a tag or digest in it is not compared: the digest is, separately). Returns why not, or nullopt.
[[nodiscard]] std::optional<std::string> identity_mismatch(std::string_view docker_reference, const oci::Reference& reference);

}  // namespace ccpack::registry::cosign
