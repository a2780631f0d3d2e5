// Ed25519 and ECDSA P-256 through OpenSSL 3's EVP interface: EVP_DigestSign / EVP_DigestVerify one-shot, with no
// digest for Ed25519 (it hashes internally) and SHA-256 for ECDSA (DER signatures, what sigstore's verifiers and
// Go's ecdsa.VerifyASN1 take; raw r||s is read too, turned into DER), PEM for files. See keys.hpp for the rules on private keys.
#include "manifest/keys.hpp"

#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/buffer.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <system_error>

#include "util/base64.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"

namespace ccpack::manifest {
namespace fs = std::filesystem;

namespace {

// Bytes that may hold a secret: a fixed buffer (never reallocated, so never copied) wiped when dropped.
class SecretBytes {
 public:
  explicit SecretBytes(std::size_t capacity) : buf_(capacity) {}
  ~SecretBytes() { OPENSSL_cleanse(buf_.data(), buf_.size()); }
  SecretBytes(const SecretBytes&) = delete;
  SecretBytes& operator=(const SecretBytes&) = delete;
  [[nodiscard]] char* data() { return buf_.data(); }
  [[nodiscard]] std::size_t capacity() const { return buf_.size(); }
  [[nodiscard]] std::string_view view() const { return {buf_.data(), used}; }
  std::size_t used = 0;

 private:
  std::vector<char> buf_;
};

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;
struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;

std::shared_ptr<evp_pkey_st> own(EVP_PKEY* key) { return {key, EVP_PKEY_free}; }

// Never asks for a passphrase (OpenSSL would prompt on the terminal): encrypted keys simply fail to load.
int no_passphrase(char* /*buf*/, int /*size*/, int /*rwflag*/, void* /*u*/) { return -1; }

// Reads at most kMaxKeyFileBytes of `file` into `out`; `is_private` adds the permission rule.
void read_key_file(const fs::path& file, bool is_private, SecretBytes& out) {
  const std::string what = (is_private ? "private key " : "public key ") + quoted_path(file);
  UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (!fd.valid()) throw_errno("cannot open " + what);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw_errno("cannot stat " + what);
  if (!S_ISREG(st.st_mode)) throw Error(what + " is not a regular file");
  if (is_private && (st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    throw Error(what + " is readable or writable by group or others (mode " + mode + "); run: chmod 600 " + quoted_path(file));
  }
  out.used = pread_full(fd.get(), out.data(), out.capacity(), 0, what);
  if (out.used == out.capacity()) throw Error(what + " is larger than " + std::to_string(kMaxKeyFileBytes) + " bytes");
}

// The first 8 bytes of the SHA-256 of the encoded public key: Ed25519's raw 32 bytes, P-256's uncompressed point.
std::string id_of(EVP_PKEY* key) {
  std::vector<std::uint8_t> bytes(65);
  std::size_t len = bytes.size();
  bool ok = false;
  if (EVP_PKEY_get_id(key) == EVP_PKEY_ED25519) {
    ok = EVP_PKEY_get_raw_public_key(key, bytes.data(), &len) == 1 && len == 32;
  } else {
    ok = EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, bytes.data(), bytes.size(), &len) == 1;
  }
  ERR_clear_error();
  if (!ok) throw Error("cannot read the public key");
  Digest d = Sha256::of(bytes.data(), len);
  return to_hex(std::span<const std::uint8_t>(d.data(), 8));
}

// The algorithm of `key` when ccpack takes it, else nullopt.
std::optional<KeyAlgorithm> algorithm_of(EVP_PKEY* key) {
  if (EVP_PKEY_get_id(key) == EVP_PKEY_ED25519) return KeyAlgorithm::ed25519;
  char group[64] = {};
  std::size_t len = 0;
  bool p256 = EVP_PKEY_get_id(key) == EVP_PKEY_EC &&
              EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof group, &len) == 1 &&
              (std::string_view(group) == "prime256v1" || std::string_view(group) == "P-256");
  ERR_clear_error();
  if (p256) return KeyAlgorithm::ecdsa_p256;
  return std::nullopt;
}

// Frees `key` and throws unless its algorithm is one `use` takes (public keys: either).
KeyAlgorithm require_algorithm(EVP_PKEY* key, const std::string& what, KeyUse use) {
  std::optional<KeyAlgorithm> a = algorithm_of(key);
  if (use == KeyUse::manifest && a != KeyAlgorithm::ed25519) {
    EVP_PKEY_free(key);
    throw Error(what + " is not an Ed25519 key (make one with `ccpack keygen`)");
  }
  if (!a) {
    EVP_PKEY_free(key);
    throw Error(
        what +
        " is not an Ed25519 or ECDSA P-256 key (make one with `ccpack keygen`, or `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256`)");
  }
  return *a;
}

EVP_PKEY* parse_private(std::string_view pem, const std::string& what, KeyUse use) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) throw Error("out of memory reading " + what);
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio.get(), nullptr, no_passphrase, nullptr);
  ERR_clear_error();  // OpenSSL's own text is about the contents; the message below is ours
  if (key == nullptr) {
    throw Error(what + " is not an unencrypted PEM private key (BEGIN PRIVATE KEY), as `ccpack keygen` writes");
  }
  (void)require_algorithm(key, what, use);
  return key;
}

