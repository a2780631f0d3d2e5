// manifest/keys.cpp against known answers and hostile inputs: RFC 8032's first Ed25519 test vector (key id, PEM,
// signature bytes), keys of another algorithm, encrypted keys, files that are not regular or are too large, the
// environment variable unset or oversized, and the trust store's folder rules (sorted, *.pub only, links followed,
// a bad key named). Every message is checked whole.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "manifest/keys.hpp"
#include "unit/support.hpp"
#include "util/base64.hpp"
#include "util/error.hpp"
#include "util/sha256.hpp"

using namespace ccpack;
using manifest::PrivateKey;
using manifest::PublicKey;
using manifest::TrustStore;
namespace fs = std::filesystem;

namespace {

using test::ccpack_error;

// RFC 8032, section 7.1, TEST 1: the secret key as PKCS#8, its public key as SPKI.
const std::string kRfcPrivate =
    "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIJ1hsZ3v/VpguoRK9JLsLMREScVpezJpGXA7rAMcrn9g\n-----END PRIVATE KEY-----\n";
const std::string kRfcPublic =
    "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\n-----END PUBLIC KEY-----\n";
// The first 8 bytes of SHA-256 of the raw public key d75a9801...f707511a.
const std::string kRfcKeyId = "21fe31dfa154a261";
// Its signature of the empty message.
const std::string kRfcSignature =
    "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b";

// A P-384 public key: neither Ed25519 nor P-256.
const std::string kP384Public =
    "-----BEGIN PUBLIC KEY-----\nMHYwEAYHKoZIzj0CAQYFK4EEACIDYgAEBVOwPpSRejrbW8qYhZUBK5ly2XC44lUS\n"
    "X7dewHqLKHpaUIYxOePU0vhkNOFRlw/YhtukfzHIkWZ9JQDP7sDUw4uxo5KKBqWY\nKNareDDisoH5CpTOMxly7C6i7P/BZAGP\n-----END PUBLIC KEY-----\n";
// The P-256 key's id: the first 8 bytes of SHA-256 of its 65-byte uncompressed point.
const std::string kEcKeyId = "d5a51749bcef99d7";
// `openssl dgst -sha256 -sign ec.key` of "hello": ASN.1 DER, base64.
const std::string kEcSignatureOfHello =
    "MEQCIEqqxG1qnjUZJZaJRHUMQ6fBlVzG9d9lMt7W1pFV2fJ3AiBHINFzH1ZMpQekBAYK+tOkK410+KRyRrwCJYEQ3fvKCA==";
// A P-256 key made for this test (not Ed25519).
const std::string kEcPrivate =
    "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgePkPNVkVsCMZ4sc+\n"
    "pTlJ2C/xplMdEDQpcmiIrPknFX6hRANCAASpaBeqXigenMfigdBuRWSZ+So02n/G\n"
    "0ecqv+RBwONrATDlQGbJh4IX9/KBNekR3940szrKh/jbw1MS7yOBT3B5\n-----END PRIVATE KEY-----\n";
const std::string kEcPublic =
    "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEqWgXql4oHpzH4oHQbkVkmfkqNNp/\n"
    "xtHnKr/kQcDjawEw5UBmyYeCF/fygTXpEd/eNLM6yof428NTEu8jgU9weQ==\n-----END PUBLIC KEY-----\n";
// An Ed25519 key encrypted with the passphrase "x": never prompted for, so it does not load.
const std::string kEncrypted =
    "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIGbMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAhYRFKaCeIqmAICCAAw\n"
    "DAYIKoZIhvcNAgkFADAdBglghkgBZQMEAQIEEByFajY77OcsZvhMGiTgztIEQEG3\n"
    "GgImJFeHUvEq3Vx5Nck8MB7aAEiKooUz10thiKXiprEimMdl79DJB1MxurCu1KRl\nuznAxyrLZzAzFXUscyg=\n"
    "-----END ENCRYPTED PRIVATE KEY-----\n";

std::string q(const fs::path& p) { return "'" + p.string() + "'"; }

}  // namespace

