// The sigstore bundle form of a cosign signature; the shapes and the rules are in sigstore_bundle.hpp.
#include "registry/sigstore_bundle.hpp"

#include <nlohmann/json.hpp>

#include "manifest/json_guard.hpp"
#include "registry/oci.hpp"
#include "util/base64.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"
#include "util/sha256.hpp"

namespace ccpack::registry::bundle {
namespace {

using bjson = nlohmann::json;
using bojson = nlohmann::ordered_json;

[[noreturn]] void bundle_field(std::string_view what, const std::string& field, const std::string& why) {
  throw IntegrityError(std::string(what) + ": field '" + field + "' " + why);
}

// The member `key` of `obj`, which must be there and of the type `check` accepts (named `type` in the message).
template <class Check>
const bjson& member(const bjson& obj, const char* key, Check check, std::string_view type, std::string_view what,
                    const std::string& field) {
  auto it = obj.find(key);
  if (it == obj.end()) bundle_field(what, field, "is missing");
  if (!check(*it)) bundle_field(what, field, "is not " + std::string(type));
  return *it;
}

bool is_string(const bjson& v) { return v.is_string(); }
bool is_object(const bjson& v) { return v.is_object(); }
bool is_array(const bjson& v) { return v.is_array(); }

// Strict base64 of `field`: padded standard alphabet, as protobuf's JSON writers and sigstore's tools write it.
std::string strict_base64(const bjson& obj, const char* key, std::string_view what, const std::string& field) {
  const std::string text = member(obj, key, is_string, "a string", what, field).get<std::string>();
  std::optional<std::string> bytes = base64_decode(text);
  // defence: bundle-base64-strict
  if (bytes && !base64_decode_strict(text)) bytes.reset();
  if (!bytes || bytes->empty()) bundle_field(what, field, "is not padded standard base64");
  return *bytes;
}

Subject parse_subject(const bjson& s, std::string_view what, const std::string& field) {
  if (!s.is_object()) bundle_field(what, field, "is not an object");
  Subject out;
  if (auto name = s.find("name"); name != s.end()) {
    if (!name->is_string()) bundle_field(what, field + ".name", "is not a string");
    out.name = name->get<std::string>();
  }
  const bjson& digest = member(s, "digest", is_object, "an object", what, field + ".digest");
  for (const auto& [algorithm, value] : digest.items()) {
    if (!value.is_string()) bundle_field(what, field + ".digest." + escaped(algorithm, 40), "is not a string");
    if (algorithm == "sha256") out.sha256_hex = value.get<std::string>();
  }
  return out;
}

}  // namespace

bool is_bundle_type(std::string_view media_type) { return media_type == kMediaType || media_type == kMediaTypeParam; }

std::string statement_json(std::string_view name, std::string_view digest) {
  if (!oci::parse_digest(digest)) throw IntegrityError("'" + escaped(digest, 120) + "' is not a sha256 digest");
  bojson subject{{"name", name}, {"digest", {{"sha256", std::string(digest.substr(7))}}}};
  bojson statement{{"_type", kStatementType},
                   {"subject", bojson::array({subject})},
                   {"predicateType", kPredicateType},
                   {"predicate", bojson::object()}};
  return statement.dump();
}

Statement parse_statement(std::string_view text, std::string_view what) {
  bjson doc = manifest::parse_untrusted<bjson>(text, what, nullptr, oci::kMaxJsonDepth);
  if (!doc.is_object()) throw IntegrityError(std::string(what) + " is not a JSON object");
  // defence: bundle-statement-type
  if (member(doc, "_type", is_string, "a string", what, "_type").get<std::string>() != kStatementType) {
    bundle_field(what, "_type", "is not '" + std::string(kStatementType) + "'");
  }
  Statement st;
  st.predicate_type = member(doc, "predicateType", is_string, "a string", what, "predicateType").get<std::string>();
  const bjson& subjects = member(doc, "subject", is_array, "an array", what, "subject");
  if (subjects.empty()) bundle_field(what, "subject", "is empty");
  // defence: bundle-subject-count
  if (subjects.size() > kMaxStatementSubjects)
    bundle_field(what, "subject", "has more than " + std::to_string(kMaxStatementSubjects) + " entries");
  for (std::size_t i = 0; i < subjects.size(); ++i) {
    st.subjects.push_back(parse_subject(subjects[i], what, "subject[" + std::to_string(i) + "]"));
  }
  return st;
}

std::string pae(std::string_view payload_type, std::string_view payload) {
  std::string out = "DSSEv1 " + std::to_string(payload_type.size()) + " ";
  out += payload_type;
  out += " " + std::to_string(payload.size()) + " ";
  out += payload;
  return out;
}

std::string key_hint(const manifest::PublicKey& key) {
  // The PEM's body is the SPKI DER in base64, 64 characters a line.
  std::string body;
  const std::string pem = key.pem();
  std::size_t at = pem.find('\n');
  const std::size_t end = pem.find("-----END");
  for (; at != std::string::npos && at < end; ++at) {
    if (pem[at] != '\n' && pem[at] != '\r') body += pem[at];
  }
  std::optional<std::string> der = base64_decode(body);
  if (!der) throw Error("a public key's PEM does not decode");
  Sha256 h;
  h.update(*der);
  const auto digest = h.finish();
  return base64_encode(std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
}

std::string bundle_json(std::string_view statement, std::string_view signature, std::string_view hint) {
  bojson envelope{{"payload", base64_encode(statement)},
                  {"payloadType", kPayloadType},
                  {"signatures", bojson::array({bojson{{"sig", base64_encode(signature)}}})}};
  bojson b{{"mediaType", kMediaType}, {"verificationMaterial", {{"publicKey", {{"hint", hint}}}}}, {"dsseEnvelope", envelope}};
  return b.dump();
}

std::optional<Envelope> parse_bundle(std::string_view text, std::string_view what, std::string& not_ours) {
  bjson doc = manifest::parse_untrusted<bjson>(text, what, nullptr, oci::kMaxJsonDepth);
  if (!doc.is_object()) throw IntegrityError(std::string(what) + " is not a JSON object");
  const std::string media_type = member(doc, "mediaType", is_string, "a string", what, "mediaType").get<std::string>();
  // defence: bundle-media-type
  if (!is_bundle_type(media_type))
    bundle_field(what, "mediaType", "is '" + escaped(media_type, 120) + "', not " + std::string(kMediaType));
  const bjson& material = member(doc, "verificationMaterial", is_object, "an object", what, "verificationMaterial");
  if (!material.contains("publicKey")) {
    not_ours = "skipped: not key-based (no verificationMaterial.publicKey)";
    return std::nullopt;
  }
  if (!doc.contains("dsseEnvelope")) {
    not_ours = "skipped: not a DSSE envelope (cosign 3 signs images with one)";
    return std::nullopt;
  }
  const bjson& env = member(doc, "dsseEnvelope", is_object, "an object", what, "dsseEnvelope");
  Envelope out;
  out.payload_type = member(env, "payloadType", is_string, "a string", what, "dsseEnvelope.payloadType").get<std::string>();
  // defence: bundle-payload-type
  if (out.payload_type != kPayloadType)
    bundle_field(what, "dsseEnvelope.payloadType", "is not '" + std::string(kPayloadType) + "'");
  out.payload = strict_base64(env, "payload", what, "dsseEnvelope.payload");
  const bjson& sigs = member(env, "signatures", is_array, "an array", what, "dsseEnvelope.signatures");
  if (sigs.empty()) bundle_field(what, "dsseEnvelope.signatures", "is empty");
  // defence: bundle-signature-count
  if (sigs.size() > kMaxEnvelopeSignatures) {
    bundle_field(what, "dsseEnvelope.signatures", "has more than " + std::to_string(kMaxEnvelopeSignatures) + " entries");
  }
  for (std::size_t i = 0; i < sigs.size(); ++i) {
    const std::string field = "dsseEnvelope.signatures[" + std::to_string(i) + "]";
    if (!sigs[i].is_object()) bundle_field(what, field, "is not an object");
    out.signatures.push_back(strict_base64(sigs[i], "sig", what, field + ".sig"));
  }
  return out;
}

std::string referrer_manifest_json(const Blob& subject, const Blob& bundle) {
  bojson m{
      {"schemaVersion", 2},
      {"mediaType", oci::kImageManifestType},
      {"artifactType", kMediaType},
      {"config",
       {{"mediaType", oci::kEmptyConfigType}, {"digest", oci::kEmptyConfigDigest}, {"size", oci::kEmptyConfigData.size()}}},
      {"layers", bojson::array({bojson{{"mediaType", bundle.media_type}, {"digest", bundle.digest}, {"size", bundle.size}}})},
      {"subject", {{"mediaType", subject.media_type}, {"digest", subject.digest}, {"size", subject.size}}},
      {"annotations", {{kContentAnnotation, kContentDsse}, {kPredicateAnnotation, kPredicateType}}}};
  return m.dump();
}

Referrer parse_referrer_manifest(std::string_view text, std::string_view what) {
  bjson doc = manifest::parse_untrusted<bjson>(text, what, nullptr, oci::kMaxJsonDepth);
  if (!doc.is_object()) throw IntegrityError(std::string(what) + " is not a JSON object");
  Referrer r;
  const bjson& subject = member(doc, "subject", is_object, "an object", what, "subject");
  r.subject_digest = member(subject, "digest", is_string, "a string", what, "subject.digest").get<std::string>();
  if (!oci::parse_digest(r.subject_digest)) bundle_field(what, "subject.digest", "is not a sha256 digest");
  const bjson& layers = member(doc, "layers", is_array, "an array", what, "layers");
  if (layers.size() > oci::kMaxLayers)
    bundle_field(what, "layers", "has more than " + std::to_string(oci::kMaxLayers) + " entries");
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const std::string field = "layers[" + std::to_string(i) + "]";
    const bjson& l = layers[i];
    if (!l.is_object()) bundle_field(what, field, "is not an object");
    Blob b;
    b.media_type = member(l, "mediaType", is_string, "a string", what, field + ".mediaType").get<std::string>();
    b.digest = member(l, "digest", is_string, "a string", what, field + ".digest").get<std::string>();
    if (!oci::parse_digest(b.digest)) bundle_field(what, field + ".digest", "is not a sha256 digest");
    const bjson& size = member(
        l, "size", [](const bjson& v) { return v.is_number_unsigned(); }, "a size", what, field + ".size");
    b.size = size.get<std::uint64_t>();
    r.layers.push_back(std::move(b));
  }
  return r;
}

}  // namespace ccpack::registry::bundle
