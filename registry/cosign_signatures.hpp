// cosign signatures of a pushed artifact (the format is cosign.hpp's): writing them after a push, and checking
// them before anything of the artifact is fetched.
//
// attach: the payload for (reference, manifest digest), one signature per key, added to the manifest under
//   sha256-<hex>.sig: the layers already there are kept (other signers, skopeo's, cosign's), except one with the
//   same payload that one of these keys already signed (replaced, as `ccpack sign` replaces a signature by the same
//   key), so pushing again adds nothing. Blobs first, the manifest last: a reader never sees a layer without its blob.
// check: the signature manifest of the chosen artifact, each payload layer fetched (announced size bounded by
//   kMaxPayloadBytes, bytes checked against its digest), its annotation verified with each trusted key, then the
//   payload parsed, its digest compared with the artifact's manifest digest and its docker-reference with the
//   reference (cosign::identity_mismatch). One layer that passes all of it is enough; the others are reported.
//   Only the signature manifest and its small payload blobs are read: no byte of the archive.
#pragma once

#include <string>
#include <vector>

#include "manifest/keys.hpp"
#include "registry/oci.hpp"
#include "registry/session.hpp"

namespace ccpack::registry {

struct CosignAttach {
  std::string tag;              // sha256-<hex>.sig
  std::string manifest_digest;  // of the signature manifest written
  std::vector<std::string> key_ids;
  std::size_t layers = 0;  // in the signature manifest, other signers' included
};

// Signs `manifest_digest` (an artifact of session.reference()'s repository) for `docker_reference` with each key
// and writes the signature manifest. `creator` goes into the payload's "optional".
CosignAttach attach_cosign_signatures(Session& session, const std::string& manifest_digest, const std::string& docker_reference,
                                      const std::vector<const manifest::PrivateKey*>& keys, const std::string& creator);

struct CosignCheck {
  std::string tag;
  std::string verified_by;             // key id of the first trusted key whose signature passed; empty: none
  std::vector<std::string> problems;   // one per layer that did not pass ("layer 0: ...")

  [[nodiscard]] bool verified() const { return !verified_by.empty(); }
};

// Never throws for what it finds in the signatures (that is in `problems`); throws for the network and for a
// signature manifest that the registry serves against its own digest.
[[nodiscard]] CosignCheck check_cosign_signatures(Session& session, const std::string& manifest_digest,
                                                  const oci::Reference& reference, const manifest::TrustStore& trust);

// Throws IntegrityError (exit 4) naming `what` (the artifact), the signature tag and each problem unless `check`
// verified.
void require_cosign(const CosignCheck& check, const std::string& what);

}  // namespace ccpack::registry
