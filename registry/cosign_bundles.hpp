// cosign 3's key-based signatures of a pushed artifact: sigstore bundles (the format is sigstore_bundle.hpp's)
// attached as OCI referrers (referrers.hpp), written by push and checked before anything of the artifact is fetched.
//
// attach: one statement for (reference, digest); per key, unless a bundle referrer of the subject already holds
//   that very statement with a signature by the key (so pushing the same artifact to the same tag again adds no
//   entry: ECDSA signatures are randomized, so the signature is verified, not compared), the bundle blob, then its
//   referrer manifest by digest, then (unless the registry indexed it on the PUT) the fallback tag's index with
//   the entry added. Entries of other writers are kept as they were.
// check: the referrers of the signed digest (the API, else the fallback tag); entries whose artifactType is not a
//   bundle are not ours to judge and are passed over. Each bundle entry: its manifest fetched by digest (checked),
//   its subject must be the signed digest, its bundle layer announced at most kMaxBundleBytes and checked against
//   its digest, the bundle parsed (a keyless or message-signature bundle skipped as another verifier's), a
//   trusted key must verify an envelope signature over the PAE, then the statement: in-toto v1, predicate type
//   cosign's signature type, a subject with the signed digest, and that subject's name judged by the identity rule
//   (no name, cosign's own form: only `repository`, or a reference by digest). One bundle that passes is enough.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "manifest/keys.hpp"
#include "registry/cosign.hpp"
#include "registry/oci.hpp"
#include "registry/session.hpp"
#include "registry/sigstore_bundle.hpp"

namespace ccpack::registry {

// Which forms push writes: cosign's `.sig` tag (cosign 2, containers/image), the bundle referrer (cosign 3), or
// both (the default: every verifier finds its form).
enum class CosignFormat { legacy, bundle, both };
inline constexpr const char* kCosignFormatDefault = "both";
// "legacy", "bundle" or "both"; nullopt for anything else.
[[nodiscard]] std::optional<CosignFormat> parse_cosign_format(std::string_view text);

struct BundleAttach {
  std::vector<std::string> key_ids;
  std::vector<std::string> written;  // digests of the referrer manifests this call wrote
  std::size_t bundles = 0;           // bundle referrers of the subject signed by these keys, found or written
  std::string index;                 // where they are listed: "the referrers API" or "tag sha256-<hex>"
};

// Signs `subject` (an artifact of session.reference()'s repository) for `docker_reference` with each key.
BundleAttach attach_cosign_bundles(Session& session, const bundle::Blob& subject, const std::string& docker_reference,
                                   const std::vector<const manifest::PrivateKey*>& keys);

// The key id of the first trusted key whose bundle of `signed_digest` passes for `reference` under `identity`; else
// "", with one line per bundle that did not pass (prefixed with `label`) added to `problems`. Throws for the
// network and for a bundle blob that the registry serves against its own digest.
[[nodiscard]] std::string check_cosign_bundles(Session& session, const std::string& signed_digest,
                                               const oci::Reference& reference, const manifest::TrustStore& trust,
                                               cosign::IdentityRule identity, const std::string& label,
                                               std::vector<std::string>& problems);

}  // namespace ccpack::registry
