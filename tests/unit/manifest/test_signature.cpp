// The signature block grammar (each rejection names its field), Ed25519 keys (sign, verify, key ids, file
// permissions, never overwriting), the trust store's folders, and the trust check on a real signed archive.
#include <sys/stat.h>

#include <catch2/catch.hpp>

#include "manifest/format.hpp"
#include "manifest/keys.hpp"
#include "manifest/signature.hpp"
#include "pack/packer.hpp"
#include "unit/support.hpp"
#include "unpack/archive.hpp"
#include "unpack/trust.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"
#include "util/sha256.hpp"

using namespace ccpack;
using namespace ccpack::manifest;
using namespace ccpack::unpack;
namespace fs = std::filesystem;

namespace {

Signature signature_of(const std::string& id, const std::string& note = "") {
  Signature s;
  s.key_id = id;
  s.signed_at = "2026-11-30T12:00:00Z";
  s.note = note;
  for (std::size_t i = 0; i < s.signature.size(); ++i) s.signature[i] = static_cast<std::uint8_t>(i * 7);
  return s;
}

const std::string kGood = encode_signature_block({signature_of("0123456789abcdef", "pipeline 42")});

// The block with `from` replaced by `to` (first occurrence).
std::string edited(const std::string& from, const std::string& to) {
  std::string b = kGood;
  auto at = b.find(from);
  REQUIRE(at != std::string::npos);
  return b.replace(at, from.size(), to);
}

void rejects(const std::string& block, const std::string& message) {
  CHECK_THROWS_WITH(parse_signature_block(block), "signature block: " + message);
  CHECK_THROWS_AS(parse_signature_block(block), IntegrityError);
}

}  // namespace

