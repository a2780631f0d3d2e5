// The signature block of a .ccpack header (docs/FORMAT.md, "Signature block", version 1): who signed the
// manifest, when, with which key, and the Ed25519 signature itself.
//
// The block is compact JSON, an array of signatures (grammar above kSignatureBlockVersion); the empty block is
// the two bytes "[]", so unsigned archives stay byte-identical to those written before signing existed. Each
// signature signs the manifest's SHA-256 and its own other fields (signed_message), so a note or time edited
// afterwards fails verification like an edited manifest does. parse_signature_block is the gate for untrusted
// bytes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/sha256.hpp"

namespace ccpack::manifest {

//   block     := "[" [ signature *( "," signature ) ] "]"      compact JSON, at most 32 signatures, 64 KiB
//   signature := {"key_id":    16 lowercase hex digits        first 8 bytes of SHA-256(raw 32-byte public key)
//                 "algorithm": "ed25519",
//                 "signed_at": "YYYY-MM-DDTHH:MM:SSZ",          UTC
//                 "note":      string,                        optional, 1-256 bytes of UTF-8, no control chars
//                 "signature": base64 of 64 bytes}            88 characters, padded
//
// Keys appear in this order, each once; nothing else is allowed, no two signatures share a key_id.
inline constexpr int kSignatureBlockVersion = 1;
inline constexpr std::size_t kMaxSignatureBlockBytes = 64 << 10;
inline constexpr std::size_t kMaxSignatures = 32;
inline constexpr std::size_t kMaxNoteBytes = 256;
inline constexpr std::string_view kAlgorithmEd25519 = "ed25519";
inline constexpr std::string_view kSignatureDomain = "ccpack-signature-v1";

using SignatureBytes = std::array<std::uint8_t, 64>;

struct Signature {
  std::string key_id;  // 16 lowercase hex digits
  std::string algorithm{kAlgorithmEd25519};
  std::string signed_at;  // "YYYY-MM-DDTHH:MM:SSZ"
  std::string note;       // empty: none
  SignatureBytes signature{};
};

// Parses and checks untrusted bytes (size, nesting, duplicate keys and every field); throws IntegrityError
// "signature block: signatures[0].key_id ..." naming what is wrong.
[[nodiscard]] std::vector<Signature> parse_signature_block(std::string_view block);
// The canonical bytes of `signatures` ("[]" when empty); parse_signature_block gives them back unchanged.
[[nodiscard]] std::string encode_signature_block(const std::vector<Signature>& signatures);

// The bytes the Ed25519 signature of `s` covers, for a header whose manifest hashes to `manifest_sha256`
// (ArchiveHeader::manifest_sha256: a reader never hashes the manifest again), or whose manifest is `manifest`:
// the domain string kSignatureDomain, a NUL, the SHA-256 of the exact manifest bytes, then algorithm, key_id,
// signed_at and note separated by NULs. The domain keeps a ccpack signature from meaning anything elsewhere;
// binding the other fields means a note or time edited afterwards fails verification like an edited manifest
// does. None of the fields can hold a NUL, so the split is unique.
[[nodiscard]] std::string signed_message(const Digest& manifest_sha256, const Signature& s);
[[nodiscard]] std::string signed_message(std::string_view manifest, const Signature& s);

// What is wrong with a note (too long, a control character, not UTF-8), or nullopt when it is fine.
[[nodiscard]] std::optional<std::string> note_problem(std::string_view note);

// The signing time: SOURCE_DATE_EPOCH when set (reproducible signed archives), else now; UTC, RFC 3339.
[[nodiscard]] std::string signing_time();

}  // namespace ccpack::manifest
