// The trust gate of restore and verify: is this archive signed by a key this machine trusts?
//
// Each signature in the header names its key by id; a signature counts only when the trust store holds a key
// with that id and the Ed25519 signature verifies with it over the archive's exact manifest bytes (and the
// signature's own time and note, see manifest/signature.hpp). One such signature is enough: that is what lets a
// second signer, or a new key during a rotation, sign beside the first. The check reads only the header, so a
// refusal comes before any payload byte is decompressed or written.
//
// Library-level restore/extract do not call it: the CLI does (verify, restore, sign, and inspect's display),
// so tests and tools that open archives directly decide for themselves.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "manifest/keys.hpp"
#include "unpack/archive.hpp"

namespace ccpack::unpack {

struct SignerStatus {
  enum class State { verified, untrusted_key, bad_signature };
  manifest::Signature signature;
  State state = State::untrusted_key;
};

struct TrustReport {
  std::vector<SignerStatus> signers;     // in block order
  std::vector<std::string> trusted_ids;  // every key id trusted here
  std::string verified_by;               // the first trusted key whose signature verifies; empty: none

  [[nodiscard]] bool trusted() const { return !verified_by.empty(); }
  // "unsigned" or "signed by 0123456789abcdef (verified), ... ; trusted here: ..." for messages.
  [[nodiscard]] std::string describe() const;
};

// "verified", "untrusted key", "bad signature".
[[nodiscard]] std::string_view to_string(SignerStatus::State state);

// Checks every signature of `header` (parsed into `signatures`) against `trust`; never throws for what it finds.
[[nodiscard]] TrustReport assess_signatures(const manifest::ArchiveHeader& header,
                                            const std::vector<manifest::Signature>& signatures,
                                            const manifest::TrustStore& trust);

// Throws IntegrityError naming the archive, the key ids found and those trusted, unless a signature verifies
// with a trusted key or `allow_unsigned` is set (then the caller warns, every time). Fits Archive::HeaderGate.
[[nodiscard]] TrustReport check_trust(const std::filesystem::path& path, const manifest::ArchiveHeader& header,
                                      const std::vector<manifest::Signature>& signatures, const manifest::TrustStore& trust,
                                      bool allow_unsigned);

// When the artifact is already accepted on another signature (a cosign signature of the registry artifact by
// `accepted_by`, a trusted key): the archive needs no signature of its own, but one by a trusted key must still
// verify. Throws IntegrityError naming the archive and the key otherwise. The report's verified_by is the archive's
// own trusted signer when there is one, else `accepted_by`.
[[nodiscard]] TrustReport check_trust_beside(const std::filesystem::path& path, const manifest::ArchiveHeader& header,
                                             const std::vector<manifest::Signature>& signatures,
                                             const manifest::TrustStore& trust, const std::string& accepted_by);

// The same for an archive already open.
[[nodiscard]] TrustReport assess_signatures(const Archive& archive, const manifest::TrustStore& trust);
[[nodiscard]] TrustReport check_trust(const Archive& archive, const manifest::TrustStore& trust, bool allow_unsigned);

}  // namespace ccpack::unpack
