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

registry::Session session_for(const test::LoopbackHttp& server) {
  registry::SessionOptions o;
  o.http.plain_http = true;
  o.http.max_attempts = 1;
  return {oci::parse_reference("127.0.0.1:" + std::to_string(server.port()) + "/team/model:v1"), o};
}

// The signature manifest with one layer: `digest`, announced as `size` bytes, with the annotation `signature`.
std::string signature_manifest(const std::string& digest, std::uint64_t size, const std::string& signature) {
  oci::ImageManifest m;
  m.config = {std::string(cosign::kConfigMediaType), "sha256:" + std::string(64, 'c'), 10, {}, {}};
  m.layers.push_back({std::string(cosign::kPayloadMediaType), digest, size, {}, {{std::string(cosign::kSignatureAnnotation), signature}}});
  return oci::to_json(m);
}

std::string manifest_answer(const std::string& body) {
  return http_answer(200, {"Content-Type: application/vnd.oci.image.manifest.v1+json"}, body);
}

std::string first_line(const std::string& request) { return request.substr(0, request.find("\r\n")); }

// Runs the check against a server that serves the signature manifest for a payload naming `repository` and
// `signed_digest`, signed by `signer`, trusted: `trusted`.
registry::CosignCheck check_one(const manifest::PrivateKey& signer, const manifest::PublicKey& trusted, const std::string& repository,
                                const std::string& signed_digest, std::vector<std::string>* requests = nullptr) {
  std::string payload = cosign::payload_json({repository, signed_digest, ""});
  std::string body = signature_manifest(oci::digest_of(payload), payload.size(), base64_encode(signer.sign_detached(payload)));
  test::LoopbackHttp server({manifest_answer(body), http_answer(200, {}, payload)});
  registry::Session session = session_for(server);
  manifest::TrustStore trust;
  trust.add(trusted);
  registry::CosignCheck c = registry::check_cosign_signatures(session, kArtifact, kRef, trust);
  if (requests != nullptr) *requests = server.requests();
  return c;
}

}  // namespace

TEST_CASE("cosign check: a trusted key's signature of this digest and repository passes, having read two documents") {
  NoCredentials none;
  manifest::PrivateKey key = manifest::PrivateKey::generate();
  std::vector<std::string> requests;
  registry::CosignCheck c = check_one(key, key.public_key(), "registry.example/team/model", kArtifact, &requests);
  CHECK(c.verified_by == key.key_id());
  CHECK(c.problems.empty());
  CHECK(c.tag == "sha256-" + std::string(64, 'b') + ".sig");
  REQUIRE(requests.size() == 2);
  CHECK(first_line(requests[0]) == "GET /v2/team/model/manifests/" + c.tag + " HTTP/1.1");
  CHECK(first_line(requests[1]).starts_with("GET /v2/team/model/blobs/sha256:"));
  CHECK_NOTHROW(registry::require_cosign(c, "archive X"));
}

TEST_CASE("cosign check: another digest, another repository, another key: each refused with its reason") {
  NoCredentials none;
  manifest::PrivateKey key = manifest::PrivateKey::generate();
  manifest::PrivateKey other = manifest::PrivateKey::generate();
  const std::string another = "sha256:" + std::string(64, 'd');
  registry::CosignCheck c = check_one(key, key.public_key(), "registry.example/team/model", another);
  CHECK(c.problems == std::vector<std::string>{"layer 0: key " + key.key_id() + " signed " + another + ", another artifact"});
  c = check_one(key, key.public_key(), "registry.example/team/other:v1", kArtifact);
  CHECK(c.problems == std::vector<std::string>{"layer 0: key " + key.key_id() +
                                               " signed this digest for another reference: it names "
                                               "registry.example/team/other, not registry.example/team/model"});
  c = check_one(other, key.public_key(), "registry.example/team/model", kArtifact);
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
    test::LoopbackHttp server({manifest_answer(signature_manifest("sha256:" + std::string(64, 'e'), 1 << 20, "AAAA"))});
    registry::Session session = session_for(server);
    registry::CosignCheck c = registry::check_cosign_signatures(session, kArtifact, kRef, trust);
    CHECK(c.problems == std::vector<std::string>{"layer 0: payload of 1048576 bytes is larger than 65536"});
    CHECK(server.requests().size() == 1);
  }
  {
    std::string payload = cosign::payload_json({"registry.example/team/model", kArtifact, ""});
    std::string body = signature_manifest(oci::digest_of(payload), payload.size(), base64_encode(key.sign_detached(payload)));
    std::string swapped = payload;
    swapped[2] = 'C';
    test::LoopbackHttp server({manifest_answer(body), http_answer(200, {}, swapped)});
    registry::Session session = session_for(server);
    CHECK(test::integrity_error([&] { (void)registry::check_cosign_signatures(session, kArtifact, kRef, trust); }) ==
          "payload " + oci::digest_of(payload) + " of the cosign signature of " + kArtifact + " does not match its digest");
  }
  {
    test::LoopbackHttp server({http_answer(404, {}, "")});
    registry::Session session = session_for(server);
    registry::CosignCheck c = registry::check_cosign_signatures(session, kArtifact, kRef, trust);
    CHECK(c.problems == std::vector<std::string>{"no signature (the tag is missing or holds no layer)"});
  }
}
