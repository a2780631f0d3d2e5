// registry/referrers.cpp: the fallback tag of a subject digest, a referrers index read entry by entry (each kept
// as written, odd fields read as empty) and its refusals naming the field, the index written back, the entry
// ccpack writes, and find() through the referrers API of a scripted loopback registry.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "registry/oci.hpp"
#include "registry/referrers.hpp"
#include "registry/session.hpp"
#include "unit/loopback_http.hpp"
#include "unit/support.hpp"

using namespace ccpack;
namespace referrers = ccpack::registry::referrers;

namespace {

const std::string kReferredSubject = "sha256:" + std::string(64, 'd');
const std::string kReferrerDigest = "sha256:" + std::string(64, 'e');

}  // namespace

TEST_CASE("referrers::fallback_tag names the subject's tag, a non-digest refused", "[registry][referrers]") {
  CHECK(referrers::fallback_tag(kReferredSubject) == "sha256-" + std::string(64, 'd'));
  CHECK(test::integrity_error([] { (void)referrers::fallback_tag("sha256:abc"); }) == "'sha256:abc' is not a sha256 digest");
}

TEST_CASE("referrers::parse_index keeps each entry as written and reads its fields", "[registry][referrers]") {
  std::string text = R"({"schemaVersion":2,"manifests":[)"
                     R"({"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":")" +
                     kReferrerDigest +
                     R"(","size":321,"artifactType":"application/vnd.dev.sigstore.bundle.v0.3+json"},)"
                     R"({"digest":"md5:x","size":-1,"artifactType":7,"extra":{"b":1,"a":2}}]})";
  std::vector<referrers::Entry> e = referrers::parse_index(text, "index");
  REQUIRE(e.size() == 2);
  CHECK(e[0].media_type == "application/vnd.oci.image.manifest.v1+json");
  CHECK(e[0].digest == kReferrerDigest);
  CHECK(e[0].size == 321);
  CHECK(e[0].artifact_type == "application/vnd.dev.sigstore.bundle.v0.3+json");
  CHECK(e[1].media_type.empty());
  CHECK(e[1].digest.empty());  // not a sha256 digest
  CHECK(e[1].size == 0);
  CHECK(e[1].artifact_type.empty());
  CHECK(e[1].json == R"({"digest":"md5:x","size":-1,"artifactType":7,"extra":{"b":1,"a":2}})");  // key order kept
  CHECK(referrers::index_json(e) == R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[)" +
                                        e[0].json + "," + e[1].json + "]}");
}

TEST_CASE("referrers::parse_index refusals name the field", "[registry][referrers]") {
  CHECK(test::integrity_error([] { (void)referrers::parse_index("[]", "the index"); }) == "the index is not a JSON object");
  CHECK(test::integrity_error([] { (void)referrers::parse_index(R"({"manifests":{}})", "the index"); }) ==
        "the index: field 'manifests' is missing or not an array");
  CHECK(test::integrity_error([] { (void)referrers::parse_index(R"({"manifests":[{},3]})", "the index"); }) ==
        "the index: field 'manifests[1]' is not an object");
  std::string many = R"({"manifests":[{})";
  for (std::size_t i = 0; i < referrers::kMaxReferrers; ++i) many += ",{}";
  CHECK(test::integrity_error([&] { (void)referrers::parse_index(many + "]}", "the index"); }) ==
        "the index: field 'manifests' has more than 1000 entries");
}

TEST_CASE("referrers::entry_of is the descriptor ccpack writes", "[registry][referrers]") {
  referrers::Entry e = referrers::entry_of(kReferrerDigest, 99, "application/x-test");
  CHECK(e.json == R"({"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":")" + kReferrerDigest +
                      R"(","size":99,"artifactType":"application/x-test"})");
  CHECK(e.media_type == registry::oci::kImageManifestType);
  CHECK(e.digest == kReferrerDigest);
  CHECK(e.size == 99);
  CHECK(e.artifact_type == "application/x-test");
}

TEST_CASE("referrers::find reads the referrers API's index", "[registry][referrers]") {
  test::NoCredentials none;
  std::string index = referrers::index_json({referrers::entry_of(kReferrerDigest, 5, "application/x-test")});
  test::LoopbackHttp server({test::http_answer(200, {"Content-Type: " + std::string(registry::oci::kImageIndexType)}, index)});
  registry::SessionOptions o;
  o.http.plain_http = true;
  o.http.max_attempts = 1;
  registry::Session s(registry::oci::parse_reference("127.0.0.1:" + std::to_string(server.port()) + "/team/model:v1"), o);
  referrers::Found f = referrers::find(s, kReferredSubject);
  CHECK(f.source == "the referrers API");
  REQUIRE(f.entries.size() == 1);
  CHECK(f.entries[0].digest == kReferrerDigest);
  CHECK(server.requests()[0].starts_with("GET /v2/team/model/referrers/" + kReferredSubject + " HTTP/1.1"));
}
