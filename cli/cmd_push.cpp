// `ccpack push ARCHIVE REF [--index]`: publish an archive, unchanged, as the single layer of an OCI artifact with
// the selection fields of its *signed* fingerprint as annotations (registry/oci.hpp). --index adds it to the tag's
// image index, replacing the entry of the same environment; --as-image also publishes a one-layer image under
// <tag>-image for kubelet and image volumes. With --sign-key (or $CCPACK_SIGNING_KEY) and/or --cosign-key (ECDSA
// P-256 or Ed25519) every pushed document gets a cosign signature (the sha256-<hex>.sig tag and/or a sigstore
// bundle referrer, cosign 3's form; --cosign-format) before any tag moves. The flow is registry/push.hpp's; this
// file parses, checks the archive and prints. An unsigned archive is refused (exit 4) before anything is sent, since
// every pod would refuse it; --allow-unsigned (or CCPACK_ALLOW_UNSIGNED=1) pushes it anyway, warning on every use.
#include <sys/stat.h>

#include "cli/cli.hpp"
#include "cli/registry_options.hpp"
#include "cli/trust_options.hpp"
#include "registry/delta_tags.hpp"
#include "registry/oci.hpp"
#include "registry/push.hpp"
#include "registry/session.hpp"
#include "unpack/archive.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"
#include "util/fs.hpp"
#include "util/version.hpp"