TEST_CASE("signature block: round trip, empty block is []") {
  CHECK(encode_signature_block({}) == "[]");
  CHECK(parse_signature_block("[]").empty());
  auto list = parse_signature_block(kGood);
  REQUIRE(list.size() == 1);
  CHECK(list[0].key_id == "0123456789abcdef");
  CHECK(list[0].note == "pipeline 42");
  CHECK(list[0].signature == signature_of("x").signature);
  CHECK(kGood.find(R"({"key_id":"0123456789abcdef","algorithm":"ed25519","signed_at":"2026-11-30T12:00:00Z",)"
                   R"("note":"pipeline 42","signature":")") == 1);
  std::string two = encode_signature_block({signature_of("0123456789abcdef"), signature_of("fedcba9876543210", "ü ok")});
  CHECK(encode_signature_block(parse_signature_block(two)) == two);
  CHECK(two.find("note") == two.rfind("note"));  // an empty note is left out
}

TEST_CASE("signature block: each malformed field is named") {
  rejects("", "is not valid JSON (byte 1)");
  rejects("{}", "is not a JSON array");
  rejects("[1e999]", "is not valid JSON");  // found by fuzz_signature: nlohmann throws out_of_range, not parse_error
  rejects("[1]", "signatures[0] is not an object");
  rejects(edited("\"key_id\":\"0123456789abcdef\",", ""), "signatures[0].key_id is missing");
  rejects(edited("0123456789abcdef", "0123456789ABCDEF"), "signatures[0].key_id is not 16 lowercase hex digits");
  rejects(edited("0123456789abcdef", "0123"), "signatures[0].key_id is not 16 lowercase hex digits");
  rejects(edited("\"0123456789abcdef\"", "7"), "signatures[0].key_id is not a string");
  rejects(edited("ed25519", "rsa\\u001b[31m"), "signatures[0].algorithm is 'rsa\\x1b[31m', not ed25519");
  rejects(edited("2026-11-30T12:00:00Z", "2026-13-30T12:00:00Z"),
          "signatures[0].signed_at is not a UTC time YYYY-MM-DDTHH:MM:SSZ");
  rejects(edited("2026-11-30T12:00:00Z", "2026-11-30 12:00:00"),
          "signatures[0].signed_at is not a UTC time YYYY-MM-DDTHH:MM:SSZ");
  rejects(edited("pipeline 42", "a\\u0007b"), "signatures[0].note holds a control character");
  rejects(edited("pipeline 42", "a\\u0085b"), "signatures[0].note holds a control character");
  rejects(edited("pipeline 42", std::string(257, 'n')), "signatures[0].note is longer than 256 bytes");
  rejects(edited("pipeline 42", ""), "signatures[0].note is empty (leave it out instead)");
  rejects(edited("\"signature\":\"AAcO", "\"signature\":\"AAc"), "signatures[0].signature is not the base64 of 64 bytes");
  rejects(edited("\"signature\":\"", "\"signature\":\"!"), "signatures[0].signature is not the base64 of 64 bytes");
  rejects(edited("{\"key_id\"", "{\"extra\":1,\"key_id\""), "signatures[0] has a field 'extra' that version 1 does not define");
  rejects(edited("\"algorithm\"", "\"key_id\":\"0123456789abcdef\",\"algorithm\""), "signatures[0].key_id appears twice");
  rejects(edited("\"pipeline 42\"", "[\"x\"]"), "signatures[0] holds a nested array or object");
  rejects(std::string(60000, '['), "signatures[0] holds a nested array or object");
  rejects(edited("[{", "[ {"), "is not in canonical form (compact JSON, fields in order)");
  rejects(edited("\"signed_at\":\"2026-11-30T12:00:00Z\",", ""), "signatures[0].signed_at is missing");
  // Order of fields is part of the canonical form.
  std::string swapped = kGood;
  swapped.replace(swapped.find("\"algorithm\":\"ed25519\","), 22, "");
  swapped.insert(swapped.find(",\"signature\""), ",\"algorithm\":\"ed25519\"");
  rejects(swapped, "is not in canonical form (compact JSON, fields in order)");
  rejects(encode_signature_block({signature_of("0123456789abcdef"), signature_of("0123456789abcdef")}),
          "signatures[1].key_id repeats signatures[0]");
  std::vector<Signature> many;
  for (int i = 0; i < 33; ++i) {
    char id[17];
    std::snprintf(id, sizeof id, "%016x", i);
    many.push_back(signature_of(id));
  }
  rejects(encode_signature_block(many), "holds more than 32 signatures");
  rejects("[" + std::string(70000, ' ') + "]", "is 70002 bytes, more than 65536");
}

TEST_CASE("notes, times and printing") {
  CHECK_FALSE(note_problem("git 1a2b3c, pipeline #7, 名前"));
  CHECK(note_problem("\xc3") == "is not UTF-8");
  CHECK(note_problem("\xc0\x80") == "is not UTF-8");      // overlong NUL
  CHECK(note_problem("\xed\xa0\x80") == "is not UTF-8");  // surrogate
  CHECK(note_problem("tab\there") == "holds a control character");
  CHECK(escaped("ok \x1b[2J\\ \xc3\xbc") == "ok \\x1b[2J\\\\ \xc3\xbc");  // util/escape: valid UTF-8 kept
  ::setenv("SOURCE_DATE_EPOCH", "1700000000", 1);
  CHECK(signing_time() == "2023-11-14T22:13:20Z");
  ::setenv("SOURCE_DATE_EPOCH", "-1", 1);
  CHECK_THROWS_AS(signing_time(), UsageError);
  ::unsetenv("SOURCE_DATE_EPOCH");
  CHECK(signing_time().size() == 20);
}

TEST_CASE("signed message binds the domain, the manifest digest and every field") {
  Signature s = signature_of("0123456789abcdef", "n");
  std::string m = signed_message("{\"format\":1}", s);
  Digest d = Sha256::of(std::string_view("{\"format\":1}"));
  std::string expected("ccpack-signature-v1\0", 20);
  expected.append(reinterpret_cast<const char*>(d.data()), d.size());
  expected += std::string("\0ed25519\0", 9) + "0123456789abcdef" + std::string(1, '\0') + "2026-11-30T12:00:00Z" +
              std::string(1, '\0') + "n";
  CHECK(m == expected);
}

TEST_CASE("Ed25519: sign, verify, key ids, tampering") {
  PrivateKey key = PrivateKey::generate();
  PublicKey pub = PublicKey::from_pem(key.public_key().pem(), "test key");
  CHECK(pub.key_id() == key.key_id());
  CHECK(key.key_id().size() == 16);
  CHECK(PrivateKey::generate().key_id() != key.key_id());
  Signature s = key.sign_manifest("{\"m\":1}", "note");
  CHECK(s.key_id == key.key_id());
  CHECK(pub.verify(signed_message("{\"m\":1}", s), s.signature));
  CHECK_FALSE(pub.verify(signed_message("{\"m\":2}", s), s.signature));
  Signature renoted = s;
  renoted.note = "other";
  CHECK_FALSE(pub.verify(signed_message("{\"m\":1}", renoted), s.signature));
  Signature flipped = s;
  flipped.signature[10] ^= 1;
  CHECK_FALSE(pub.verify(signed_message("{\"m\":1}", s), flipped.signature));
  CHECK_FALSE(PrivateKey::generate().public_key().verify(signed_message("{\"m\":1}", s), s.signature));
}

TEST_CASE("private key files: mode 0600, never overwritten, exposed keys refused") {
  test::ScratchDir dir;
  PrivateKey key = PrivateKey::generate();
  key.write_pem(dir / "k");
  struct stat st {};
  REQUIRE(::stat((dir / "k").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(test::slurp(dir / "k").starts_with("-----BEGIN PRIVATE KEY-----\n"));
  CHECK(PrivateKey::load(dir / "k").key_id() == key.key_id());
  CHECK_THROWS_WITH(PrivateKey::generate().write_pem(dir / "k"), Catch::Contains("already exists"));
  CHECK(PrivateKey::load(dir / "k").key_id() == key.key_id());
  ::chmod((dir / "k").c_str(), 0640);
  CHECK_THROWS_WITH(PrivateKey::load(dir / "k"),
                    "private key '" + (dir / "k").string() +
                        "' is readable or writable by group or others (mode 0640); run: chmod 600 '" + (dir / "k").string() +
                        "'");
  test::write_file(dir / "pubaspriv", key.public_key().pem(), 0600);
  CHECK_THROWS_WITH(PrivateKey::load(dir / "pubaspriv"), Catch::Contains("is not an unencrypted PEM private key"));
  ::setenv(kSigningKeyVar, test::slurp(dir / "k").c_str(), 1);
  CHECK(PrivateKey::from_env(kSigningKeyVar).key_id() == key.key_id());
  ::setenv(kSigningKeyVar, "garbage", 1);
  CHECK_THROWS_WITH(PrivateKey::from_env(kSigningKeyVar), Catch::Contains("the private key in $CCPACK_SIGNING_KEY is not"));
  ::unsetenv(kSigningKeyVar);
}

TEST_CASE("trust store: files, folders of *.pub, errors named") {
  test::ScratchDir dir;
  PrivateKey a = PrivateKey::generate();
  PrivateKey b = PrivateKey::generate();
  test::write_file(dir / "d/a.pub", a.public_key().pem());
  test::write_file(dir / "d/b.pub", b.public_key().pem());
  test::write_file(dir / "d/README", "not a key");
  test::write_file(dir / "d/.hidden.pub", "not a key either");
  TrustStore store;
  store.add(dir / "d", true);
  CHECK(store.key_ids().size() == 2);
  CHECK(store.find(a.key_id()) != nullptr);
  CHECK(store.find(b.key_id())->key_id() == b.key_id());
  store.add(dir / "missing", false);
  CHECK_THROWS_WITH(store.add(dir / "missing", true), Catch::Contains("missing'"));
  test::write_file(dir / "e/bad.pub", "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n");
  CHECK_THROWS_WITH(store.add(dir / "e", true),
                    "public key '" + (dir / "e/bad.pub").string() +
                        "' is not a PEM public key (BEGIN PUBLIC KEY), as `ccpack keygen` writes to NAME.pub");
}

TEST_CASE("trust check on a signed archive") {
  test::ScratchDir dir;
  test::write_file(dir / "ind/a.py", "print(1)\n");
  PrivateKey signer = PrivateKey::generate();
  PrivateKey other = PrivateKey::generate();
  pack::PackOptions po;
  po.sign = [&](std::string_view m) { return std::vector<Signature>{signer.sign_manifest(m, "unit")}; };
  std::vector<CacheDir> dirs{{"inductor", ComponentKind::inductor, dir / "ind", "test"}};
  (void)pack::create_archive(dirs, dir / "s.ccpack", po);
  test::write_file(dir / "ind/b.py", "print(2)\n");  // another content for the unsigned one
  (void)pack::create_archive(dirs, dir / "u.ccpack", pack::PackOptions{});
  unpack::Archive s = unpack::Archive::open(dir / "s.ccpack");
  unpack::Archive u = unpack::Archive::open(dir / "u.ccpack");
  REQUIRE(s.signatures.size() == 1);
  CHECK(u.header.signatures == "[]");

  TrustStore trusted;
  trusted.add(signer.public_key());
  TrustStore wrong;
  wrong.add(other.public_key());
  CHECK(unpack::check_trust(s, trusted, false).verified_by == signer.key_id());
  CHECK_THROWS_WITH(unpack::check_trust(s, wrong, false),
                    Catch::Contains("has no signature that verifies with a trusted key (signed by " + signer.key_id() +
                                    " (untrusted key); trusted keys here: " + other.key_id() + ")"));
  CHECK_THROWS_WITH(
      unpack::check_trust(u, trusted, false),
      Catch::Contains("is unsigned and unsigned archives are refused (unsigned; trusted keys here: " + signer.key_id() + ")"));
  CHECK_THROWS_AS(unpack::check_trust(u, TrustStore{}, false), IntegrityError);
  CHECK_FALSE(unpack::check_trust(u, TrustStore{}, true).trusted());
  // The signature of one manifest does not vouch for another (an identical manifest is the same content).
  u.signatures = s.signatures;
  auto r = unpack::assess_signatures(u, trusted);
  CHECK_FALSE(r.trusted());
  CHECK(r.signers.at(0).state == unpack::SignerStatus::State::bad_signature);
}

TEST_CASE("the header gate runs before the manifest is parsed") {
  test::ScratchDir dir;
  test::write_file(dir / "ind/a.py", "print(1)\n");
  std::vector<CacheDir> dirs{{"inductor", ComponentKind::inductor, dir / "ind", "test"}};
  (void)pack::create_archive(dirs, dir / "a.ccpack", pack::PackOptions{});
  unpack::Archive a = unpack::Archive::open(dir / "a.ccpack");
  // A manifest that is not JSON, its SHA-256 fixed up: only the gate's verdict may come out.
  ArchiveHeader h = a.header;
  h.manifest[0] = '#';
  std::string bytes = encode_header(h) + test::slurp(dir / "a.ccpack").substr(a.header.header_size);
  test::write_file(dir / "b.ccpack", bytes);
  int calls = 0;
  auto gate = [&](const fs::path&, const ArchiveHeader& header, const std::vector<Signature>& sigs) {
    ++calls;
    CHECK(header.manifest[0] == '#');
    CHECK(sigs.empty());
    throw IntegrityError("refused by the gate");
  };
  CHECK_THROWS_WITH(unpack::Archive::open(dir / "b.ccpack", gate), "refused by the gate");
  CHECK(calls == 1);
  CHECK_THROWS_WITH(unpack::Archive::open(dir / "b.ccpack"), Catch::Contains("manifest is not valid JSON"));
}