TEST_CASE("keys: RFC 8032 test 1 gives its key id, its public PEM and its signature", "[keys]") {
  test::ScratchDir t;
  test::write_file(t / "rfc.key", kRfcPrivate, 0600);
  PrivateKey key = PrivateKey::load(t / "rfc.key");
  CHECK(key.key_id() == kRfcKeyId);
  CHECK(key.public_key().pem() == kRfcPublic);
  CHECK(key.public_key().key_id() == kRfcKeyId);
  manifest::SignatureBytes sig = key.sign("");
  CHECK(to_hex(std::span<const std::uint8_t>(sig.data(), sig.size())) == kRfcSignature);
  PublicKey pub = PublicKey::from_pem(kRfcPublic, "rfc");
  CHECK(pub.key_id() == kRfcKeyId);
  CHECK(pub.verify("", sig));
  CHECK_FALSE(pub.verify("x", sig));
  manifest::SignatureBytes zero{};
  CHECK_FALSE(pub.verify("", zero));
  // The key the environment holds is the same key.
  test::ScopedEnv env(manifest::kSigningKeyVar, kRfcPrivate);
  CHECK(PrivateKey::from_env(manifest::kSigningKeyVar).key_id() == kRfcKeyId);
}

TEST_CASE("keys: another algorithm, an encrypted key, a public key for a private one are refused by name", "[keys]") {
  test::ScratchDir t;
  test::write_file(t / "ec.key", kEcPrivate, 0600);
  CHECK(ccpack_error([&] { (void)PrivateKey::load(t / "ec.key"); }) ==
        "private key " + q(t / "ec.key") + " is not an Ed25519 key (make one with `ccpack keygen`)");
  CHECK(ccpack_error([&] { (void)PublicKey::from_pem(kP384Public, "public key 'ec.pub'"); }) ==
        "public key 'ec.pub' is not an Ed25519 or ECDSA P-256 key (make one with `ccpack keygen`, or `openssl genpkey "
        "-algorithm EC -pkeyopt ec_paramgen_curve:P-256`)");
  test::write_file(t / "enc.key", kEncrypted, 0600);
  CHECK(ccpack_error([&] { (void)PrivateKey::load(t / "enc.key"); }) ==
        "private key " + q(t / "enc.key") +
            " is not an unencrypted PEM private key (BEGIN PRIVATE KEY), as `ccpack keygen` writes");
  test::write_file(t / "priv.pub", kRfcPrivate);
  CHECK(ccpack_error([&] { (void)PublicKey::load(t / "priv.pub"); }) ==
        "public key " + q(t / "priv.pub") + " is not a PEM public key (BEGIN PUBLIC KEY), as `ccpack keygen` writes to NAME.pub");
  // A truncated PEM (its last line cut) is no key either.
  test::write_file(t / "cut.key", kRfcPrivate.substr(0, kRfcPrivate.size() - 10), 0600);
  CHECK(ccpack_error([&] { (void)PrivateKey::load(t / "cut.key"); }) ==
        "private key " + q(t / "cut.key") +
            " is not an unencrypted PEM private key (BEGIN PRIVATE KEY), as `ccpack keygen` writes");
}

