// registry/cosign_signatures.cpp against a scripted loopback registry: a signature by a trusted key over the
// artifact's digest and reference passes having read only the signature manifest and its payload blob; another
// digest, another key, an oversized layer (never fetched) and a payload whose bytes are not its digest are refused,
// each with its exact reason. And what attach writes is what check accepts.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "manifest/keys.hpp"
#include "registry/cosign.hpp"
#include "registry/cosign_signatures.hpp"
#include "unit/loopback_http.hpp"
#include "unit/support.hpp"
#include "util/base64.hpp"
#include "util/error.hpp"

using namespace ccpack;
using test::http_answer;
namespace oci = ccpack::registry::oci;
namespace cosign = ccpack::registry::cosign;

namespace {

const std::string kArtifact = "sha256:" + std::string(64, 'b');

using test::NoCredentials;

// The reference the identity is checked against (the session talks to the loopback server).
const oci::Reference kRef = oci::parse_reference("registry.example/team/model:v1");

// The signature manifest with one layer: `digest`, announced as `size` bytes, with the annotation `signature`.
std::string signature_manifest(const std::string& digest, std::uint64_t size, const std::string& signature) {
  oci::ImageManifest m;
  m.config = {std::string(registry::oci::kImageConfigType), "sha256:" + std::string(64, 'c'), 10, {}, {}};
  m.layers.push_back(
      {std::string(cosign::kPayloadMediaType), digest, size, {}, {{std::string(cosign::kSignatureAnnotation), signature}}});
  return oci::to_json(m);
}

std::string manifest_answer(const std::string& body) {
  return http_answer(200, {"Content-Type: application/vnd.oci.image.manifest.v1+json"}, body);
}

// When no `.sig` layer passes, the check reads the artifact's referrers (cosign 3's bundles): no referrers API
// (404), then no fallback tag (404).
const std::string kNotFound = http_answer(404, {}, "");

// Runs the check against a server that serves the signature manifest for a payload naming `repository` and
// `signed_digest`, signed by `signer`, trusted: `trusted`.
registry::CosignCheck check_one(const manifest::PrivateKey& signer, const manifest::PublicKey& trusted,
                                const std::string& repository, const std::string& signed_digest,
                                std::vector<std::string>* requests = nullptr) {
  std::string payload = cosign::payload_json({repository, signed_digest, ""});
  std::string body = signature_manifest(oci::digest_of(payload), payload.size(), base64_encode(signer.sign_detached(payload)));
  test::LoopbackHttp server({manifest_answer(body), http_answer(200, {}, payload), kNotFound, kNotFound});
  registry::Session session = test::session_for(server);
  manifest::TrustStore trust;
  trust.add(trusted);
  registry::CosignCheck c = registry::check_cosign_signatures(session, {kArtifact, "", kRef}, trust, cosign::IdentityRule::exact);
  if (requests != nullptr) *requests = server.requests();
  return c;
}

}  // namespace

TEST_CASE("cosign check: a trusted key's signature of this digest and repository passes, having read two documents") {
  NoCredentials none;
  manifest::PrivateKey key = manifest::PrivateKey::generate();
  std::vector<std::string> requests;
  registry::CosignCheck c = check_one(key, key.public_key(), "registry.example/team/model:v1", kArtifact, &requests);
  CHECK(c.verified_by == key.key_id());
  CHECK(c.problems.empty());
  CHECK(c.tag == "sha256-" + std::string(64, 'b') + ".sig");
  REQUIRE(requests.size() == 2);
  CHECK(test::first_line(requests[0]) == "GET /v2/team/model/manifests/" + c.tag + " HTTP/1.1");
  CHECK(test::first_line(requests[1]).starts_with("GET /v2/team/model/blobs/sha256:"));
  CHECK_NOTHROW(registry::require_cosign(c, "archive X"));
}