namespace ccpack::cli {
namespace fs = std::filesystem;
namespace oci = registry::oci;

namespace {

struct PushOptions {
  CommonOptions common;
  RegistryOptions registry;
  fs::path archive;
  std::string reference;
  bool index = false;
  bool as_image = false;
  bool delta = false;                // a delta, under <tag>.delta-<12 hex> (registry/delta_tags.hpp)
  std::string image_tag;             // default: <tag>-image
  TrustOptions trust;                // only allow_unsigned: push checks that a signature is there, not whom it is from
  SigningOptions signing;            // --sign-key: the cosign signature by the manifest's key
  std::filesystem::path cosign_key;  // --cosign-key: an ECDSA P-256 (or Ed25519) key for a cosign signature
  std::string cosign_format = registry::kCosignFormatDefault;  // --cosign-format: legacy, bundle or both
};

// The keys of the cosign signatures: the signing key (flag, else $CCPACK_SIGNING_KEY) and --cosign-key.
std::vector<manifest::PrivateKey> cosign_keys(const PushOptions& o) {
  std::vector<manifest::PrivateKey> keys;
  if (std::optional<manifest::PrivateKey> k = load_signing_key(o.signing, false)) keys.push_back(std::move(*k));
  if (!o.cosign_key.empty()) keys.push_back(manifest::PrivateKey::load(o.cosign_key, manifest::KeyUse::cosign));
  return keys;
}

// The cosign part of the --json report, one entry per signed document; null without keys.
ojson cosign_report(const registry::PushResult& r, bool signing) {
  if (!signing) return nullptr;
  ojson list = ojson::array();
  for (const registry::SignedDocument& d : r.signed_documents) {
    ojson entry{{"digest", d.digest}, {"tag", nullptr}, {"key_ids", d.attach ? d.attach->key_ids : d.bundle->key_ids}};
    if (d.attach) {
      entry["tag"] = d.attach->tag;
      entry["layers"] = d.attach->layers;
      entry["added"] = d.attach->added;
    }
    entry["bundle"] = d.bundle
                          ? ojson{{"referrers", d.bundle->written}, {"bundles", d.bundle->bundles}, {"index", d.bundle->index}}
                          : ojson(nullptr);
    list.push_back(std::move(entry));
  }
  return list;
}

// Refuses an archive without any signature, unless the opt-out says to push it anyway (loudly).
void require_signed(const unpack::Archive& a, const PushOptions& o, const Reporter& out) {
  // defence: push-unsigned
  if (!a.signatures.empty()) return;
  std::string what = quoted_path(o.archive);
  if (allow_unsigned(o.trust)) {
    out.alarm("--allow-unsigned: pushing " + what + " with no signature; pods refuse it unless they pass --allow-unsigned too");
    return;
  }
  throw IntegrityError(what + " is unsigned and every pod would refuse it; sign it first (`ccpack sign " + what +
                       " --sign-key KEY`, or `ccpack create --sign-key KEY`), or pass --allow-unsigned to push it anyway");
}

// --delta: the archive must be a delta; it goes under its delta tag next to the base's TAG, signed or not (a merge
// judges every delta as untrusted input). Returns the reference it is pushed to.
oci::Reference delta_reference(const PushOptions& o, const unpack::Archive& a, oci::Reference ref) {
  if (o.index || o.as_image) throw UsageError("--delta pushes one delta under its own tag: not with --index or --as-image");
  if (!a.manifest.delta) {
    throw UsageError(quoted_path(o.archive) +
                     " is not a delta (made by `create --since-restore`); push a whole archive without --delta");
  }
  ref.tag = registry::delta_tag(ref.tag, to_hex(a.manifest_digest()));
  return ref;
}

// The flow's request: the archive's (registry::archive_request), the tags, the keys.
registry::PushRequest push_request(const PushOptions& o, const unpack::Archive& a, const oci::Reference& ref,
                                   const std::vector<manifest::PrivateKey>& keys) {
  registry::PushRequest q = registry::archive_request(a, o.archive);
  q.index = o.index;
  if (o.as_image) q.image_tag = o.image_tag.empty() ? ref.tag + "-image" : o.image_tag;
  for (const manifest::PrivateKey& k : keys) q.keys.push_back(&k);
  q.format = *registry::parse_cosign_format(o.cosign_format);
  q.creator = std::string("ccpack ") + kVersion;
  return q;
}

void print(const PushOptions& o, const oci::Reference& ref, const registry::PushRequest& q, const registry::PushResult& r,
           const Reporter& out) {
  for (const std::string& w : r.warnings) out.warn(w);
  const std::string repo = ref.registry + "/" + ref.repository;
  for (const registry::SignedDocument& d : r.signed_documents) {
    if (const std::optional<registry::CosignAttach>& a = d.attach) {
      out.say("cosign signature of " + d.digest + " under " + repo + ":" + a->tag + " (" + std::to_string(a->layers) +
              " signature" + (a->layers == 1 ? "" : "s") + (a->added == 0 ? ", already signed" : "") + ")");
    }
    if (const std::optional<registry::BundleAttach>& b = d.bundle) {
      out.say("cosign bundle of " + d.digest + " in " + repo + ", listed by " + b->index + " (" + std::to_string(b->bundles) +
              " key" + (b->bundles == 1 ? "" : "s") +
              (b->written.empty() ? ", already signed" : ", " + std::to_string(b->written.size()) + " written") + ")");
    }
  }
  if (o.as_image) out.say("pushed image " + repo + ":" + q.image_tag + " (" + r.image_digest + ")");
  out.report({{"archive", o.archive.string()},
              {"image", o.as_image ? ojson(repo + ":" + q.image_tag) : ojson(nullptr)},
              {"image_digest", r.image_digest},
              {"reference", ref.str()},
              {"manifest_digest", r.manifest_digest},
              {"layer_digest", r.layer_digest},
              {"layer_bytes", q.size},
              {"layer_uploaded", r.layer_uploaded},
              {"index", o.index},
              {"delta", o.delta},
              {"replaced_entries", r.replaced_entries},
              {"cosign", cosign_report(r, !q.keys.empty())},
              {"selection", q.selection}});
  out.say("pushed " + quoted_path(o.archive) + " to " + ref.str() +
          (o.index ? " (index entry for " + oci::describe(q.selection) + ")" : "") + ": manifest " + r.manifest_digest +
          ", layer " + mb(q.size) + (r.layer_uploaded ? " uploaded" : " already present"));
}

int run(const PushOptions& o) {
  Reporter out(o.common);
  oci::Reference ref = oci::parse_reference(o.reference);
  if (!ref.digest.empty()) throw UsageError("push needs a tag, not a digest: '" + o.reference + "'");
  unpack::Archive a = unpack::Archive::open(o.archive);
  if (o.delta) ref = delta_reference(o, a, ref);
  std::string image_tag = o.image_tag.empty() ? ref.tag + "-image" : o.image_tag;
  (void)oci::parse_reference(ref.registry + "/" + ref.repository + ":" + image_tag);  // a valid tag, or exit 2
  if (!registry::parse_cosign_format(o.cosign_format)) {
    throw UsageError("--cosign-format is '" + escaped(o.cosign_format, 40) + "': expected legacy, bundle or both");
  }
  if (!o.delta) require_signed(a, o, out);
  const std::vector<manifest::PrivateKey> keys = cosign_keys(o);  // before anything is sent: a bad key is exit 1 here
  const registry::PushRequest q = push_request(o, a, ref, keys);
  registry::Session s(ref, session_options(o.registry, true, ref));
  registry::PushResult r;
  registry::push(s, q, r);
  print(o, ref, q, r, out);
  return 0;
}

}  // namespace

void add_push(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<PushOptions>();
  CLI::App* p = app.add_subcommand("push", "Publish an archive to an OCI registry (one layer, selection annotations)");
  p->add_option("archive", o->archive, "The .ccpack archive")->required();
  p->add_option("reference", o->reference, "Where to push: [oci://]host[:port]/repository[:tag]")->required();
  p->add_flag("--index", o->index,
              "Add the archive to the image index under the tag (one entry per environment) instead of replacing the tag");
  p->add_flag("--as-image", o->as_image,
              "Also publish the archive as a one-layer image (the .ccpack file in an uncompressed tar) for kubelet and "
              "image volumes");
  p->add_option("--image-tag", o->image_tag, "Tag of the --as-image image (default: <tag>-image)");
  p->add_flag("--delta", o->delta,
              "Push a delta (create --since-restore) next to its base: under TAG.delta-<12 hex of its manifest digest>, "
              "where `merge oci://...:TAG --deltas-from-registry` finds it; signed or not");
  p->add_flag("--allow-unsigned", o->trust.allow_unsigned,
              "Push an archive that has no signature (also $CCPACK_ALLOW_UNSIGNED=1); pods refuse it unless they allow "
              "unsigned archives too");
  p->add_option("--sign-key", o->signing.key_file,
                "Also write a cosign signature of the pushed manifest (and index) with this Ed25519 key, the one that "
                "signs archives (default: $CCPACK_SIGNING_KEY when set)");
  p->add_option("--cosign-key", o->cosign_key,
                "Also write a cosign signature with this private key: ECDSA P-256 (cosign's default key type; PEM PKCS#8 "
                "or SEC1, unencrypted) or Ed25519");
  p->add_option("--cosign-format", o->cosign_format,
                "Which cosign signature forms to write: legacy (the sha256-<hex>.sig tag, cosign 2, skopeo), bundle (a "
                "sigstore bundle as an OCI referrer, cosign 3's default) or both")
      ->default_str(registry::kCosignFormatDefault);
  add_registry_options(p, o->registry, false);
  add_common(p, o->common);
  p->footer(
      "Signatures for skopeo, podman, CRI-O, cosign and admission policies go under the tag sha256-<hex>.sig of each "
      "pushed document and, for cosign 3, as sigstore bundle referrers of it (docs/SIGNING.md, \"cosign signatures\").");
  commands.push_back({p, &o->common, [o] { return run(*o); }});
}

}  // namespace ccpack::cli