TEST_CASE("keys: missing, not regular, too large, exposed files are refused before they are parsed", "[keys]") {
  test::ScratchDir t;
  CHECK(ccpack_error([&] { (void)PrivateKey::load(t / "none"); }) ==
        "cannot open private key " + q(t / "none") + ": No such file or directory");
  CHECK(ccpack_error([&] { (void)PublicKey::load(t / "none.pub"); }) ==
        "cannot open public key " + q(t / "none.pub") + ": No such file or directory");
  fs::create_directories(t / "dir.key");
  ::chmod((t / "dir.key").c_str(), 0700);
  CHECK(ccpack_error([&] { (void)PrivateKey::load(t / "dir.key"); }) ==
        "private key " + q(t / "dir.key") + " is not a regular file");
  test::write_file(t / "big.pub", kRfcPublic + std::string(manifest::kMaxKeyFileBytes, '\n'));
  CHECK(ccpack_error([&] { (void)PublicKey::load(t / "big.pub"); }) ==
        "public key " + q(t / "big.pub") + " is larger than 16384 bytes");
  test::write_file(t / "exact.key", std::string(manifest::kMaxKeyFileBytes, 'x'), 0600);
  CHECK(ccpack_error([&] { (void)PrivateKey::load(t / "exact.key"); }) ==
        "private key " + q(t / "exact.key") + " is larger than 16384 bytes");
  test::write_file(t / "open.key", kRfcPrivate, 0604);
  CHECK(ccpack_error([&] { (void)PrivateKey::load(t / "open.key"); }) ==
        "private key " + q(t / "open.key") + " is readable or writable by group or others (mode 0604); run: chmod 600 " +
            q(t / "open.key"));
  // The mode rule is for private keys only: a public key may be world-readable.
  test::write_file(t / "open.pub", kRfcPublic, 0644);
  CHECK(PublicKey::load(t / "open.pub").key_id() == kRfcKeyId);
  // A link to a private key is followed, and the rule is the target's.
  test::write_file(t / "real.key", kRfcPrivate, 0600);
  fs::create_symlink(t / "real.key", t / "link.key");
  CHECK(PrivateKey::load(t / "link.key").key_id() == kRfcKeyId);
}

TEST_CASE("keys: the environment variable unset, empty, garbage or too large", "[keys]") {
  const char* var = manifest::kSigningKeyVar;
  {
    test::ScopedEnv unset(var, std::nullopt);
    CHECK(ccpack_error([&] { (void)PrivateKey::from_env(var); }) == "$CCPACK_SIGNING_KEY is not set");
  }
  {
    test::ScopedEnv empty(var, "");
    CHECK(ccpack_error([&] { (void)PrivateKey::from_env(var); }) == "$CCPACK_SIGNING_KEY is not set");
  }
  {
    test::ScopedEnv big(var, std::string(manifest::kMaxKeyFileBytes, 'k'));
    CHECK(ccpack_error([&] { (void)PrivateKey::from_env(var); }) ==
          "the private key in $CCPACK_SIGNING_KEY is larger than 16384 bytes");
  }
  {
    test::ScopedEnv ec(var, kEcPrivate);
    CHECK(ccpack_error([&] { (void)PrivateKey::from_env(var); }) ==
          "the private key in $CCPACK_SIGNING_KEY is not an Ed25519 key (make one with `ccpack keygen`)");
  }
  {
    // A public key in the variable: no private key, and the message holds none of the variable's text.
    test::ScopedEnv pub(var, kRfcPublic);
    std::string message = ccpack_error([&] { (void)PrivateKey::from_env(var); });
    CHECK(
        message ==
        "the private key in $CCPACK_SIGNING_KEY is not an unencrypted PEM private key (BEGIN PRIVATE KEY), as `ccpack keygen` writes");
    CHECK(message.find("MCow") == std::string::npos);
  }
}

