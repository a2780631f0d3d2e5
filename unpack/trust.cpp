// See trust.hpp. Signatures by keys not trusted here are listed but never verified: without the public key there
// is nothing to verify with, and a hostile block could otherwise make us do work for nothing.
#include "unpack/trust.hpp"

#include "util/error.hpp"
#include "util/fs.hpp"

namespace ccpack::unpack {

std::string_view to_string(SignerStatus::State state) {
  switch (state) {
    case SignerStatus::State::verified:
      return "verified";
    case SignerStatus::State::untrusted_key:
      return "untrusted key";
    case SignerStatus::State::bad_signature:
      return "bad signature";
  }
  return "?";
}

std::string TrustReport::describe() const {
  std::string text;
  if (signers.empty()) {
    text = "unsigned";
  } else {
    text = "signed by ";
    for (std::size_t i = 0; i < signers.size(); ++i) {
      text += (i ? ", " : "") + signers[i].signature.key_id + " (" + std::string(to_string(signers[i].state)) + ")";
    }
  }
  text += "; trusted keys here: ";
  if (trusted_ids.empty()) text += "none";
  for (std::size_t i = 0; i < trusted_ids.size(); ++i) text += (i ? ", " : "") + trusted_ids[i];
  return text;
}

TrustReport assess_signatures(const manifest::ArchiveHeader& header, const std::vector<manifest::Signature>& signatures,
                              const manifest::TrustStore& trust) {
  TrustReport r;
  r.trusted_ids = trust.key_ids();
  for (const manifest::Signature& s : signatures) {
    SignerStatus status{s, SignerStatus::State::untrusted_key};
    if (const manifest::PublicKey* key = trust.find(s.key_id)) {
      bool ok = key->verify(manifest::signed_message(header.manifest_sha256, s), s.signature);
      status.state = ok ? SignerStatus::State::verified : SignerStatus::State::bad_signature;
      if (ok && r.verified_by.empty()) r.verified_by = s.key_id;
    }
    r.signers.push_back(std::move(status));
  }
  return r;
}

TrustReport check_trust(const std::filesystem::path& path, const manifest::ArchiveHeader& header,
                        const std::vector<manifest::Signature>& signatures, const manifest::TrustStore& trust,
                        bool allow_unsigned) {
  TrustReport r = assess_signatures(header, signatures, trust);
  // defence: signature-gate
  if (r.trusted() || allow_unsigned) return r;
  std::string what = quoted_path(path);
  if (r.signers.empty()) {
    throw IntegrityError(what + " is unsigned and unsigned archives are refused (" + r.describe() +
                         "); sign it with `ccpack sign`, or pass --allow-unsigned to accept it anyway");
  }
  throw IntegrityError(what + " has no signature that verifies with a trusted key (" + r.describe() +
                       "); trust the signer's public key with --trust FILE or CCPACK_TRUSTED_KEYS");
}

TrustReport check_trust_beside(const std::filesystem::path& path, const manifest::ArchiveHeader& header,
                               const std::vector<manifest::Signature>& signatures, const manifest::TrustStore& trust,
                               const std::string& accepted_by) {
  TrustReport r = assess_signatures(header, signatures, trust);
  for (const SignerStatus& s : r.signers) {
    // defence: cosign-manifest-signature
    if (s.state == SignerStatus::State::bad_signature) {
      throw IntegrityError(quoted_path(path) + " is accepted by the cosign signature of key " + accepted_by +
                           ", but its own signature by trusted key " + s.signature.key_id + " does not verify (" + r.describe() +
                           ")");
    }
  }
  if (r.verified_by.empty()) r.verified_by = accepted_by;  // the key that vouched, for the marker and reports
  return r;
}

TrustReport assess_signatures(const Archive& archive, const manifest::TrustStore& trust) {
  return assess_signatures(archive.header, archive.signatures, trust);
}

TrustReport check_trust(const Archive& archive, const manifest::TrustStore& trust, bool allow_unsigned) {
  return check_trust(archive.path, archive.header, archive.signatures, trust, allow_unsigned);
}

}  // namespace ccpack::unpack
