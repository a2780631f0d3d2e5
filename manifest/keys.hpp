// Keys for signing, through OpenSSL 3: loading, key ids, one-shot sign and verify, and the set of public keys a
// machine trusts. Two algorithms: Ed25519, the only one that signs an archive's manifest, and ECDSA on P-256, the
// key type cosign makes by default, accepted for cosign signatures of registry artifacts (registry/cosign.hpp)
// beside Ed25519. A manifest signature by an ECDSA key does not exist, so such a key never verifies one.
//
// Private keys are PEM PKCS#8 ("BEGIN PRIVATE KEY"), read from a file that only its owner may read (the same
// rule as ssh: a key readable by group or others is refused, with the chmod that fixes it) or from the PEM text
// in CCPACK_SIGNING_KEY, how CI systems hand out secrets. They are never taken from the command line. The bytes
// read are wiped (OPENSSL_cleanse) once parsed, and no message ever holds key bytes: errors name the file or
// variable and what is wrong with it, never OpenSSL's text about the contents.
//
// Public keys are PEM SPKI ("BEGIN PUBLIC KEY"). A key id is the first 8 bytes of the SHA-256 of the encoded public
// key, in hex: the raw 32 bytes for Ed25519 (what the signature block records), the 65-byte uncompressed point for
// P-256. ECDSA private keys may also be SEC1 ("BEGIN EC PRIVATE KEY", what `openssl ecparam -genkey` writes).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "manifest/signature.hpp"

using evp_pkey_st = struct evp_pkey_st;

namespace ccpack::manifest {

// Where a private key comes from in messages and the environment variable that can hold one.
inline constexpr const char* kSigningKeyVar = "CCPACK_SIGNING_KEY";
// Largest key file read (an Ed25519 PEM is about 120 bytes).
inline constexpr std::size_t kMaxKeyFileBytes = 16 << 10;

enum class KeyAlgorithm { ed25519, ecdsa_p256 };
// "ed25519", "ecdsa-p256".
[[nodiscard]] std::string_view to_string(KeyAlgorithm algorithm);

// An ECDSA P-256 signature as raw r||s: two 32-byte big-endian numbers.
inline constexpr std::size_t kRawP256SignatureBytes = 64;
// The ASN.1 DER form of a raw r||s P-256 signature; nullopt unless `raw` is kRawP256SignatureBytes long.
[[nodiscard]] std::optional<std::string> der_of_raw_p256(std::string_view raw);
// What a private key is loaded for: a manifest signature (Ed25519 only) or a cosign signature (either algorithm).
enum class KeyUse { manifest, cosign };

class PublicKey {
 public:
  // Throws Error naming `what` (a file) when `pem` is not an Ed25519 or ECDSA P-256 public key.
  [[nodiscard]] static PublicKey from_pem(std::string_view pem, const std::string& what);
  // Reads a PEM SPKI file; throws Error naming it.
  [[nodiscard]] static PublicKey load(const std::filesystem::path& file);

  [[nodiscard]] const std::string& key_id() const { return key_id_; }
  [[nodiscard]] KeyAlgorithm algorithm() const { return algorithm_; }
  // A manifest signature (Ed25519); always false for an ECDSA key.
  [[nodiscard]] bool verify(std::string_view message, const manifest::SignatureBytes& signature) const;
  // A detached signature as sigstore makes one: Ed25519 over `message` itself (64 bytes); ECDSA over its SHA-256,
  // ASN.1 DER encoded, or raw r||s (64 bytes, each big-endian and zero-padded), which sigstore's verifier and
  // containers/image also accept (tried only when the DER reading fails).
  [[nodiscard]] bool verify_detached(std::string_view message, std::string_view signature) const;
  [[nodiscard]] std::string pem() const;

 private:
  friend class PrivateKey;  // derives its public key
  explicit PublicKey(std::shared_ptr<evp_pkey_st> key);
  std::shared_ptr<evp_pkey_st> key_;
  KeyAlgorithm algorithm_ = KeyAlgorithm::ed25519;
  std::string key_id_;
};

class PrivateKey {
 public:
  [[nodiscard]] static PrivateKey generate();
  // Reads a PEM PKCS#8 file; refuses one that group or others can access, and one whose algorithm `use` does
  // not take. Throws Error naming the file.
  [[nodiscard]] static PrivateKey load(const std::filesystem::path& file, KeyUse use = KeyUse::manifest);
  // Parses PEM text held in the environment variable `var`; throws Error naming the variable.
  [[nodiscard]] static PrivateKey from_env(const char* var, KeyUse use = KeyUse::manifest);

  [[nodiscard]] const std::string& key_id() const { return key_id_; }
  [[nodiscard]] KeyAlgorithm algorithm() const { return algorithm_; }
  // An Ed25519 signature (the manifest's); throws Error for an ECDSA key.
  [[nodiscard]] manifest::SignatureBytes sign(std::string_view message) const;
  // A detached signature that PublicKey::verify_detached checks (Ed25519 deterministic; ECDSA randomized).
  [[nodiscard]] std::string sign_detached(std::string_view message) const;
  [[nodiscard]] PublicKey public_key() const;
  // Creates `file` (mode 0600, never over an existing file) holding the PEM PKCS#8 private key.
  void write_pem(const std::filesystem::path& file) const;

  // Signs `manifest` now, with `note`, and returns the signature ready for the block.
  [[nodiscard]] manifest::Signature sign_manifest(std::string_view manifest, const std::string& note) const;

 private:
  PrivateKey(std::shared_ptr<evp_pkey_st> key, const std::string& what);
  std::shared_ptr<evp_pkey_st> key_;
  KeyAlgorithm algorithm_ = KeyAlgorithm::ed25519;
  std::string key_id_;
};

// The public keys this machine trusts, by key id.
class TrustStore {
 public:
  // Adds a PEM public key file, or every `*.pub` file in a folder (names starting with '.' are skipped, so a
  // Kubernetes ConfigMap's ..data links are not read twice). A missing path is an error when `required`,
  // else ignored (the default folders). Throws Error naming the file.
  void add(const std::filesystem::path& file_or_dir, bool required);
  void add(const PublicKey& key);

  [[nodiscard]] const PublicKey* find(std::string_view key_id) const;
  // Every key, in key id order (a cosign signature names no key: each is tried).
  [[nodiscard]] std::vector<const PublicKey*> keys() const;
  [[nodiscard]] std::vector<std::string> key_ids() const;
  [[nodiscard]] bool empty() const { return keys_.empty(); }

 private:
  std::map<std::string, PublicKey, std::less<>> keys_;
};

}  // namespace ccpack::manifest