TEST_CASE("keys: write_pem creates the file 0600 whatever the umask, never over a file or a link", "[keys]") {
  test::ScratchDir t;
  PrivateKey key = PrivateKey::generate();
  mode_t old = ::umask(0);
  key.write_pem(t / "k");
  ::umask(old);
  struct stat st {};
  REQUIRE(::stat((t / "k").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);
  CHECK(PrivateKey::load(t / "k").key_id() == key.key_id());
  fs::create_symlink(t / "elsewhere", t / "link");
  CHECK(ccpack_error([&] { key.write_pem(t / "link"); }) ==
        q(t / "link") + " already exists; ccpack keygen never overwrites a key");
  CHECK_FALSE(fs::exists(t / "elsewhere"));
  CHECK(ccpack_error([&] { key.write_pem(t / "no/such/k"); }) ==
        "cannot create " + q(t / "no/such/k") + ": No such file or directory");
}

TEST_CASE("trust store: *.pub files in name order, links followed, folders and other names skipped", "[keys]") {
  test::ScratchDir t;
  PrivateKey other = PrivateKey::generate();
  test::write_file(t / "keys/b.pub", other.public_key().pem());
  test::write_file(t / "store/rfc.pub", kRfcPublic);
  fs::create_symlink(t / "store/rfc.pub", t / "keys/a.pub");  // a mounted secret is a link
  fs::create_directories(t / "keys/dir.pub");
  test::write_file(t / "keys/c.pub.bak", "not a key");
  test::write_file(t / "keys/..data.pub", "not read twice");
  TrustStore store;
  CHECK(store.empty());
  store.add(t / "keys", true);
  std::vector<std::string> want = {kRfcKeyId, other.key_id()};
  std::sort(want.begin(), want.end());
  CHECK(store.key_ids() == want);
  CHECK(store.find(kRfcKeyId)->pem() == kRfcPublic);
  CHECK(store.find("0000000000000000") == nullptr);
  // The same key again (a file, then a key) keeps one entry.
  store.add(t / "store/rfc.pub", true);
  store.add(PublicKey::from_pem(kRfcPublic, "again"));
  CHECK(store.key_ids().size() == 2);
  // A bad key among good ones: named, and the ones before it are already in.
  test::write_file(t / "bad/a.pub", kRfcPublic);
  test::write_file(t / "bad/b.pub", kP384Public);
  TrustStore partial;
  CHECK(ccpack_error([&] { partial.add(t / "bad", true); }) ==
        "public key " + q(t / "bad/b.pub") +
            " is not an Ed25519 or ECDSA P-256 key (make one with `ccpack keygen`, or "
            "`openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256`)");
  CHECK(partial.key_ids() == std::vector<std::string>{kRfcKeyId});
  CHECK(ccpack_error([&] { partial.add(t / "missing", true); }) ==
        "cannot read trusted keys at " + q(t / "missing") + ": No such file or directory");
}

TEST_CASE("keys: ECDSA P-256 for cosign signatures: id, DER over SHA-256, never a manifest signature", "[keys]") {
  test::ScratchDir t;
  test::write_file(t / "ec.key", kEcPrivate, 0600);
  PrivateKey key = PrivateKey::load(t / "ec.key", manifest::KeyUse::cosign);
  PublicKey pub = PublicKey::from_pem(kEcPublic, "ec.pub");
  CHECK(key.key_id() == kEcKeyId);
  CHECK(pub.key_id() == kEcKeyId);
  CHECK(key.public_key().key_id() == kEcKeyId);
  CHECK(pub.algorithm() == manifest::KeyAlgorithm::ecdsa_p256);
  CHECK(manifest::to_string(pub.algorithm()) == "ecdsa-p256");
  // OpenSSL's own signature verifies (the form Go's ecdsa.VerifyASN1 takes), and so does ours; a changed message not.
  CHECK(pub.verify_detached("hello", *base64_decode(kEcSignatureOfHello)));
  std::string ours = key.sign_detached("payload");
  CHECK(ours.size() >= 70);
  CHECK(ours.size() <= 72);
  CHECK(pub.verify_detached("payload", ours));
  CHECK_FALSE(pub.verify_detached("payloaD", ours));
  CHECK_FALSE(pub.verify_detached("payload", ""));
  // No manifest signature by an ECDSA key: signing refuses, verifying says no.
  CHECK(ccpack_error([&] { (void)key.sign("m"); }) == "key " + kEcKeyId + " is not an Ed25519 key and cannot sign a manifest");
  CHECK_FALSE(pub.verify("m", manifest::SignatureBytes{}));
  // In a trust store beside Ed25519 keys.
  test::write_file(t / "store/ec.pub", kEcPublic);
  test::write_file(t / "store/rfc.pub", kRfcPublic);
  TrustStore store;
  store.add(t / "store", true);
  CHECK(store.keys().size() == 2);
}

namespace {

// The raw r||s form of a DER ECDSA P-256 signature: each INTEGER without its sign byte, left-padded to 32 bytes.
std::string raw_of_der(const std::string& der) {
  std::string raw;
  std::size_t at = 2;  // SEQUENCE, length (< 128 for P-256)
  for (int i = 0; i < 2; ++i) {
    std::size_t len = static_cast<unsigned char>(der.at(at + 1));
    std::string n = der.substr(at + 2, len);
    while (n.size() > 32 && n[0] == '\0') n.erase(0, 1);
    raw += std::string(32 - n.size(), '\0') + n;
    at += 2 + len;
  }
  return raw;
}

}  // namespace

TEST_CASE("keys: ECDSA P-256 raw r||s signatures verify as their DER form does, as sigstore reads them", "[keys]") {
  test::ScratchDir t;
  test::write_file(t / "ec.key", kEcPrivate, 0600);
  PrivateKey key = PrivateKey::load(t / "ec.key", manifest::KeyUse::cosign);
  PublicKey pub = PublicKey::from_pem(kEcPublic, "ec.pub");
  for (int i = 0; i < 8; ++i) {  // r or s with a leading zero byte now and then
    std::string der = key.sign_detached("payload " + std::to_string(i));
    std::string raw = raw_of_der(der);
    REQUIRE(raw.size() == manifest::kRawP256SignatureBytes);
    CHECK(manifest::der_of_raw_p256(raw) == der);
    CHECK(pub.verify_detached("payload " + std::to_string(i), raw));
    CHECK_FALSE(pub.verify_detached("payload x", raw));
    std::string flipped = raw;
    flipped[40] = static_cast<char>(flipped[40] ^ 1);
    CHECK_FALSE(pub.verify_detached("payload " + std::to_string(i), flipped));
    CHECK_FALSE(pub.verify_detached("payload " + std::to_string(i), raw.substr(0, 63)));
    CHECK_FALSE(pub.verify_detached("payload " + std::to_string(i), raw + '\0'));
  }
  CHECK_FALSE(manifest::der_of_raw_p256(std::string(63, 'a')));
  // An Ed25519 key reads 64 bytes as its own signature only.
  PrivateKey ed = PrivateKey::generate();
  std::string sig = ed.sign_detached("m");
  CHECK(ed.public_key().verify_detached("m", sig));
  CHECK_FALSE(pub.verify_detached("m", sig));
}

TEST_CASE("keys: Ed25519 detached signatures are pure Ed25519 over the message (RFC 8032)", "[keys]") {
  test::ScratchDir t;
  test::write_file(t / "rfc.key", kRfcPrivate, 0600);
  PrivateKey key = PrivateKey::load(t / "rfc.key", manifest::KeyUse::cosign);
  CHECK(to_hex(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(key.sign_detached("").data()), 64)) ==
        kRfcSignature);
  CHECK(PublicKey::from_pem(kRfcPublic, "rfc").verify_detached("", key.sign_detached("")));
}