TEST_CASE("cosign check: another digest, another repository, another key: each refused with its reason") {
  NoCredentials none;
  manifest::PrivateKey key = manifest::PrivateKey::generate();
  manifest::PrivateKey other = manifest::PrivateKey::generate();
  const std::string another = "sha256:" + std::string(64, 'd');
  registry::CosignCheck c = check_one(key, key.public_key(), "registry.example/team/model:v1", another);
  CHECK(c.problems == std::vector<std::string>{"layer 0: key " + key.key_id() + " signed " + another + ", another artifact"});
  c = check_one(key, key.public_key(), "registry.example/team/other:v1", kArtifact);
  CHECK(c.problems == std::vector<std::string>{"layer 0: key " + key.key_id() +
                                               " signed this digest for another reference: it names "
                                               "registry.example/team/other, not registry.example/team/model"});
  c = check_one(other, key.public_key(), "registry.example/team/model:v1", kArtifact);
  CHECK(c.problems == std::vector<std::string>{"layer 0: signed by no trusted key"});
  CHECK(test::integrity_error([&] { registry::require_cosign(c, "archive X"); }) ==
        "archive X has no cosign signature by a trusted key (" + c.tag +
            ": layer 0: signed by no trusted key); trust the signer's public key with --trust FILE or CCPACK_TRUSTED_KEYS");
}

TEST_CASE("cosign check: an oversized payload is not fetched, a payload that is not its digest is an integrity error") {
  NoCredentials none;
  manifest::PrivateKey key = manifest::PrivateKey::generate();
  manifest::TrustStore trust;
  trust.add(key.public_key());
  {
    test::LoopbackHttp server(
        {manifest_answer(signature_manifest("sha256:" + std::string(64, 'e'), 1 << 20, "AAAA")), kNotFound, kNotFound});
    registry::Session session = test::session_for(server);
    registry::CosignCheck c =
        registry::check_cosign_signatures(session, {kArtifact, "", kRef}, trust, cosign::IdentityRule::exact);
    CHECK(c.problems == std::vector<std::string>{"layer 0: payload of 1048576 bytes is larger than 65536"});
    // The signature manifest, then the referrers (API, fallback tag): no payload blob.
    CHECK(server.requests().size() == 3);
  }
  {
    std::string payload = cosign::payload_json({"registry.example/team/model", kArtifact, ""});
    std::string body = signature_manifest(oci::digest_of(payload), payload.size(), base64_encode(key.sign_detached(payload)));
    std::string swapped = payload;
    swapped[2] = 'C';
    test::LoopbackHttp server({manifest_answer(body), http_answer(200, {}, swapped)});
    registry::Session session = test::session_for(server);
    CHECK(test::integrity_error([&] {
            (void)registry::check_cosign_signatures(session, {kArtifact, "", kRef}, trust, cosign::IdentityRule::exact);
          }) == "payload " + oci::digest_of(payload) + " of the cosign signature of " + kArtifact + " does not match its digest");
  }
  {
    test::LoopbackHttp server({kNotFound, kNotFound, kNotFound});
    registry::Session session = test::session_for(server);
    registry::CosignCheck c =
        registry::check_cosign_signatures(session, {kArtifact, "", kRef}, trust, cosign::IdentityRule::exact);
    CHECK(c.problems == std::vector<std::string>{"no signature (the tag is missing or holds no layer)"});
  }
}

namespace {

// A signature manifest of `layers` (descriptor JSON each).
std::string manifest_of(const std::vector<std::string>& layers) {
  std::string list;
  for (const std::string& l : layers) list += (list.empty() ? "" : ",") + l;
  return R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":)"
         R"("application/vnd.oci.image.config.v1+json","digest":"sha256:)" +
         std::string(64, 'c') + R"(","size":10},"layers":[)" + list + "]}";
}

std::string our_layer(const std::string& payload, const std::string& signature_base64) {
  return cosign::payload_layer(oci::digest_of(payload), payload.size(), signature_base64).json;
}

// The check of kArtifact for kRef against a server that answers `answers` in order.
registry::CosignCheck check_with(const manifest::PublicKey& trusted, const std::vector<std::string>& answers,
                                 const std::string& index_digest = "", std::size_t* requests = nullptr) {
  test::LoopbackHttp server(answers);
  registry::Session session = test::session_for(server);
  manifest::TrustStore trust;
  trust.add(trusted);
  registry::CosignCheck c =
      registry::check_cosign_signatures(session, {kArtifact, index_digest, kRef}, trust, cosign::IdentityRule::exact);
  if (requests != nullptr) *requests = server.requests().size();
  return c;
}

}  // namespace