// The raw 32 bytes of an Ed25519 public key in the one PEM form keygen writes and cosign reads: a single
// "PUBLIC KEY" block holding the 44-byte SubjectPublicKeyInfo (a fixed 12-byte prefix, then the key). Made with
// EVP_PKEY_new_raw_public_key, it skips OpenSSL's PEM reader, which sets up its decoders first: about 5 ms of a
// ~20 ms no-op restore on the 2-core VM, counting the slower first verification after it. Any other text: nullopt,
// and PEM_read_bio_PUBKEY reads it.
std::optional<std::string> ed25519_raw_of_pem(std::string_view pem) {
  constexpr std::string_view kBegin = "-----BEGIN PUBLIC KEY-----\n";
  constexpr std::string_view kEnd = "-----END PUBLIC KEY-----";
  constexpr std::string_view kPrefix("\x30\x2a\x30\x05\x06\x03\x2b\x65\x70\x03\x21\x00", 12);
  if (!pem.starts_with(kBegin)) return std::nullopt;
  std::size_t end = pem.find(kEnd, kBegin.size());
  if (end == std::string_view::npos) return std::nullopt;
  std::string_view after = pem.substr(end + kEnd.size());
  if (!after.empty() && after != "\n") return std::nullopt;
  std::string body;
  for (char c : pem.substr(kBegin.size(), end - kBegin.size())) {
    if (c != '\n') body += c;
  }
  std::optional<std::string> der = base64_decode_strict(body);
  if (!der || der->size() != kPrefix.size() + 32 || !std::string_view(*der).starts_with(kPrefix)) return std::nullopt;
  return der->substr(kPrefix.size());
}

}  // namespace

std::optional<std::string> der_of_raw_p256(std::string_view raw) {
  if (raw.size() != kRawP256SignatureBytes) return std::nullopt;
  const auto* bytes = reinterpret_cast<const unsigned char*>(raw.data());
  ECDSA_SIG* sig = ECDSA_SIG_new();
  BIGNUM* r = BN_bin2bn(bytes, 32, nullptr);
  BIGNUM* s = BN_bin2bn(bytes + 32, 32, nullptr);
  std::optional<std::string> out;
  if (sig != nullptr && r != nullptr && s != nullptr && ECDSA_SIG_set0(sig, r, s) == 1) {
    r = s = nullptr;  // owned by sig now
    unsigned char* der = nullptr;
    int len = i2d_ECDSA_SIG(sig, &der);
    if (len > 0) out = std::string(reinterpret_cast<const char*>(der), static_cast<std::size_t>(len));
    OPENSSL_free(der);
  }
  BN_free(r);
  BN_free(s);
  ECDSA_SIG_free(sig);
  ERR_clear_error();
  return out;
}

PublicKey::PublicKey(std::shared_ptr<evp_pkey_st> key)
    : key_(std::move(key)), algorithm_(algorithm_of(key_.get()).value_or(KeyAlgorithm::ed25519)), key_id_(id_of(key_.get())) {}

std::string_view to_string(KeyAlgorithm algorithm) { return algorithm == KeyAlgorithm::ed25519 ? "ed25519" : "ecdsa-p256"; }

