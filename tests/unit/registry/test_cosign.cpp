// cosign's signature format (registry/cosign.hpp): the payload's exact bytes, the strict reading containers/image
// does (each refusal names the field), the signature tag, the config, and the identity rule.
#include <catch2/catch.hpp>
#include <string>

#include "registry/cosign.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"

using namespace ccpack;
namespace cosign = ccpack::registry::cosign;
namespace oci = ccpack::registry::oci;

namespace {

const std::string kDigest = "sha256:" + std::string(64, 'a');

std::string payload_refusal(const std::string& json) {
  return test::integrity_error([&] { (void)cosign::parse_payload(json, "payload"); });
}

}  // namespace

TEST_CASE("cosign payload: exact bytes, keys in Go's sorted order, read back") {
  std::string json = cosign::payload_json({"127.0.0.1:5000/cache:v1", kDigest, "ccpack 1.0"});
  CHECK(json == R"({"critical":{"identity":{"docker-reference":"127.0.0.1:5000/cache:v1"},"image":{"docker-manifest-digest":")" +
                    kDigest + R"("},"type":"cosign container image signature"},"optional":{"creator":"ccpack 1.0"}})");
  cosign::Payload p = cosign::parse_payload(json, "payload");
  CHECK(p.docker_reference == "127.0.0.1:5000/cache:v1");
  CHECK(p.manifest_digest == kDigest);
  // Without a creator, "optional" is null, as cosign writes it; still read.
  std::string bare = cosign::payload_json({"r.example/x", kDigest, ""});
  CHECK(bare.ends_with(R"("optional":null})"));
  CHECK(cosign::parse_payload(bare, "payload").docker_reference == "r.example/x");
}

TEST_CASE("cosign payload: what containers/image refuses is refused, naming the field") {
  const std::string image = R"("image":{"docker-manifest-digest":")" + kDigest + R"("})";
  const std::string identity = R"("identity":{"docker-reference":"r.example/x"})";
  const std::string type = R"("type":"cosign container image signature")";
  auto doc = [&](const std::string& critical, const std::string& rest = R"(,"optional":null)") {
    return R"({"critical":{)" + critical + "}" + rest + "}";
  };
  CHECK(payload_refusal(doc(identity + "," + image + "," + type, "")) == "payload: field 'optional' is missing");
  CHECK(payload_refusal(doc(identity + "," + image + "," + type, R"(,"optional":1)")) ==
        "payload: field 'optional' is not an object or null");
  CHECK(payload_refusal(doc(identity + "," + image + "," + type, R"(,"optional":null,"extra":1)")) ==
        "payload: field 'extra' is not allowed");
  CHECK(payload_refusal(doc(image + "," + type)) == "payload: field 'critical.identity' is missing");
  CHECK(payload_refusal(doc(identity + "," + type)) == "payload: field 'critical.image' is missing");
  CHECK(payload_refusal(doc(identity + "," + image)) == "payload: field 'critical.type' is missing");
  CHECK(payload_refusal(doc(identity + "," + image + "," + type + R"(,"more":1)")) ==
        "payload: field 'critical.more' is not allowed");
  CHECK(payload_refusal(doc(identity + "," + image + R"(,"type":"atomic container signature")")) ==
        "payload: field 'critical.type' is not 'cosign container image signature'");
  CHECK(payload_refusal(doc(identity + R"(,"image":{"docker-manifest-digest":"md5:00"},)" + type)) ==
        "payload: field 'critical.image.docker-manifest-digest' is not a sha256 digest: 'md5:00'");
  CHECK(payload_refusal(doc(R"("identity":{"docker-reference":7},)" + image + "," + type)) ==
        "payload: field 'critical.identity.docker-reference' is not a string");
  CHECK(payload_refusal(doc(R"("identity":{"docker-reference":"a","x":"b"},)" + image + "," + type)) ==
        "payload: field 'critical.identity.x' is not allowed");
  CHECK(payload_refusal(R"({"critical":{},"critical":{},"optional":null})") ==
        "payload field 'critical' is repeated (a JSON key appears twice in one object)");
  CHECK(payload_refusal("[1]") == "payload is not a JSON object");
}