TEST_CASE("keys: an Ed25519 public PEM in keygen's form and in any other form OpenSSL reads are the same key", "[keys]") {
  test::ScratchDir t;
  test::write_file(t / "rfc.key", kRfcPrivate, 0600);
  manifest::SignatureBytes sig = PrivateKey::load(t / "rfc.key").sign("message");
  std::string crlf;
  for (char c : kRfcPublic) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  // keygen's form (read without OpenSSL's PEM reader), text before the block, CRLF lines, a second newline after it
  for (const std::string& pem : {kRfcPublic, "a comment line\n" + kRfcPublic, crlf, kRfcPublic + "\n"}) {
    PublicKey pub = PublicKey::from_pem(pem, "rfc");
    CHECK(pub.key_id() == kRfcKeyId);
    CHECK(pub.pem() == kRfcPublic);
    CHECK(pub.verify("message", sig));
    CHECK_FALSE(pub.verify("other message", sig));
  }
  // Not a key: a block whose bytes hold an Ed25519 prefix and a short key.
  std::string short_key =
      "-----BEGIN PUBLIC KEY-----\nMCkwBQYDK2VwAyAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n-----END PUBLIC KEY-----\n";
  CHECK(test::error_of([&] { (void)PublicKey::from_pem(short_key, "short"); }) ==
        "short is not a PEM public key (BEGIN PUBLIC KEY), as `ccpack keygen` writes to NAME.pub");
}