PublicKey PublicKey::from_pem(std::string_view pem, const std::string& what) {
  if (std::optional<std::string> raw = ed25519_raw_of_pem(pem)) {
    EVP_PKEY* key =
        EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, reinterpret_cast<const unsigned char*>(raw->data()), raw->size());
    ERR_clear_error();
    if (key != nullptr) return PublicKey(own(key));
  }
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) throw Error("out of memory reading " + what);
  EVP_PKEY* key = PEM_read_bio_PUBKEY(bio.get(), nullptr, no_passphrase, nullptr);
  ERR_clear_error();
  if (key == nullptr) throw Error(what + " is not a PEM public key (BEGIN PUBLIC KEY), as `ccpack keygen` writes to NAME.pub");
  (void)require_algorithm(key, what, KeyUse::cosign);
  return PublicKey(own(key));
}

PublicKey PublicKey::load(const fs::path& file) {
  SecretBytes text(kMaxKeyFileBytes);
  read_key_file(file, false, text);
  return from_pem(text.view(), "public key " + quoted_path(file));
}

bool PublicKey::verify(std::string_view message, const manifest::SignatureBytes& signature) const {
  if (algorithm_ != KeyAlgorithm::ed25519) return false;
  return verify_detached(message, std::string_view(reinterpret_cast<const char*>(signature.data()), signature.size()));
}

bool PublicKey::verify_detached(std::string_view message, std::string_view signature) const {
  const EVP_MD* md = algorithm_ == KeyAlgorithm::ed25519 ? nullptr : EVP_sha256();
  auto verify_as = [&](std::string_view sig) {
    MdCtxPtr ctx(EVP_MD_CTX_new());
    bool ok = ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, md, nullptr, key_.get()) == 1 &&
              EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(sig.data()), sig.size(),
                               reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1;
    ERR_clear_error();
    return ok;
  };
  if (verify_as(signature)) return true;
  if (algorithm_ != KeyAlgorithm::ecdsa_p256 || signature.size() != kRawP256SignatureBytes) return false;
  std::optional<std::string> der = der_of_raw_p256(signature);
  return der && verify_as(*der);
}

std::string PublicKey::pem() const {
  BioPtr bio(BIO_new(BIO_s_mem()));
  BUF_MEM* mem = nullptr;
  if (!bio || PEM_write_bio_PUBKEY(bio.get(), key_.get()) != 1 || BIO_get_mem_ptr(bio.get(), &mem) != 1) {
    ERR_clear_error();
    throw Error("cannot encode the public key");
  }
  return std::string(mem->data, mem->length);
}

PrivateKey::PrivateKey(std::shared_ptr<evp_pkey_st> key, const std::string& what)
    : key_(std::move(key)), algorithm_(algorithm_of(key_.get()).value_or(KeyAlgorithm::ed25519)) {
  try {
    key_id_ = id_of(key_.get());
  } catch (const Error&) {
    throw Error("cannot derive the public key of " + what);
  }
}

PrivateKey PrivateKey::generate() {
  EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
  ERR_clear_error();
  if (key == nullptr) throw Error("cannot generate an Ed25519 key");
  return PrivateKey(own(key), "the new key");
}

PrivateKey PrivateKey::load(const fs::path& file, KeyUse use) {
  SecretBytes text(kMaxKeyFileBytes);
  read_key_file(file, true, text);
  const std::string what = "private key " + quoted_path(file);
  return PrivateKey(own(parse_private(text.view(), what, use)), what);
}

PrivateKey PrivateKey::from_env(const char* var, KeyUse use) {
  const char* value = std::getenv(var);
  const std::string what = std::string("the private key in $") + var;
  if (value == nullptr || *value == '\0') throw Error(std::string("$") + var + " is not set");
  SecretBytes text(kMaxKeyFileBytes);
  std::size_t n = std::char_traits<char>::length(value);
  if (n >= text.capacity()) throw Error(what + " is larger than " + std::to_string(kMaxKeyFileBytes) + " bytes");
  std::copy(value, value + n, text.data());
  text.used = n;
  return PrivateKey(own(parse_private(text.view(), what, use)), what);
}

manifest::SignatureBytes PrivateKey::sign(std::string_view message) const {
  if (algorithm_ != KeyAlgorithm::ed25519) throw Error("key " + key_id_ + " is not an Ed25519 key and cannot sign a manifest");
  std::string sig = sign_detached(message);
  manifest::SignatureBytes out{};
  if (sig.size() != out.size()) throw Error("signing with key " + key_id_ + " failed");
  std::copy(sig.begin(), sig.end(), reinterpret_cast<char*>(out.data()));
  return out;
}