TEST_CASE("cosign signature tag and config") {
  CHECK(cosign::signature_tag(kDigest) == "sha256-" + std::string(64, 'a') + ".sig");
  CHECK(test::integrity_error([] { (void)cosign::signature_tag("sha512:00"); }) == "'sha512:00' is not a sha256 digest");
  CHECK(cosign::config_json({kDigest}) ==
        R"({"architecture":"","os":"","config":{},"rootfs":{"type":"layers","diff_ids":[")" + kDigest + R"("]}})");
}

TEST_CASE("cosign identity: exact by default (the tag, or a digest reference to the signed artifact), repository on request") {
  using cosign::IdentityRule;
  oci::Reference ref = oci::parse_reference("127.0.0.1:5000/team/cache:v1");
  const std::string other = "sha256:" + std::string(64, 'f');
  auto exact = [&](const std::string& signed_ref) {
    return cosign::identity_mismatch(signed_ref, kDigest, ref, IdentityRule::exact);
  };
  auto repo = [&](const std::string& signed_ref) {
    return cosign::identity_mismatch(signed_ref, kDigest, ref, IdentityRule::repository);
  };
  CHECK_FALSE(exact("127.0.0.1:5000/team/cache:v1"));
  CHECK_FALSE(exact("127.0.0.1:5000/team/cache@" + kDigest));
  CHECK_FALSE(exact("127.0.0.1:5000/team/cache:v0@" + kDigest));
  CHECK(
      exact("127.0.0.1:5000/team/cache:v0") ==
      "it names 127.0.0.1:5000/team/cache:v0, not 127.0.0.1:5000/team/cache:v1 (--cosign-identity repository accepts any tag of the "
      "repository)");
  CHECK(
      exact("127.0.0.1:5000/team/cache") ==
      "it names 127.0.0.1:5000/team/cache (no tag), not 127.0.0.1:5000/team/cache:v1 (--cosign-identity repository accepts any tag "
      "of the repository)");
  CHECK(exact("127.0.0.1:5000/team/cache@" + other) == "it names 127.0.0.1:5000/team/cache@" + other + ", not this artifact");
  // A name alone is not ":latest" (containers/image adds no tag to a signature).
  CHECK(cosign::identity_mismatch("127.0.0.1:5000/team/cache", kDigest, oci::parse_reference("127.0.0.1:5000/team/cache:latest"),
                                  IdentityRule::exact)
            .has_value());
  CHECK_FALSE(cosign::identity_mismatch("127.0.0.1:5000/team/cache:latest", kDigest,
                                        oci::parse_reference("127.0.0.1:5000/team/cache"), IdentityRule::exact));
  // A digest reference asks for the repository only.
  CHECK_FALSE(cosign::identity_mismatch("127.0.0.1:5000/team/cache:v0", kDigest,
                                        oci::parse_reference("127.0.0.1:5000/team/cache@" + kDigest), IdentityRule::exact));
  CHECK_FALSE(repo("127.0.0.1:5000/team/cache:v0"));
  CHECK_FALSE(repo("127.0.0.1:5000/team/cache"));
  for (auto rule : {IdentityRule::exact, IdentityRule::repository}) {
    CHECK(cosign::identity_mismatch("127.0.0.1:5000/team/other:v1", kDigest, ref, rule) ==
          "it names 127.0.0.1:5000/team/other, not 127.0.0.1:5000/team/cache");
    CHECK(cosign::identity_mismatch("127.0.0.1:5001/team/cache:v1", kDigest, ref, rule) ==
          "it names 127.0.0.1:5001/team/cache, not 127.0.0.1:5000/team/cache");
    CHECK(cosign::identity_mismatch("Not A Reference", kDigest, ref, rule) ==
          "its docker-reference 'Not A Reference' is not a reference");
    CHECK(cosign::identity_mismatch("oci://127.0.0.1:5000/team/cache:v1", kDigest, ref, rule) ==
          "its docker-reference 'oci://127.0.0.1:5000/team/cache:v1' is not a reference");
  }
  // Docker Hub names normalize as docker and skopeo read them.
  CHECK_FALSE(
      cosign::identity_mismatch("docker.io/library/cache:v1", kDigest, oci::parse_reference("cache:v1"), IdentityRule::exact));
  CHECK(cosign::parse_identity_rule("exact") == IdentityRule::exact);
  CHECK(cosign::parse_identity_rule("repository") == IdentityRule::repository);
  CHECK_FALSE(cosign::parse_identity_rule("Exact"));
}

