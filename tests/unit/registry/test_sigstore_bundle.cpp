// registry/sigstore_bundle.cpp, registry/referrers.cpp and registry/cosign_bundles.cpp: the bundle ccpack writes
// (statement, PAE, envelope, key hint, referrer manifest) parses back and verifies with both key types; hostile
// bundles, statements, referrer manifests and referrers indexes are refused naming the field; and the check,
// against a scripted loopback registry, accepts a trusted key's bundle found through the referrers API or the
// fallback tag, and refuses another digest, another subject, another tag, another predicate, another key.
#include <catch2/catch.hpp>
#include <string>

#include "manifest/keys.hpp"
#include "registry/cosign_bundles.hpp"
#include "registry/cosign_signatures.hpp"
#include "registry/referrers.hpp"
#include "registry/sigstore_bundle.hpp"
#include "unit/loopback_http.hpp"
#include "unit/support.hpp"
#include "util/base64.hpp"
#include "util/error.hpp"
#include "util/sha256.hpp"

using namespace ccpack;
using test::http_answer;
namespace oci = ccpack::registry::oci;
namespace bundle = ccpack::registry::bundle;
namespace referrers = ccpack::registry::referrers;
namespace cosign = ccpack::registry::cosign;

namespace {

const std::string kSubject = "sha256:" + std::string(64, 'b');
// A P-256 key made for this test, and its hint as cosign computes it (openssl pkey -pubout -outform DER | sha256 | base64).
const std::string kEcPrivate =
    "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgePkPNVkVsCMZ4sc+\n"
    "pTlJ2C/xplMdEDQpcmiIrPknFX6hRANCAASpaBeqXigenMfigdBuRWSZ+So02n/G\n"
    "0ecqv+RBwONrATDlQGbJh4IX9/KBNekR3940szrKh/jbw1MS7yOBT3B5\n-----END PRIVATE KEY-----\n";
const std::string kEcHint = "yvY+04k4QOnEEbPVguXA2m2iOvkPaJEvlCLu9uajiuk=";

manifest::PrivateKey ec_key() {
  test::ScratchDir t;
  test::write_file(t / "ec.key", kEcPrivate, 0600);
  return manifest::PrivateKey::load(t / "ec.key", manifest::KeyUse::cosign);
}
const std::string kName = "registry.example/team/model:v1";

// A bundle of `statement` signed by `key` over the PAE.
std::string signed_bundle(const manifest::PrivateKey& key, const std::string& statement) {
  return bundle::bundle_json(statement, key.sign_detached(bundle::pae(bundle::kPayloadType, statement)),
                             bundle::key_hint(key.public_key()));
}

// The envelope of `json`, or the refusal's message.
std::string refusal(const std::string& json) {
  std::string not_ours;
  return test::integrity_error([&] { (void)bundle::parse_bundle(json, "bundle", not_ours); });
}

std::string statement_refusal(const std::string& json) {
  return test::integrity_error([&] { (void)bundle::parse_statement(json, "statement"); });
}

}  // namespace

TEST_CASE("sigstore bundle: what ccpack writes parses back and verifies over the PAE, Ed25519 and ECDSA P-256") {
  CHECK(bundle::pae("application/vnd.in-toto+json", "{}") == "DSSEv1 28 application/vnd.in-toto+json 2 {}");
  const std::string statement = bundle::statement_json(kName, kSubject);
  CHECK(statement ==
        R"({"_type":"https://in-toto.io/Statement/v1","subject":[{"name":"registry.example/team/model:v1","digest":{"sha256":")" +
            std::string(64, 'b') + R"("}}],"predicateType":"https://sigstore.dev/cosign/sign/v1","predicate":{}})");
  bundle::Statement st = bundle::parse_statement(statement, "statement");
  CHECK(st.predicate_type == bundle::kPredicateType);
  REQUIRE(st.subjects.size() == 1);
  CHECK(st.subjects[0].name == kName);
  CHECK(st.subjects[0].sha256_hex == std::string(64, 'b'));
  CHECK(bundle::key_hint(ec_key().public_key()) == kEcHint);
  for (const manifest::PrivateKey& key : {manifest::PrivateKey::generate(), ec_key()}) {
    const std::string json = signed_bundle(key, statement);
    CHECK(json.starts_with(
        R"({"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","verificationMaterial":{"publicKey":{"hint":")"));
    std::string not_ours;
    std::optional<bundle::Envelope> env = bundle::parse_bundle(json, "bundle", not_ours);
    REQUIRE(env);
    CHECK(not_ours.empty());
    CHECK(env->payload == statement);
    CHECK(env->payload_type == bundle::kPayloadType);
    REQUIRE(env->signatures.size() == 1);
    CHECK(key.public_key().verify_detached(bundle::pae(env->payload_type, env->payload), env->signatures[0]));
    CHECK_FALSE(key.public_key().verify_detached(env->payload, env->signatures[0]));  // the PAE, not the bare statement
  }
}

