// unpack/trust.cpp, without a disk: each signature's state (verified, untrusted key, bad signature), the first
// trusted signer that verifies (a second signer during a key rotation), describe()'s text, and check_trust's two
// refusals word for word, unless unsigned archives are allowed.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "manifest/format.hpp"
#include "manifest/keys.hpp"
#include "manifest/signature.hpp"
#include "unit/support.hpp"
#include "unpack/trust.hpp"
#include "util/error.hpp"
#include "util/sha256.hpp"

using namespace ccpack;
using manifest::PrivateKey;
using manifest::TrustStore;
using State = unpack::SignerStatus::State;

namespace {

const std::string kManifest = R"({"format":"ccpack"})";

manifest::ArchiveHeader header_of(const std::string& manifest_text) {
  manifest::ArchiveHeader h;
  h.manifest = manifest_text;
  h.manifest_sha256 = Sha256::of(manifest_text);
  return h;
}

using test::integrity_error;

}  // namespace

TEST_CASE("trust: each signer's state, in block order, the first trusted one that verifies is the signer") {
  PrivateKey old_key = PrivateKey::generate();
  PrivateKey new_key = PrivateKey::generate();
  PrivateKey stranger = PrivateKey::generate();
  const manifest::ArchiveHeader h = header_of(kManifest);
  TrustStore trust;
  trust.add(new_key.public_key());
  trust.add(old_key.public_key());
  std::vector<manifest::Signature> sigs = {stranger.sign_manifest(kManifest, "x"), old_key.sign_manifest("{}", "other manifest"),
                                           new_key.sign_manifest(kManifest, "rotation")};
  unpack::TrustReport r = unpack::assess_signatures(h, sigs, trust);
  REQUIRE(r.signers.size() == 3);
  CHECK(r.signers[0].state == State::untrusted_key);
  CHECK(r.signers[1].state == State::bad_signature);
  CHECK(r.signers[2].state == State::verified);
  CHECK(r.signers[2].signature.note == "rotation");
  CHECK(r.trusted());
  CHECK(r.verified_by == new_key.key_id());
  std::vector<std::string> ids = {old_key.key_id(), new_key.key_id()};
  std::sort(ids.begin(), ids.end());
  CHECK(r.trusted_ids == ids);
  CHECK(r.describe() == "signed by " + stranger.key_id() + " (untrusted key), " + old_key.key_id() + " (bad signature), " +
                            new_key.key_id() + " (verified); trusted keys here: " + ids[0] + ", " + ids[1]);
  CHECK(unpack::check_trust("a.ccpack", h, sigs, trust, false).verified_by == new_key.key_id());
  CHECK(unpack::to_string(State::verified) == "verified");
  CHECK(unpack::to_string(State::untrusted_key) == "untrusted key");
  CHECK(unpack::to_string(State::bad_signature) == "bad signature");
}

TEST_CASE("check_trust: an unsigned archive and one without a trusted signature are refused, word for word") {
  PrivateKey signer = PrivateKey::generate();
  const manifest::ArchiveHeader h = header_of(kManifest);
  TrustStore none;
  CHECK(unpack::assess_signatures(h, {}, none).describe() == "unsigned; trusted keys here: none");
  CHECK(integrity_error([&] { (void)unpack::check_trust("dir/a.ccpack", h, {}, none, false); }) ==
        "'dir/a.ccpack' is unsigned and unsigned archives are refused (unsigned; trusted keys here: none); sign it with "
        "`ccpack sign`, or pass --allow-unsigned to accept it anyway");
  std::vector<manifest::Signature> sigs = {signer.sign_manifest(kManifest, "")};
  CHECK(integrity_error([&] { (void)unpack::check_trust("dir/a.ccpack", h, sigs, none, false); }) ==
        "'dir/a.ccpack' has no signature that verifies with a trusted key (signed by " + signer.key_id() +
            " (untrusted key); trusted keys here: none); trust the signer's public key with --trust FILE or CCPACK_TRUSTED_KEYS");
  // Allowed: the report comes back untrusted, for the caller's warning.
  unpack::TrustReport r = unpack::check_trust("dir/a.ccpack", h, sigs, none, true);
  CHECK_FALSE(r.trusted());
  CHECK(r.signers.at(0).state == State::untrusted_key);
  // A trusted key's signature over other manifest bytes is refused too.
  TrustStore trust;
  trust.add(signer.public_key());
  const manifest::ArchiveHeader other = header_of(kManifest + " ");
  CHECK(integrity_error([&] { (void)unpack::check_trust("b", other, sigs, trust, false); }) ==
        "'b' has no signature that verifies with a trusted key (signed by " + signer.key_id() +
            " (bad signature); trusted keys here: " + signer.key_id() +
            "); trust the signer's public key with --trust FILE or CCPACK_TRUSTED_KEYS");
}
