// OCI documents, references and selection (registry/oci.hpp): what push writes parses back the same, hostile
// documents are refused naming the field, and selection picks by exact field values.
#include <catch2/catch.hpp>
#include <string>

#include "registry/oci.hpp"
#include "util/error.hpp"

using namespace ccpack;
namespace oci = ccpack::registry::oci;

namespace {

const std::string kDigestA = "sha256:" + std::string(64, 'a');

oci::ImageManifest sample_manifest() {
  oci::ImageManifest m;
  m.artifact_type = oci::kArtifactType;
  m.config = {std::string(oci::kEmptyConfigType), std::string(oci::kEmptyConfigDigest), 2, {}, {}};
  m.layers.push_back({std::string(oci::kLayerMediaType), kDigestA, 1234, {}, {{"org.opencontainers.image.title", "a.ccpack"}}});
  m.annotations = {{"org.ccpack.fp.gpu.arch", "sm_90"}, {"org.ccpack.header.size", "500"}};
  return m;
}

ccpack::manifest::Fingerprint fingerprint(const std::string& arch) {
  return ccpack::manifest::Fingerprint::from_json(
      R"({"schema":1,"fields":{"gpu.vendor":{"value":"nvidia","source":"nvml"},"gpu.arch":{"value":")" + arch +
      R"(","source":"nvml"},"torch.hip":{"value":null,"source":"python"}}})");
}

}  // namespace

TEST_CASE("the empty config descriptor is the digest of its data") {
  CHECK(oci::digest_of(oci::kEmptyConfigData) == oci::kEmptyConfigDigest);
}

TEST_CASE("image manifest round trip, compact, fixed key order") {
  std::string json = oci::to_json(sample_manifest());
  CHECK(json.starts_with(
      R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","artifactType":"application/vnd.ccpack.archive.v1","config":)"));
  oci::ImageManifest back = oci::parse_image_manifest(json, "m");
  CHECK(back.artifact_type == oci::kArtifactType);
  REQUIRE(back.layers.size() == 1);
  CHECK(back.layers[0].digest == kDigestA);
  CHECK(back.layers[0].size == 1234);
  CHECK(back.annotations == sample_manifest().annotations);
  CHECK(oci::to_json(back) == json);
}

TEST_CASE("index round trip has no artifactType") {
  oci::Index index;
  index.manifests.push_back({std::string(oci::kImageManifestType), kDigestA, 99, {}, {{"org.ccpack.fp.gpu.arch", "gfx942"}}});
  std::string json = oci::to_json(index);
  CHECK(json.find("artifactType") == std::string::npos);
  oci::Index back = oci::parse_index(json, "i");
  REQUIRE(back.manifests.size() == 1);
  CHECK(back.manifests[0].annotations.at("org.ccpack.fp.gpu.arch") == "gfx942");
}

TEST_CASE("hostile documents are refused naming the field") {
  auto refuses = [](const std::string& json, const std::string& field) {
    try {
      (void)oci::parse_image_manifest(json, "m");
      FAIL("accepted " << json);
    } catch (const IntegrityError& e) {
      CHECK_THAT(e.what(), Catch::Contains(field));
    }
  };
  refuses("[1]", "not a JSON object");
  refuses("{", "not valid JSON");
  refuses(R"({"schemaVersion":1})", "schemaVersion");
  refuses(R"({"schemaVersion":2,"layers":[]})", "'config'");
  refuses(R"({"schemaVersion":2,"config":{"mediaType":"x","digest":"md5:00","size":2},"layers":[]})", "'config.digest'");
  refuses(R"({"schemaVersion":2,"config":{"mediaType":"x","digest":")" + kDigestA + R"(","size":-2},"layers":[]})",
          "'config.size'");
  refuses(R"({"schemaVersion":2,"config":{"mediaType":"x","digest":")" + kDigestA + R"(","size":2},"layers":{}})", "'layers'");
  refuses(R"({"schemaVersion":2,"config":{"mediaType":"x","digest":")" + kDigestA +
              R"(","size":2},"layers":[],"annotations":{"k":5}})",
          "'annotations.k'");
  refuses(R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json"})", "'mediaType'");
  // Nesting is bounded while parsing.
  refuses(R"({"schemaVersion":2,"x":)" + std::string(100, '[') + std::string(100, ']') + "}", "nests deeper");
  std::string many = R"({"schemaVersion":2,"manifests":[)";
  for (std::size_t i = 0; i <= oci::kMaxIndexEntries; ++i) {
    many += (i ? "," : "") + std::string(R"({"mediaType":"x","digest":")") + kDigestA + R"(","size":1})";
  }
  CHECK_THROWS_WITH(oci::parse_index(many + "]}", "i"), Catch::Contains("'manifests' has more than"));
}