TEST_CASE("cosign payload: optional's creator and timestamp typed as containers/image types them") {
  const std::string critical =
      R"({"critical":{"identity":{"docker-reference":"r.example/x:v1"},"image":{"docker-manifest-digest":")" + kDigest +
      R"("},"type":"cosign container image signature"},"optional":)";
  auto with = [&](const std::string& optional) { return critical + optional + "}"; };
  for (const char* ok :
       {R"({})", R"({"creator":"skopeo"})", R"({"creator":null,"timestamp":null})", R"({"timestamp":1700000000})",
        R"({"timestamp":-5})", R"({"timestamp":1.7e9})", R"({"timestamp":1700000000.0})", R"({"other":[1,{"a":2}]})"}) {
    CAPTURE(ok);
    CHECK(cosign::parse_payload(with(ok), "payload").docker_reference == "r.example/x:v1");
  }
  CHECK(payload_refusal(with(R"({"creator":5})")) == "payload: field 'optional.creator' is not a string");
  CHECK(payload_refusal(with(R"({"creator":{"a":"b"}})")) == "payload: field 'optional.creator' is not a string");
  CHECK(payload_refusal(with(R"({"timestamp":"1700000000"})")) == "payload: field 'optional.timestamp' is not an integer");
  CHECK(payload_refusal(with(R"({"timestamp":1.5})")) == "payload: field 'optional.timestamp' is not an integer");
  CHECK(payload_refusal(with(R"({"timestamp":true})")) == "payload: field 'optional.timestamp' is not an integer");
  CHECK(payload_refusal(with(R"({"timestamp":9223372036854775808})")) == "payload: field 'optional.timestamp' is not an integer");
  CHECK(payload_refusal(with(R"({"timestamp":1e300})")) == "payload: field 'optional.timestamp' is not an integer");
}

TEST_CASE("cosign signature manifest: layers read as written, at most 1,000, foreign ones kept unjudged") {
  const std::string big(5600, 'x');
  std::string doc = R"({"schemaVersion":2,"config":{"mediaType":"x","digest":")" + kDigest + R"(","size":2},"layers":[)" +
                    R"({"mediaType":"application/vnd.dev.cosign.simplesigning.v1+json","size":10,"digest":")" + kDigest +
                    R"(","annotations":{"dev.sigstore.cosign/bundle":")" + big +
                    R"(","dev.cosignproject.cosign/signature":"QUJD"}},)" +
                    R"({"mediaType":"application/vnd.in-toto+json","digest":"md5:1","size":-1},{}]})";
  std::vector<cosign::SignatureLayer> layers = cosign::parse_signature_layers(doc, "sig");
  REQUIRE(layers.size() == 3);
  CHECK(layers[0].signature == "QUJD");
  CHECK(layers[0].size == 10);
  CHECK(layers[0].json.find("\"size\":10,\"digest\"") != std::string::npos);  // key order kept
  CHECK(layers[0].json.find(big) != std::string::npos);
  CHECK(layers[1].media_type == "application/vnd.in-toto+json");
  CHECK(layers[1].digest.empty());
  CHECK_FALSE(layers[2].signature);
  std::string many = R"({"layers":[)";
  for (std::size_t i = 0; i <= cosign::kMaxSignatureLayers; ++i) many += std::string(i == 0 ? "" : ",") + "{}";
  CHECK(test::integrity_error([&] { (void)cosign::parse_signature_layers(many + "]}", "sig"); }) ==
        "sig: field 'layers' has more than 1000 entries");
  many.erase(many.rfind(",{}"));
  CHECK(cosign::parse_signature_layers(many + "]}", "sig").size() == cosign::kMaxSignatureLayers);
  CHECK(test::integrity_error([&] { (void)cosign::parse_signature_layers(R"({"layers":[1]})", "sig"); }) ==
        "sig: field 'layers[0]' is not an object");
  // Written back: each layer as it was, the new one after.
  layers.push_back(cosign::payload_layer(kDigest, 3, "QUJD"));
  std::string out = cosign::signature_manifest_json(layers, kDigest, 7);
  CHECK(out.find(big) != std::string::npos);
  CHECK(cosign::parse_signature_layers(out, "out").size() == 4);
}