std::string PrivateKey::sign_detached(std::string_view message) const {
  const EVP_MD* md = algorithm_ == KeyAlgorithm::ed25519 ? nullptr : EVP_sha256();
  std::string sig(80, '\0');  // Ed25519: 64 bytes; a DER ECDSA P-256 signature: at most 72
  std::size_t len = sig.size();
  MdCtxPtr ctx(EVP_MD_CTX_new());
  bool ok = ctx && EVP_DigestSignInit(ctx.get(), nullptr, md, nullptr, key_.get()) == 1 &&
            EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len,
                           reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1;
  ERR_clear_error();
  if (!ok) throw Error("signing with key " + key_id_ + " failed");
  sig.resize(len);
  return sig;
}

PublicKey PrivateKey::public_key() const {
  BioPtr bio(BIO_new(BIO_s_mem()));
  EVP_PKEY* pub = nullptr;
  if (bio && PEM_write_bio_PUBKEY(bio.get(), key_.get()) == 1)
    pub = PEM_read_bio_PUBKEY(bio.get(), nullptr, no_passphrase, nullptr);
  ERR_clear_error();
  if (pub == nullptr) throw Error("cannot derive the public key of key " + key_id_);
  return PublicKey(own(pub));
}

void PrivateKey::write_pem(const fs::path& file) const {
  BioPtr bio(BIO_new(BIO_s_secmem()));
  BUF_MEM* mem = nullptr;
  if (!bio || PEM_write_bio_PrivateKey(bio.get(), key_.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1 ||
      BIO_get_mem_ptr(bio.get(), &mem) != 1) {
    ERR_clear_error();
    throw Error("cannot encode the private key");
  }
  struct Wipe {
    BUF_MEM* m;
    ~Wipe() { OPENSSL_cleanse(m->data, m->length); }
  } wipe{mem};
  UniqueFd fd(::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) {
    if (errno == EEXIST) throw Error(quoted_path(file) + " already exists; ccpack keygen never overwrites a key");
    throw_errno("cannot create " + quoted_path(file));
  }
  try {
    if (::fchmod(fd.get(), 0600) != 0) throw_errno("cannot set the mode of " + quoted_path(file));
    write_all(fd.get(), mem->data, mem->length, quoted_path(file));
    if (::fsync(fd.get()) != 0) throw_errno("cannot flush " + quoted_path(file));
  } catch (...) {
    ::unlink(file.c_str());
    throw;
  }
}

manifest::Signature PrivateKey::sign_manifest(std::string_view manifest_bytes, const std::string& note) const {
  manifest::Signature s;
  s.key_id = key_id_;
  s.signed_at = manifest::signing_time();
  s.note = note;
  s.signature = sign(manifest::signed_message(manifest_bytes, s));
  return s;
}

void TrustStore::add(const PublicKey& key) { keys_.emplace(key.key_id(), key); }

void TrustStore::add(const fs::path& file_or_dir, bool required) {
  struct stat st {};
  if (::stat(file_or_dir.c_str(), &st) != 0) {
    if (errno == ENOENT && !required) return;
    throw_errno("cannot read trusted keys at " + quoted_path(file_or_dir));
  }
  if (!S_ISDIR(st.st_mode)) {
    add(PublicKey::load(file_or_dir));
    return;
  }
  std::error_code ec;
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(file_or_dir, ec)) {
    std::string name = e.path().filename().string();
    if (name.starts_with('.') || !name.ends_with(".pub")) continue;
    std::error_code type_ec;
    if (e.is_regular_file(type_ec)) files.push_back(e.path());  // follows symlinks, as mounted secrets are
  }
  if (ec) throw Error("cannot list trusted keys in " + quoted_path(file_or_dir) + ": " + ec.message());
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) add(PublicKey::load(f));
}

const PublicKey* TrustStore::find(std::string_view key_id) const {
  auto it = keys_.find(key_id);
  return it == keys_.end() ? nullptr : &it->second;
}

std::vector<const PublicKey*> TrustStore::keys() const {
  std::vector<const PublicKey*> out;
  for (const auto& [id, key] : keys_) out.push_back(&key);
  return out;
}

std::vector<std::string> TrustStore::key_ids() const {
  std::vector<std::string> ids;
  for (const auto& [id, key] : keys_) ids.push_back(id);
  return ids;
}

}  // namespace ccpack::manifest
