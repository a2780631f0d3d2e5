// Writing and checking cosign 3's sigstore bundle referrers; see cosign_bundles.hpp.
#include "registry/cosign_bundles.hpp"

#include <algorithm>

#include "registry/referrers.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"

namespace ccpack::registry {
namespace {

// A bundle referrer of a subject, read: its referrer manifest's digest and its envelope.
struct ReadBundle {
  std::string digest;
  bundle::Envelope envelope;
};

// The bundle blob of `layer`, at most kMaxBundleBytes (its announced size checked before), checked against its digest.
std::string fetch_bundle_blob(Session& s, const bundle::Blob& layer) {
  std::string bytes;
  (void)s.get_blob(layer.digest, 0, std::nullopt, [&bytes, &layer](const char* data, std::size_t size) {
    if (bytes.size() + size > bundle::kMaxBundleBytes)
      throw IntegrityError("bundle " + escaped(layer.digest) + " is longer than announced");
    bytes.append(data, size);
  });
  if (bytes.size() != layer.size || oci::digest_of(bytes) != layer.digest) {
    throw IntegrityError("bundle " + layer.digest + " does not match its digest");
  }
  return bytes;
}

// The envelope of the bundle referrer `entry` of `subject_digest`; nullopt with why in `problem` when it cannot
// carry a key-based signature of that subject or is malformed. Throws IntegrityError when the registry serves a
// document or blob against its own digest.
std::optional<bundle::Envelope> read_bundle(Session& s, const referrers::Entry& entry, const std::string& subject_digest,
                                            std::string& problem) {
  std::optional<Document> doc = s.get_manifest(entry.digest);
  if (!doc) {
    problem = "its manifest is missing";
    return std::nullopt;
  }
  bundle::Referrer r;
  try {
    r = bundle::parse_referrer_manifest(doc->bytes, "malformed manifest");
  } catch (const IntegrityError& e) {
    problem = e.what();
    return std::nullopt;
  }
  // defence: bundle-subject
  if (r.subject_digest != subject_digest) {
    problem = "its subject is " + r.subject_digest + ", another artifact";
    return std::nullopt;
  }
  auto layer =
      std::find_if(r.layers.begin(), r.layers.end(), [](const bundle::Blob& b) { return bundle::is_bundle_type(b.media_type); });
  if (layer == r.layers.end()) {
    problem = "it has no layer of media type " + std::string(bundle::kMediaType);
    return std::nullopt;
  }
  // defence: bundle-size
  if (layer->size > bundle::kMaxBundleBytes) {
    problem = "bundle of " + std::to_string(layer->size) + " bytes is larger than " + std::to_string(bundle::kMaxBundleBytes);
    return std::nullopt;
  }
  const std::string bytes = fetch_bundle_blob(s, *layer);
  try {
    return bundle::parse_bundle(bytes, "malformed bundle", problem);
  } catch (const IntegrityError& e) {
    problem = e.what();
    return std::nullopt;
  }
}

// Whether one of `envelope`'s signatures verifies over its PAE with `key`.
bool signs(const manifest::PublicKey& key, const bundle::Envelope& envelope) {
  const std::string message = bundle::pae(envelope.payload_type, envelope.payload);
  return std::any_of(envelope.signatures.begin(), envelope.signatures.end(),
                     [&](const std::string& sig) { return key.verify_detached(message, sig); });
}

bool is_bundle_entry(const referrers::Entry& e) { return bundle::is_bundle_type(e.artifact_type) && !e.digest.empty(); }

// The bundles of `subject_digest` that read as key-based envelopes (others, and any that fail to read, left out).
std::vector<ReadBundle> our_bundles(Session& s, const std::vector<referrers::Entry>& entries, const std::string& subject_digest) {
  std::vector<ReadBundle> out;
  for (const referrers::Entry& e : entries) {
    if (!is_bundle_entry(e)) continue;
    std::string problem;
    try {
      if (std::optional<bundle::Envelope> env = read_bundle(s, e, subject_digest, problem))
        out.push_back({e.digest, std::move(*env)});
    } catch (const IntegrityError&) {
    }
  }
  return out;
}

// Why the subject named `name` (or none) of a statement over `signed_digest` does not count for `reference`.
std::optional<std::string> bundle_identity(const std::optional<std::string>& name, const std::string& signed_digest,
                                           const oci::Reference& reference, cosign::IdentityRule rule) {
  if (name) return cosign::identity_mismatch(*name, signed_digest, reference, rule);
  // defence: bundle-identity-exact
  if (rule == cosign::IdentityRule::exact && !reference.tag.empty()) {
    return "its subject has no name (cosign's own form), not " + reference.registry + "/" + reference.repository + ":" +
           reference.tag + " (--cosign-identity repository accepts it)";
  }
  return std::nullopt;
}

// Why a statement signed by `by` does not count for `signed_digest` and `reference`; "" when it does.
std::string judge_statement(const std::string& payload, const std::string& by, const std::string& signed_digest,
                            const oci::Reference& reference, cosign::IdentityRule rule) {
  bundle::Statement st;
  try {
    st = bundle::parse_statement(payload, "statement");
  } catch (const IntegrityError& e) {
    return "key " + by + " signed a malformed " + e.what();
  }
  // defence: bundle-predicate-type
  if (st.predicate_type != bundle::kPredicateType) {
    return "key " + by + " signed predicate type '" + escaped(st.predicate_type, 120) + "', not a cosign signature";
  }
  const std::string hex = signed_digest.substr(7);
  auto match =
      std::find_if(st.subjects.begin(), st.subjects.end(), [&](const bundle::Subject& x) { return x.sha256_hex == hex; });
  // defence: bundle-digest
  if (match == st.subjects.end()) {
    return "key " + by + " signed sha256:" + escaped(st.subjects.front().sha256_hex, 80) + ", another artifact";
  }
  const bundle::Subject& subject = match == st.subjects.end() ? st.subjects.front() : *match;
  std::optional<std::string> why = bundle_identity(subject.name, signed_digest, reference, rule);
  if (why) return "key " + by + " signed this digest for another reference: " + *why;
  return {};
}

// The key id that the bundle referrer `entry` is a valid signature by; else "" and why not, in `problem`.
std::string judge_bundle(Session& s, const referrers::Entry& entry, const std::string& signed_digest,
                         const oci::Reference& reference, const manifest::TrustStore& trust, cosign::IdentityRule rule,
                         std::string& problem) {
  std::optional<bundle::Envelope> env = read_bundle(s, entry, signed_digest, problem);
  if (!env) return {};
  const manifest::PublicKey* by = nullptr;
  for (const manifest::PublicKey* key : trust.keys()) {
    // defence: bundle-key
    if (signs(*key, *env)) {
      by = key;
      break;
    }
  }
  if (by == nullptr) {
    problem = "signed by no trusted key";
    return {};
  }
  problem = judge_statement(env->payload, by->key_id(), signed_digest, reference, rule);
  return problem.empty() ? by->key_id() : std::string();
}

}  // namespace

std::optional<CosignFormat> parse_cosign_format(std::string_view text) {
  if (text == "legacy") return CosignFormat::legacy;
  if (text == "bundle") return CosignFormat::bundle;
  if (text == "both") return CosignFormat::both;
  return std::nullopt;
}

BundleAttach attach_cosign_bundles(Session& s, const bundle::Blob& subject, const std::string& docker_reference,
                                   const std::vector<const manifest::PrivateKey*>& keys) {
  BundleAttach r;
  const std::string statement = bundle::statement_json(docker_reference, subject.digest);
  referrers::Found found;
  try {
    found = referrers::find(s, subject.digest);
  } catch (const IntegrityError& e) {
    throw Error(std::string("cannot add a bundle referrer: ") + e.what());  // the push fails, exit 1, the tags unmoved
  }
  r.index = found.source;
  const std::vector<ReadBundle> existing = our_bundles(s, found.entries, subject.digest);
  bool config_there = false;
  for (const manifest::PrivateKey* key : keys) {
    r.key_ids.push_back(key->key_id());
    ++r.bundles;
    const manifest::PublicKey pub = key->public_key();
    if (std::any_of(existing.begin(), existing.end(),
                    [&](const ReadBundle& b) { return b.envelope.payload == statement && signs(pub, b.envelope); })) {
      continue;
    }
    const std::string signature = key->sign_detached(bundle::pae(bundle::kPayloadType, statement));
    const std::string blob = bundle::bundle_json(statement, signature, bundle::key_hint(pub));
    const bundle::Blob layer{std::string(bundle::kMediaType), oci::digest_of(blob), blob.size()};
    if (!s.blob_exists(layer.digest)) s.upload_blob(layer.digest, blob);
    if (!config_there && !s.blob_exists(std::string(oci::kEmptyConfigDigest))) {
      s.upload_blob(std::string(oci::kEmptyConfigDigest), std::string(oci::kEmptyConfigData));
    }
    config_there = true;
    const std::string manifest = bundle::referrer_manifest_json(subject, layer);
    const std::string digest = oci::digest_of(manifest);
    bool indexed = false;
    (void)s.put_manifest(digest, manifest, oci::kImageManifestType, &indexed);
    if (indexed) {
      r.index = "the referrers API";
    } else {
      referrers::add_to_fallback(s, subject.digest, referrers::entry_of(digest, manifest.size(), bundle::kMediaType));
    }
    r.written.push_back(digest);
  }
  return r;
}

std::string check_cosign_bundles(Session& s, const std::string& signed_digest, const oci::Reference& reference,
                                 const manifest::TrustStore& trust, cosign::IdentityRule identity, const std::string& label,
                                 std::vector<std::string>& problems) {
  referrers::Found found;
  try {
    found = referrers::find(s, signed_digest);
  } catch (const IntegrityError& e) {
    problems.push_back(label + e.what());
    return {};
  }
  for (const referrers::Entry& entry : found.entries) {
    if (!is_bundle_entry(entry)) continue;  // an SBOM, an attestation of another kind: not ours to judge
    std::string problem;
    std::string by = judge_bundle(s, entry, signed_digest, reference, trust, identity, problem);
    if (!by.empty()) return by;
    std::string line = label;
    line += "bundle " + entry.digest + ": ";
    line += problem;
    problems.push_back(std::move(line));
  }
  return {};
}

}  // namespace ccpack::registry
