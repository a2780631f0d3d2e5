// registry/listing.cpp's list_archives against a scripted loopback registry: a tag naming one image manifest, a
// tag naming an index (each entry's manifest fetched and described, an entry that is no ccpack archive listed as
// such), and the refusals: a tag not found, a document of another media type, an entry's manifest missing or of
// another size than the index says.
#include <catch2/catch.hpp>
#include <string>

#include "registry/listing.hpp"
#include "registry/oci.hpp"
#include "registry/session.hpp"
#include "unit/loopback_http.hpp"
#include "unit/support.hpp"

using namespace ccpack;
using test::http_answer;

namespace {

const std::string kListedLayerDigest = "sha256:" + std::string(64, 'b');

// A ccpack artifact's image manifest: one archive layer, titled, selected by gpu.arch.
std::string listed_artifact() {
  registry::oci::ImageManifest m;
  m.artifact_type = std::string(registry::oci::kArtifactType);
  m.config = {std::string(registry::oci::kEmptyConfigType), std::string(registry::oci::kEmptyConfigDigest), 2, {}, {}};
  m.layers = {{std::string(registry::oci::kLayerMediaType),
               kListedLayerDigest,
               12345,
               {},
               {{"org.opencontainers.image.title", "cache.ccpack"}}}};
  m.annotations = {{"org.ccpack.fp.gpu.arch", "sm_90"}};
  return registry::oci::to_json(m);
}

std::string listed_manifest_answer(const std::string& body) {
  return http_answer(200, {"Content-Type: " + std::string(registry::oci::kImageManifestType)}, body);
}

}  // namespace

TEST_CASE("list_archives: a tag naming one ccpack image manifest", "[registry][listing]") {
  test::NoCredentials none;
  const std::string body = listed_artifact();
  test::LoopbackHttp server({listed_manifest_answer(body)});
  registry::Session s = test::session_for(server);
  registry::Listing l = registry::list_archives(s);
  CHECK(l.digest == registry::oci::digest_of(body));
  CHECK_FALSE(l.index);
  REQUIRE(l.archives.size() == 1);
  const registry::ListedArchive& a = l.archives[0];
  CHECK(a.manifest_digest == registry::oci::digest_of(body));
  CHECK(a.manifest_size == body.size());
  CHECK(a.ccpack);
  CHECK(a.layer_digest == kListedLayerDigest);
  CHECK(a.layer_size == 12345);
  CHECK(a.media_type == registry::oci::kLayerMediaType);
  CHECK(a.title == "cache.ccpack");  // the layer's title, the manifest having none
  REQUIRE(a.selection);
  CHECK(a.selection->at("gpu.arch") == "sm_90");
  CHECK(a.selection->at("torch.version") == "absent");
}

TEST_CASE("list_archives: an index's entries, each manifest fetched by digest", "[registry][listing]") {
  test::NoCredentials none;
  const std::string ccpack_body = listed_artifact();
  registry::oci::ImageManifest other;
  other.config = {"application/vnd.example.config", std::string(registry::oci::kEmptyConfigDigest), 2, {}, {}};
  other.layers = {{"application/octet-stream", kListedLayerDigest, 1, {}, {}}};
  const std::string other_body = registry::oci::to_json(other);
  registry::oci::Index index;
  index.manifests = {
      {std::string(registry::oci::kImageManifestType),
       registry::oci::digest_of(ccpack_body),
       ccpack_body.size(),
       {},
       {{"org.ccpack.fp.gpu.arch", "sm_80"}}},
      {std::string(registry::oci::kImageManifestType), registry::oci::digest_of(other_body), other_body.size(), {}, {}},
      {"application/vnd.example.other", "sha256:" + std::string(64, 'c'), 7, {}, {}}};
  const std::string index_body = registry::oci::to_json(index);
  test::LoopbackHttp server({http_answer(200, {"Content-Type: " + std::string(registry::oci::kImageIndexType)}, index_body),
                             listed_manifest_answer(ccpack_body), listed_manifest_answer(other_body)});
  registry::Session s = test::session_for(server);
  registry::Listing l = registry::list_archives(s);
  CHECK(l.index);
  CHECK(l.digest == registry::oci::digest_of(index_body));
  REQUIRE(l.archives.size() == 3);
  CHECK(l.archives[0].ccpack);
  CHECK(l.archives[0].selection->at("gpu.arch") == "sm_80");  // the index entry's selection, not the manifest's
  CHECK(l.archives[0].layer_size == 12345);
  CHECK_FALSE(l.archives[1].ccpack);
  CHECK(l.archives[1].layer_digest.empty());
  CHECK(l.archives[1].media_type == "application/octet-stream");
  CHECK_FALSE(l.archives[1].selection);
  CHECK_FALSE(l.archives[2].ccpack);
  CHECK(l.archives[2].media_type == "application/vnd.example.other");
  CHECK(l.archives[2].manifest_size == 7);
  const auto& r = server.requests();
  REQUIRE(r.size() == 3);
  CHECK(r[1].starts_with("GET /v2/team/model/manifests/" + registry::oci::digest_of(ccpack_body) + " HTTP/1.1"));
}

TEST_CASE("list_archives: refusals name the reference", "[registry][listing]") {
  test::NoCredentials none;
  const std::string body = listed_artifact();
  registry::oci::Index index;
  index.manifests = {{std::string(registry::oci::kImageManifestType), registry::oci::digest_of(body), body.size() + 1, {}, {}}};
  const std::string index_body = registry::oci::to_json(index);
  const std::string index_answer = http_answer(200, {"Content-Type: " + std::string(registry::oci::kImageIndexType)}, index_body);
  test::LoopbackHttp server({http_answer(404, {}, ""), http_answer(200, {"Content-Type: text/html"}, "<html></html>"),
                             index_answer, listed_manifest_answer(body), index_answer, http_answer(404, {}, "")});
  registry::Session s = test::session_for(server);
  const std::string ref = s.reference().str();
  CHECK(test::ccpack_error([&] { (void)registry::list_archives(s); }) == ref + " not found in the registry");
  CHECK(test::ccpack_error([&] { (void)registry::list_archives(s); }) ==
        ref + " is not a ccpack artifact (media type 'text/html')");
  CHECK(test::integrity_error([&] { (void)registry::list_archives(s); }) ==
        ref + ": manifest " + registry::oci::digest_of(body) + " size differs from the index");
  CHECK(test::ccpack_error([&] { (void)registry::list_archives(s); }) ==
        ref + ": manifest " + registry::oci::digest_of(body) + " named by the index is missing");
}
