// cosign signatures of a pushed artifact (the format is cosign.hpp's): writing them, and checking them before
// anything of the artifact is fetched.
//
// attach adds one signature per key beside what is there, and nothing when the same artifact is pushed to the
// same tag again. check reads only signature manifests and their small payload blobs, no byte of the archive:
// one layer that passes is enough, the others are reported.
#pragma once

#include <string>
#include <vector>

#include "manifest/keys.hpp"
#include "registry/cosign.hpp"
#include "registry/oci.hpp"
#include "registry/session.hpp"

namespace ccpack::registry {

struct CosignAttach {
  std::string tag;              // sha256-<hex>.sig
  std::string manifest_digest;  // of the signature manifest (as written, or as it was when nothing was added)
  std::vector<std::string> key_ids;
  std::size_t layers = 0;  // in the signature manifest, other signers' included
  std::size_t added = 0;   // layers this call added (0: every key had signed this payload already)
};

// Signs `manifest_digest` (an artifact of session.reference()'s repository) for `docker_reference` with each key
// and writes the signature manifest. `creator` goes into the payload's "optional".
//
// The payload for (reference, manifest digest), one signature per key, is added to the manifest under
// sha256-<hex>.sig. Every layer already there is kept as it was (other signers', skopeo's, cosign's,
// attestations); a key whose signature of this very payload is there already signs nothing, so pushing the same
// artifact to the same tag again adds no layer and writes no manifest. Blobs first, the manifest last: a reader
// never sees a layer without its blob.
CosignAttach attach_cosign_signatures(Session& session, const std::string& manifest_digest, const std::string& docker_reference,
                                      const std::vector<const manifest::PrivateKey*>& keys, const std::string& creator);

// What a signature must be for: the chosen manifest, the index the tag resolved to ("" when none; a signature of
// the index counts for its entries, as for an image's platforms), and the reference asked for.
struct CosignSubject {
  std::string manifest_digest;
  std::string index_digest;
  oci::Reference reference;
};

struct CosignCheck {
  std::string tag;                    // the signature tag of the manifest
  std::string verified_by;            // key id of the first trusted key whose signature passed; empty: none
  std::vector<std::string> problems;  // one per layer that did not pass ("layer 0: ...")

  [[nodiscard]] bool verified() const { return !verified_by.empty(); }
};

// Never throws for what it finds in the signatures (that is in `problems`); throws for the network and for a
// signature manifest that the registry serves against its own digest.
//
// Reads the signature manifest of the chosen artifact and its sigstore bundle referrers (cosign 3's form,
// cosign_bundles.hpp), then (when the tag resolved to an index) the index's, each in that order: layers of
// another media type are skipped; each cosign layer has its signature annotation read strictly (padded standard
// base64, at most oci::kMaxAnnotationBytes), its payload fetched (announced size bounded by kMaxPayloadBytes,
// bytes checked against its digest, fetched once for all the layers that share it), verified with each trusted
// key, parsed, its digest compared with the signed artifact's and its docker-reference with the reference
// (cosign::identity_mismatch, under the caller's rule). One layer that passes all of it is enough; the others
// are reported.
[[nodiscard]] CosignCheck check_cosign_signatures(Session& session, const CosignSubject& subject,
                                                  const manifest::TrustStore& trust, cosign::IdentityRule identity);

// Throws IntegrityError (exit 4) naming `what` (the artifact), the signature tag and each problem unless `check`
// verified.
void require_cosign(const CosignCheck& check, const std::string& what);

}  // namespace ccpack::registry
