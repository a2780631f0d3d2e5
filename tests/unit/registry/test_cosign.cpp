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
  CHECK(payload_refusal(doc(identity + "," + image + "," + type + R"(,"more":1)")) == "payload: field 'critical.more' is not allowed");
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

TEST_CASE("cosign identity: the same registry and repository, tag and digest not compared") {
  oci::Reference ref = oci::parse_reference("127.0.0.1:5000/team/cache:v1");
  CHECK_FALSE(cosign::identity_mismatch("127.0.0.1:5000/team/cache:v1", ref));
  CHECK_FALSE(cosign::identity_mismatch("127.0.0.1:5000/team/cache", ref));
  CHECK_FALSE(cosign::identity_mismatch("127.0.0.1:5000/team/cache:other", ref));
  CHECK(cosign::identity_mismatch("127.0.0.1:5000/team/other:v1", ref) ==
        "it names 127.0.0.1:5000/team/other, not 127.0.0.1:5000/team/cache");
  CHECK(cosign::identity_mismatch("127.0.0.1:5001/team/cache:v1", ref) ==
        "it names 127.0.0.1:5001/team/cache, not 127.0.0.1:5000/team/cache");
  CHECK(cosign::identity_mismatch("Not A Reference", ref) == "its docker-reference 'Not A Reference' is not a reference");
  // Docker Hub names normalize as docker and skopeo read them.
  CHECK_FALSE(cosign::identity_mismatch("docker.io/library/cache", oci::parse_reference("cache:v1")));
}
