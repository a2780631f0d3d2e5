// registry/cosign_bundles.cpp's check against a scripted loopback registry: the referrers API lists the bundle
// referrers of the signed digest; a bundle of a trusted key over cosign's statement for the reference passes, an
// entry of another artifact type is passed over without a request, and each bundle that does not pass adds one line
// naming it and why (signed by no trusted key; a subject that is another artifact, decided before its blob is
// fetched). The statement names registry.example, so the documents are fixed before the server's port is known.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "registry/cosign_bundles.hpp"
#include "registry/referrers.hpp"
#include "unit/loopback_http.hpp"
#include "unit/support.hpp"

using namespace ccpack;
namespace oci = ccpack::registry::oci;
namespace bundle = ccpack::registry::bundle;
namespace referrers = ccpack::registry::referrers;

namespace {

const std::string kSigned = "sha256:" + std::string(64, 'c');
const std::string kBundleName = "registry.example/team/model:v1";

// A bundle referrer of `subject` signed by `key`: the referrer manifest and the bundle blob, with their digests.
struct BundleReferrer {
  std::string manifest;
  std::string manifest_digest;
  std::string blob;
};

BundleReferrer bundle_of(const manifest::PrivateKey& key, const std::string& subject) {
  const std::string statement = bundle::statement_json(kBundleName, subject);
  BundleReferrer b;
  b.blob = bundle::bundle_json(statement, key.sign_detached(bundle::pae(bundle::kPayloadType, statement)),
                               bundle::key_hint(key.public_key()));
  b.manifest = bundle::referrer_manifest_json({std::string(oci::kImageManifestType), subject, 100},
                                              {std::string(bundle::kMediaType), oci::digest_of(b.blob), b.blob.size()});
  b.manifest_digest = oci::digest_of(b.manifest);
  return b;
}

std::string referrers_answer(const std::vector<referrers::Entry>& entries) {
  return test::http_answer(200, {"Content-Type: " + std::string(oci::kImageIndexType)}, referrers::index_json(entries));
}

std::string document_answer(const std::string& body) {
  return test::http_answer(200, {"Content-Type: " + std::string(oci::kImageManifestType)}, body);
}

struct Checked {
  std::string by;
  std::vector<std::string> problems;
  std::vector<std::string> lines;
};

Checked check_with(const std::vector<std::string>& answers, const manifest::TrustStore& trust) {
  test::NoCredentials none;
  test::LoopbackHttp server(answers);
  registry::Session s = test::session_for(server);
  Checked c;
  c.by = registry::check_cosign_bundles(s, kSigned, oci::parse_reference(kBundleName), trust,
                                        registry::cosign::IdentityRule::exact, "cosign: ", c.problems);
  for (const std::string& r : server.requests()) c.lines.push_back(test::first_line(r));
  return c;
}

}  // namespace

TEST_CASE("cosign bundles: a trusted key's bundle of the digest passes, other artifact types passed over") {
  manifest::PrivateKey key = manifest::PrivateKey::generate();
  manifest::TrustStore trust;
  trust.add(key.public_key());
  BundleReferrer b = bundle_of(key, kSigned);
  referrers::Entry sbom = referrers::entry_of("sha256:" + std::string(64, 'd'), 10, "application/spdx+json");
  Checked c = check_with({referrers_answer({sbom, referrers::entry_of(b.manifest_digest, b.manifest.size(), bundle::kMediaType)}),
                          document_answer(b.manifest), test::http_answer(200, {}, b.blob)},
                         trust);
  CHECK(c.by == key.public_key().key_id());
  CHECK(c.problems.empty());
  CHECK(c.lines == std::vector<std::string>{"GET /v2/team/model/referrers/" + kSigned + " HTTP/1.1",
                                            "GET /v2/team/model/manifests/" + b.manifest_digest + " HTTP/1.1",
                                            "GET /v2/team/model/blobs/" + oci::digest_of(b.blob) + " HTTP/1.1"});
}

TEST_CASE("cosign bundles: each bundle that does not pass is named with why") {
  manifest::PrivateKey key = manifest::PrivateKey::generate();
  manifest::PrivateKey other = manifest::PrivateKey::generate();
  manifest::TrustStore trust;
  trust.add(key.public_key());

  BundleReferrer untrusted = bundle_of(other, kSigned);
  Checked c = check_with(
      {referrers_answer({referrers::entry_of(untrusted.manifest_digest, untrusted.manifest.size(), bundle::kMediaType)}),
       document_answer(untrusted.manifest), test::http_answer(200, {}, untrusted.blob)},
      trust);
  CHECK(c.by == "");
  CHECK(c.problems == std::vector<std::string>{"cosign: bundle " + untrusted.manifest_digest + ": signed by no trusted key"});

  const std::string elsewhere = "sha256:" + std::string(64, 'e');
  BundleReferrer moved = bundle_of(key, elsewhere);
  Checked m =
      check_with({referrers_answer({referrers::entry_of(moved.manifest_digest, moved.manifest.size(), bundle::kMediaType)}),
                  document_answer(moved.manifest)},
                 trust);
  CHECK(m.by == "");
  CHECK(m.problems == std::vector<std::string>{"cosign: bundle " + moved.manifest_digest + ": its subject is " + elsewhere +
                                               ", another artifact"});
  CHECK(m.lines.size() == 2);  // no blob fetched
}

TEST_CASE("cosign bundles: the --cosign-format names") {
  CHECK(registry::parse_cosign_format("legacy") == registry::CosignFormat::legacy);
  CHECK(registry::parse_cosign_format("bundle") == registry::CosignFormat::bundle);
  CHECK(registry::parse_cosign_format(registry::kCosignFormatDefault) == registry::CosignFormat::both);
  CHECK_FALSE(registry::parse_cosign_format("Both"));
  CHECK_FALSE(registry::parse_cosign_format(""));
}