TEST_CASE("selection from a fingerprint: null and missing fields are absent") {
  oci::Selection s = oci::selection_of(fingerprint("sm_90"));
  CHECK(s.size() == oci::kSelectionFields.size());
  CHECK(s.at("gpu.arch") == "sm_90");
  CHECK(s.at("gpu.vendor") == "nvidia");
  CHECK(s.at("torch.hip") == "absent");
  CHECK(s.at("python.abi") == "absent");
  CHECK(oci::selection_of(ccpack::manifest::Fingerprint{}).at("gpu.arch") == "absent");
}

TEST_CASE("annotations carry the selection and select by exact values") {
  oci::Selection h200 = oci::selection_of(fingerprint("sm_90"));
  oci::Selection mi300 = oci::selection_of(fingerprint("gfx942"));
  oci::Annotations a = oci::archive_annotations(fingerprint("sm_90"), Digest{}, 777, "", "fp");
  CHECK(a.size() == oci::kSelectionFields.size() + 2);
  CHECK(a.at("org.ccpack.fp.gpu.arch") == "sm_90");
  CHECK(a.at("org.ccpack.fp.torch.hip") == "absent");
  CHECK(a.at("org.ccpack.header.size") == "777");
  CHECK(a.at("org.ccpack.manifest.sha256") == std::string(64, '0'));
  std::optional<oci::Selection> back = oci::selection_of_annotations(a);
  REQUIRE(back);
  CHECK(*back == h200);
  CHECK_FALSE(oci::first_mismatch(h200, *back));
  CHECK(oci::first_mismatch(mi300, *back) == "gpu.arch is 'sm_90' in the archive, 'gfx942' here");
  CHECK_FALSE(oci::selection_of_annotations({{"org.opencontainers.image.title", "x"}}));
  CHECK(oci::describe(h200) == "gpu.vendor=nvidia gpu.arch=sm_90");
}

TEST_CASE("references") {
  oci::Reference r = oci::parse_reference("oci://127.0.0.1:5000/team/model:h200-v1");
  CHECK(r.registry == "127.0.0.1:5000");
  CHECK(r.repository == "team/model");
  CHECK(r.tag == "h200-v1");
  CHECK(r.manifest_reference() == "h200-v1");
  CHECK(r.str() == "127.0.0.1:5000/team/model:h200-v1");

  r = oci::parse_reference("ghcr.io/org/caches@" + kDigestA);
  CHECK(r.tag.empty());
  CHECK(r.manifest_reference() == kDigestA);

  r = oci::parse_reference("localhost/caches");
  CHECK(r.registry == "localhost");
  CHECK(r.tag == "latest");

  r = oci::parse_reference("caches:v1");
  CHECK(r.registry == "docker.io");
  CHECK(r.repository == "library/caches");
  CHECK(r.api_host() == "registry-1.docker.io");

  for (const char* badref : {"", "host:5000/", "host:5000/Upper", "host:5000/a//b", "host:5000/a:bad tag",
                             "host:5000/a@sha256:1234", "ho st:1/a", "host:99999999/a", "host:5000/a-:x"}) {
    CAPTURE(badref);
    CHECK_THROWS_AS(oci::parse_reference(badref), UsageError);
  }
}

TEST_CASE("scheme_less_reference: a reference with a host written without oci:// is recognised, a path is not", "[oci]") {
  CHECK(oci::scheme_less_reference("host:5000/repo:tag") == std::optional<std::string>("oci://host:5000/repo:tag"));
  CHECK(oci::scheme_less_reference("registry.example.com/team/cache:v1") ==
        std::optional<std::string>("oci://registry.example.com/team/cache:v1"));
  CHECK(oci::scheme_less_reference("localhost/x") == std::optional<std::string>("oci://localhost/x"));
  for (const char* other : {"oci://host:5000/repo:tag", "out/a.ccpack", "a.ccpack", "caches:v1", "host:5000/Upper"}) {
    CAPTURE(other);
    CHECK_FALSE(oci::scheme_less_reference(other));
  }
}