TEST_CASE(
    "sigstore bundle: keyless and message-signature bundles are another verifier's, hostile ones refused naming the field") {
  const std::string env =
      R"("dsseEnvelope":{"payload":"e30=","payloadType":"application/vnd.in-toto+json","signatures":[{"sig":"AAAA"}]})";
  const std::string head =
      R"({"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","verificationMaterial":{"publicKey":{}},)";
  std::string not_ours;
  CHECK_FALSE(bundle::parse_bundle(
      R"({"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","verificationMaterial":{"certificate":{}},)" + env + "}",
      "bundle", not_ours));
  CHECK(not_ours == "skipped: not key-based (no verificationMaterial.publicKey)");
  CHECK_FALSE(bundle::parse_bundle(head + R"("messageSignature":{}})", "bundle", not_ours));
  CHECK(not_ours == "skipped: not a DSSE envelope (cosign 3 signs images with one)");
  CHECK(bundle::parse_bundle(
      R"({"mediaType":"application/vnd.dev.sigstore.bundle+json;version=0.3","verificationMaterial":{"publicKey":{}},)" + env +
          "}",
      "bundle", not_ours));
  CHECK(
      refusal(R"({"mediaType":"application/vnd.dev.sigstore.bundle+json;version=0.2","verificationMaterial":{"publicKey":{}},)" +
              env + "}") ==
      "bundle: field 'mediaType' is 'application/vnd.dev.sigstore.bundle+json;version=0.2', not application/vnd.dev.sigstore.bundle.v0.3+json");
  CHECK(refusal(R"({"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json",)" + env + "}") ==
        "bundle: field 'verificationMaterial' is missing");
  CHECK(refusal(head + R"("dsseEnvelope":{"payload":"e30=","payloadType":"text/plain","signatures":[{"sig":"AAAA"}]}})") ==
        "bundle: field 'dsseEnvelope.payloadType' is not 'application/vnd.in-toto+json'");
  CHECK(refusal(
            head +
            R"("dsseEnvelope":{"payload":"e30","payloadType":"application/vnd.in-toto+json","signatures":[{"sig":"AAAA"}]}})") ==
        "bundle: field 'dsseEnvelope.payload' is not padded standard base64");
  CHECK(refusal(
            head +
            R"("dsseEnvelope":{"payload":"e30=","payloadType":"application/vnd.in-toto+json","signatures":[{"sig":"A-_A"}]}})") ==
        "bundle: field 'dsseEnvelope.signatures[0].sig' is not padded standard base64");
  CHECK(refusal(head + R"("dsseEnvelope":{"payload":"e30=","payloadType":"application/vnd.in-toto+json","signatures":[]}})") ==
        "bundle: field 'dsseEnvelope.signatures' is empty");
  std::string many;
  for (int i = 0; i < 17; ++i) many += std::string(i == 0 ? "" : ",") + R"({"sig":"AAAA"})";
  CHECK(refusal(head + R"("dsseEnvelope":{"payload":"e30=","payloadType":"application/vnd.in-toto+json","signatures":[)" + many +
                "]}}") == "bundle: field 'dsseEnvelope.signatures' has more than 16 entries");
  CHECK(refusal(head + R"("dsseEnvelope":{"payload":7,"payload":8}})").find("field 'dsseEnvelope.payload' is repeated") !=
        std::string::npos);
  CHECK(refusal("[]") == "bundle is not a JSON object");
}