TEST_CASE("cosign check: another signer's layers beside ours are skipped or refused alone, a 5.6 KB bundle annotation included") {
  NoCredentials none;
  manifest::PrivateKey key = manifest::PrivateKey::generate();
  const std::string payload = cosign::payload_json({"registry.example/team/model:v1", kArtifact, ""});
  const std::string bundle(5600, 'b');
  const std::string keyless = R"({"mediaType":"application/vnd.dev.cosign.simplesigning.v1+json","digest":")" +
                              oci::digest_of(payload) + R"(","size":)" + std::to_string(payload.size()) +
                              R"(,"annotations":{"dev.cosignproject.cosign/signature":")" + std::string(5000, 'A') +
                              R"(","dev.sigstore.cosign/bundle":")" + bundle + R"("}})";
  const std::string attestation = R"({"mediaType":"application/vnd.dsse.envelope.v1+json","digest":"sha256:)" +
                                  std::string(64, 'e') + R"(","size":5,"annotations":{"predicateType":")" + bundle + R"("}})";
  const std::string body = manifest_of({keyless, attestation, our_layer(payload, base64_encode(key.sign_detached(payload)))});
  std::size_t requests = 0;
  registry::CosignCheck c = check_with(key.public_key(), {manifest_answer(body), http_answer(200, {}, payload)}, "", &requests);
  CHECK(c.verified_by == key.key_id());
  CHECK(c.problems == std::vector<std::string>{
                          "layer 0: annotation dev.cosignproject.cosign/signature is longer than 4096 bytes",
                          "layer 1: skipped: media type 'application/vnd.dsse.envelope.v1+json' is not a cosign signature"});
  CHECK(requests == 2);
}

TEST_CASE("cosign check: padded standard base64 only, raw r||s ECDSA as DER") {
  NoCredentials none;
  manifest::PrivateKey ed = manifest::PrivateKey::generate();
  const std::string payload = cosign::payload_json({"registry.example/team/model:v1", kArtifact, ""});
  std::string padded = base64_encode(ed.sign_detached(payload));  // 64 bytes: always "=="-padded
  REQUIRE(padded.ends_with("=="));
  std::string unpadded = padded.substr(0, padded.size() - 2);
  std::string url_safe = padded;
  for (char& ch : url_safe) ch = ch == '+' ? '-' : ch == '/' ? '_' : ch;
  for (const std::string& bad : {unpadded, url_safe + (url_safe == padded ? "AAAA" : "")}) {
    registry::CosignCheck c =
        check_with(ed.public_key(), {manifest_answer(manifest_of({our_layer(payload, bad)})), kNotFound, kNotFound});
    CHECK(c.problems ==
          std::vector<std::string>{"layer 0: annotation dev.cosignproject.cosign/signature is missing or not padded "
                                   "standard base64"});
  }
  registry::CosignCheck ok =
      check_with(ed.public_key(), {manifest_answer(manifest_of({our_layer(payload, padded)})), http_answer(200, {}, payload)});
  CHECK(ok.verified_by == ed.key_id());
}

TEST_CASE("cosign check: a signature of the index the tag resolved to counts for its entry") {
  NoCredentials none;
  manifest::PrivateKey key = manifest::PrivateKey::generate();
  const std::string index = "sha256:" + std::string(64, '9');
  const std::string payload = cosign::payload_json({"registry.example/team/model:v1", index, ""});
  const std::string body = manifest_of({our_layer(payload, base64_encode(key.sign_detached(payload)))});
  registry::CosignCheck c = check_with(
      key.public_key(), {kNotFound, kNotFound, kNotFound, manifest_answer(body), http_answer(200, {}, payload)}, index);
  CHECK(c.verified_by == key.key_id());
  // Without the index, the entry's own (missing) signature is all there is.
  registry::CosignCheck alone = check_with(key.public_key(), {kNotFound, kNotFound, kNotFound});
  CHECK(alone.problems == std::vector<std::string>{"no signature (the tag is missing or holds no layer)"});
}