TEST_CASE("sigstore statement: what in-toto v1 refuses is refused, naming the field") {
  const std::string subject = R"([{"digest":{"sha256":"ab"}}])";
  CHECK(statement_refusal(R"({"_type":"https://in-toto.io/Statement/v0.1","subject":)" + subject + R"(,"predicateType":"x"})") ==
        "statement: field '_type' is not 'https://in-toto.io/Statement/v1'");
  CHECK(statement_refusal(R"({"_type":"https://in-toto.io/Statement/v1","subject":[],"predicateType":"x"})") ==
        "statement: field 'subject' is empty");
  CHECK(statement_refusal(
            R"({"_type":"https://in-toto.io/Statement/v1","subject":[{"name":7,"digest":{}}],"predicateType":"x"})") ==
        "statement: field 'subject[0].name' is not a string");
  CHECK(statement_refusal(
            R"({"_type":"https://in-toto.io/Statement/v1","subject":[{"digest":{"sha256":1}}],"predicateType":"x"})") ==
        "statement: field 'subject[0].digest.sha256' is not a string");
  CHECK(statement_refusal(R"({"_type":"https://in-toto.io/Statement/v1","subject":)" + subject + "}") ==
        "statement: field 'predicateType' is missing");
  std::string many;
  for (int i = 0; i < 1025; ++i) many += std::string(i == 0 ? "" : ",") + R"({"digest":{}})";
  CHECK(statement_refusal(R"({"_type":"https://in-toto.io/Statement/v1","subject":[)" + many + R"(],"predicateType":"x"})") ==
        "statement: field 'subject' has more than 1024 entries");
  bundle::Statement cosigns =
      bundle::parse_statement(R"({"_type":"https://in-toto.io/Statement/v1","subject":[{"digest":{"sha256":"ab"},)"
                              R"("annotations":{}}],"predicateType":"https://sigstore.dev/cosign/sign/v1","predicate":{}})",
                              "statement");
  CHECK_FALSE(cosigns.subjects.at(0).name);  // cosign's own statement names no reference
}

TEST_CASE(
    "referrers: the fallback index keeps other writers' entries as written, at most 1000, and a referrer manifest names its subject") {
  CHECK(referrers::fallback_tag(kSubject) == "sha256-" + std::string(64, 'b'));
  const std::string foreign = R"({"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:)" +
                              std::string(64, 'c') +
                              R"(","size":9,"artifactType":"application/spdx+json","annotations":{"z":"1","a":"2"}})";
  std::vector<referrers::Entry> entries = referrers::parse_index(R"({"schemaVersion":2,"manifests":[)" + foreign + "]}", "index");
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].artifact_type == "application/spdx+json");
  entries.push_back(referrers::entry_of("sha256:" + std::string(64, 'd'), 700, bundle::kMediaType));
  const std::string written = referrers::index_json(entries);
  CHECK(written.find(foreign) != std::string::npos);
  CHECK(referrers::parse_index(written, "index").at(1).artifact_type == bundle::kMediaType);
  std::string many;
  for (int i = 0; i < 1001; ++i) many += std::string(i == 0 ? "" : ",") + "{}";
  CHECK(test::integrity_error([&] { (void)referrers::parse_index(R"({"manifests":[)" + many + "]}", "index"); }) ==
        "index: field 'manifests' has more than 1000 entries");
  CHECK(test::integrity_error([&] { (void)referrers::parse_index(R"({"manifests":[7]})", "index"); }) ==
        "index: field 'manifests[0]' is not an object");
  const bundle::Blob subject{std::string(oci::kImageManifestType), kSubject, 500};
  const bundle::Blob layer{std::string(bundle::kMediaType), "sha256:" + std::string(64, 'e'), 900};
  bundle::Referrer r = bundle::parse_referrer_manifest(bundle::referrer_manifest_json(subject, layer), "manifest");
  CHECK(r.subject_digest == kSubject);
  REQUIRE(r.layers.size() == 1);
  CHECK(r.layers[0].digest == layer.digest);
  CHECK(r.layers[0].size == 900);
  CHECK(test::integrity_error([&] { (void)bundle::parse_referrer_manifest(R"({"layers":[]})", "manifest"); }) ==
        "manifest: field 'subject' is missing");
  CHECK(test::integrity_error([&] {
          (void)bundle::parse_referrer_manifest(R"({"subject":{"digest":"sha256:x"},"layers":[]})", "manifest");
        }) == "manifest: field 'subject.digest' is not a sha256 digest");
}

namespace {

const oci::Reference kBundleRef = oci::parse_reference("registry.example/team/model:v1");
const std::string kNoSuchThing = http_answer(404, {}, "");

// The check of kSubject for kBundleRef against a registry with no `.sig` tag whose one referrer is `bundle_json` (a
// bundle referrer manifest of kSubject, or of `manifest_subject`), listed by the referrers API or the fallback tag.
// `announced`: the bundle layer's size in the manifest (0: its real size); a layer over the bound is not fetched.
registry::CosignCheck check_bundle(const manifest::PublicKey& trusted, const std::string& bundle_json, bool api,
                                   cosign::IdentityRule rule = cosign::IdentityRule::exact,
                                   const std::string& manifest_subject = kSubject, std::uint64_t announced = 0) {
  const bundle::Blob layer{std::string(bundle::kMediaType), oci::digest_of(bundle_json),
                           announced != 0 ? announced : bundle_json.size()};
  const std::string manifest =
      bundle::referrer_manifest_json({std::string(oci::kImageManifestType), manifest_subject, 400}, layer);
  const std::string index =
      referrers::index_json({referrers::entry_of(oci::digest_of(manifest), manifest.size(), bundle::kMediaType)});
  const std::string index_answer = http_answer(200, {"Content-Type: application/vnd.oci.image.index.v1+json"}, index);
  std::vector<std::string> answers{kNoSuchThing};
  if (!api) answers.push_back(kNoSuchThing);
  answers.push_back(index_answer);
  answers.push_back(http_answer(200, {"Content-Type: application/vnd.oci.image.manifest.v1+json"}, manifest));
  if (layer.size <= bundle::kMaxBundleBytes) answers.push_back(http_answer(200, {}, bundle_json));
  test::LoopbackHttp server(answers);
  registry::SessionOptions o;
  o.http.plain_http = true;
  o.http.max_attempts = 1;
  registry::Session session(oci::parse_reference("127.0.0.1:" + std::to_string(server.port()) + "/team/model:v1"), o);
  manifest::TrustStore trust;
  trust.add(trusted);
  registry::CosignCheck c = registry::check_cosign_signatures(session, {kSubject, "", kBundleRef}, trust, rule);
  // A referrer of another subject is refused before its bundle blob is fetched.
  CHECK(server.requests().size() == answers.size() - (manifest_subject == kSubject ? 0 : 1));
  return c;
}

}  // namespace

TEST_CASE("cosign check: a trusted key's bundle referrer passes, found by the referrers API or the fallback tag") {
  test::NoCredentials none;
  for (const manifest::PrivateKey& key : {manifest::PrivateKey::generate(), ec_key()}) {
    const std::string b = signed_bundle(key, bundle::statement_json(kName, kSubject));
    for (bool api : {true, false}) {
      registry::CosignCheck c = check_bundle(key.public_key(), b, api);
      CHECK(c.verified_by == key.key_id());
      CHECK(c.problems == std::vector<std::string>{"no signature (the tag is missing or holds no layer)"});
    }
  }
}

namespace {

// The raw r||s form (two 32-byte big-endian numbers) of a DER ECDSA P-256 signature: SEQUENCE { INTEGER r, INTEGER s }.
std::string raw_of_der(const std::string& der) {
  std::string raw;
  std::size_t at = 2;  // SEQUENCE tag and (short) length
  for (int i = 0; i < 2; ++i) {
    const std::size_t len = static_cast<unsigned char>(der.at(at + 1));
    std::string n = der.substr(at + 2, len);
    while (n.size() > 32 && n.front() == '\0') n.erase(0, 1);
    raw += std::string(32 - n.size(), '\0') + n;
    at += 2 + len;
  }
  return raw;
}

}  // namespace

TEST_CASE("cosign check: a referrers path answered with something other than an index is no API: the fallback tag is read") {
  test::NoCredentials none;
  manifest::PrivateKey key = manifest::PrivateKey::generate();
  test::LoopbackHttp server({kNoSuchThing, http_answer(200, {"Content-Type: text/html"}, "<html></html>"), kNoSuchThing});
  registry::SessionOptions o;
  o.http.plain_http = true;
  o.http.max_attempts = 1;
  registry::Session session(oci::parse_reference("127.0.0.1:" + std::to_string(server.port()) + "/team/model:v1"), o);
  manifest::TrustStore trust;
  trust.add(key.public_key());
  registry::CosignCheck c =
      registry::check_cosign_signatures(session, {kSubject, "", kBundleRef}, trust, cosign::IdentityRule::exact);
  CHECK(c.problems == std::vector<std::string>{"no signature (the tag is missing or holds no layer)"});
  REQUIRE(server.requests().size() == 3);
  CHECK(server.requests()[2].starts_with("GET /v2/team/model/manifests/sha256-" + std::string(64, 'b') + " HTTP/1.1"));
}

TEST_CASE("cosign check: an ECDSA envelope signature as raw r||s passes as DER does") {
  test::NoCredentials none;
  manifest::PrivateKey key = ec_key();
  const std::string statement = bundle::statement_json(kName, kSubject);
  const std::string raw = raw_of_der(key.sign_detached(bundle::pae(bundle::kPayloadType, statement)));
  REQUIRE(raw.size() == manifest::kRawP256SignatureBytes);
  const std::string b = bundle::bundle_json(statement, raw, bundle::key_hint(key.public_key()));
  CHECK(check_bundle(key.public_key(), b, true).verified_by == key.key_id());
}

TEST_CASE("cosign check: a bundle of another key, digest, subject, tag or predicate is refused with its reason") {
  test::NoCredentials none;
  manifest::PrivateKey key = manifest::PrivateKey::generate();
  const std::string id = key.key_id();
  const std::string another = "sha256:" + std::string(64, 'd');
  auto problem = [](const registry::CosignCheck& c) {
    return c.problems.size() == 2 ? c.problems[1].substr(c.problems[1].find(": ") + 2) : "?";
  };
  // defence: bundle-key
  CHECK(problem(check_bundle(manifest::PrivateKey::generate().public_key(),
                             signed_bundle(key, bundle::statement_json(kName, kSubject)), true)) == "signed by no trusted key");
  // defence: bundle-digest
  CHECK(problem(check_bundle(key.public_key(), signed_bundle(key, bundle::statement_json(kName, another)), true)) ==
        "key " + id + " signed " + another + ", another artifact");
  // defence: bundle-subject (a referrer of another artifact listed under this one)
  CHECK(problem(check_bundle(key.public_key(), signed_bundle(key, bundle::statement_json(kName, kSubject)), false,
                             cosign::IdentityRule::exact, another)) == "its subject is " + another + ", another artifact");
  // defence: bundle-identity-exact: another tag, and cosign's own form (no name), refused by default
  CHECK(
      problem(check_bundle(key.public_key(),
                           signed_bundle(key, bundle::statement_json("registry.example/team/model:v0", kSubject)), true)) ==
      "key " + id +
          " signed this digest for another reference: it names registry.example/team/model:v0, not registry.example/team/model:v1 "
          "(--cosign-identity repository accepts any tag of the repository)");
  const std::string nameless = R"({"_type":"https://in-toto.io/Statement/v1","subject":[{"digest":{"sha256":")" +
                               std::string(64, 'b') +
                               R"("},"annotations":{}}],"predicateType":"https://sigstore.dev/cosign/sign/v1","predicate":{}})";
  CHECK(
      problem(check_bundle(key.public_key(), signed_bundle(key, nameless), true)) ==
      "key " + id +
          " signed this digest for another reference: its subject has no name (cosign's own form), not registry.example/team/model:v1 "
          "(--cosign-identity repository accepts it)");
  CHECK(check_bundle(key.public_key(), signed_bundle(key, nameless), true, cosign::IdentityRule::repository).verified_by == id);
  CHECK(problem(check_bundle(key.public_key(),
                             signed_bundle(key, bundle::statement_json("registry.example/team/other:v1", kSubject)), true,
                             cosign::IdentityRule::repository)) ==
        "key " + id +
            " signed this digest for another reference: it names registry.example/team/other, not registry.example/team/model");
  // defence: bundle-predicate-type (an attestation by the same key is not a signature)
  std::string slsa = bundle::statement_json(kName, kSubject);
  slsa.replace(slsa.find(bundle::kPredicateType), bundle::kPredicateType.size(), "https://slsa.dev/provenance/v1");
  CHECK(problem(check_bundle(key.public_key(), signed_bundle(key, slsa), true)) ==
        "key " + id + " signed predicate type 'https://slsa.dev/provenance/v1', not a cosign signature");
  // A malformed statement under a good signature, a malformed bundle: named by field.
  std::string v01 = bundle::statement_json(kName, kSubject);
  v01.replace(v01.find("Statement/v1"), 12, "Statement/v0.1");
  CHECK(problem(check_bundle(key.public_key(), signed_bundle(key, v01), true)) ==
        "key " + id + " signed a malformed statement: field '_type' is not 'https://in-toto.io/Statement/v1'");
  // defence: bundle-size (announced over 64 KiB: never fetched)
  CHECK(problem(check_bundle(key.public_key(), signed_bundle(key, bundle::statement_json(kName, kSubject)), true,
                             cosign::IdentityRule::exact, kSubject, 1 << 20)) == "bundle of 1048576 bytes is larger than 65536");
  std::string unpadded = signed_bundle(key, bundle::statement_json(kName, kSubject));
  unpadded.erase(unpadded.find("==\"}]"), 2);
  CHECK(problem(check_bundle(key.public_key(), unpadded, true)) ==
        "malformed bundle: field 'dsseEnvelope.signatures[0].sig' is not padded standard base64");
}
