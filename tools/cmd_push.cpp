// `ccpack push ARCHIVE REF [--index]`: publish an archive, unchanged, as the single layer of an OCI artifact
// (registry/oci.hpp describes the documents), with the selection fields of its *signed* fingerprint as
// annotations. With --index the manifest is added to the OCI image index under the tag, replacing the entry
// for the same environment, so one reference serves a mixed fleet.
//
// Blobs are streamed from the file (the layer digest is computed first, in one read pass), and skipped when the
// registry already has them (HEAD). --as-image also publishes a plain one-layer image (uncompressed tar holding
// the .ccpack file, a linux config for the archive's CPU) under <tag>-image, for kubelet and image volumes. The index is written compact, without artifactType, so mirrors and
// `skopeo copy --all` keep its digest.
//
// With a signing key (--sign-key or $CCPACK_SIGNING_KEY, the Ed25519 key that signs manifests) and/or --cosign-key
// (ECDSA P-256 or Ed25519), the pushed manifest, and the index with --index, also get a cosign signature under
// sha256-<hex>.sig (registry/cosign_signatures.hpp), which skopeo, podman, CRI-O, cosign and admission policies
// verify with the public key.
//
// An unsigned archive is refused (exit 4) before anything is sent: every pod that restores it would refuse it,
// so the mistake is caught in the pipeline, not in production. --allow-unsigned (or CCPACK_ALLOW_UNSIGNED=1)
// pushes it anyway, with a warning on every use.
#include <sys/stat.h>

#include "registry/delta_tags.hpp"
#include "registry/oci.hpp"
#include "manifest/tar.hpp"
#include "registry/cosign_signatures.hpp"
#include "registry/session.hpp"
#include "tools/cli.hpp"
#include "tools/registry_options.hpp"
#include "tools/trust_options.hpp"
#include "unpack/archive.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/version.hpp"

namespace ccpack::tools {
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
  bool delta = false;  // a delta, under <tag>.delta-<12 hex> (registry/delta_tags.hpp)
  std::string image_tag;  // default: <tag>-image
  TrustOptions trust;     // only allow_unsigned: push checks that a signature is there, not whom it is from
  SigningOptions signing;       // --sign-key: the cosign signature by the manifest's key
  std::filesystem::path cosign_key;  // --cosign-key: an ECDSA P-256 (or Ed25519) key for a cosign signature
};

// The keys of the cosign signatures: the signing key (flag, else $CCPACK_SIGNING_KEY) and --cosign-key.
std::vector<manifest::PrivateKey> cosign_keys(const PushOptions& o) {
  std::vector<manifest::PrivateKey> keys;
  if (std::optional<manifest::PrivateKey> k = load_signing_key(o.signing, false)) keys.push_back(std::move(*k));
  if (!o.cosign_key.empty()) keys.push_back(manifest::PrivateKey::load(o.cosign_key, manifest::KeyUse::cosign));
  return keys;
}

// Signs each pushed document (the manifest, and the index with --index) for `ref`; null without keys.
ojson sign_pushed(registry::Session& s, const oci::Reference& ref, const std::vector<std::string>& digests,
                  const std::vector<manifest::PrivateKey>& keys, const Reporter& out) {
  if (keys.empty()) return nullptr;
  std::vector<const manifest::PrivateKey*> signers;
  signers.reserve(keys.size());
  for (const manifest::PrivateKey& k : keys) signers.push_back(&k);
  ojson list = ojson::array();
  for (const std::string& digest : digests) {
    registry::CosignAttach a = registry::attach_cosign_signatures(s, digest, ref.str(), signers, std::string("ccpack ") + kVersion);
    out.say("cosign signature of " + digest + " under " + ref.registry + "/" + ref.repository + ":" + a.tag + " (" +
            std::to_string(a.layers) + " signature" + (a.layers == 1 ? "" : "s") + ")");
    list.push_back({{"digest", digest}, {"tag", a.tag}, {"key_ids", a.key_ids}, {"layers", a.layers}});
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

std::string body_digest(const http::FileRange& body, const std::string& name) {
  Sha256 h;
  h.update(body.prefix);
  std::string buf(1u << 20, '\0');
  for (std::uint64_t off = 0; off < body.size;) {
    std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), body.size - off));
    if (pread_full(body.fd, buf.data(), want, static_cast<off_t>(body.offset + off), name) != want) {
      throw IntegrityError(name + " changed while it was pushed");
    }
    h.update(buf.data(), want);
    off += want;
  }
  h.update(body.suffix);
  return oci::digest_string(h.finish());
}

// Uploads a blob unless the registry has it; returns whether it was uploaded.
bool ensure_blob(registry::Session& s, const std::string& digest, const http::FileRange& body) {
  if (s.blob_exists(digest)) return false;
  s.upload_blob(digest, body);
  return true;
}

// `--as-image`: the archive as the single file of an uncompressed tar layer, under `tag`; returns its digest.
std::string push_image(registry::Session& s, const unpack::Archive& a, std::uint64_t size, const oci::Annotations& annotations,
                       const oci::Selection& sel, const std::string& tag) {
  http::FileRange layer{a.fd.get(), 0, size, {}, {}};
  manifest::append_tar_header(layer.prefix, {a.path.filename().string(), manifest::EntryType::file, 0444, size, {}});
  layer.suffix.assign(manifest::tar_padding(size) + 2 * manifest::kTarBlock, '\0');
  std::string layer_digest = body_digest(layer, quoted_path(a.path));
  (void)ensure_blob(s, layer_digest, layer);
  std::string config = oci::image_config_json(sel.at("cpu.arch"), layer_digest);
  std::string config_digest = oci::digest_of(config);
  if (!s.blob_exists(config_digest)) s.upload_blob(config_digest, config);
  oci::ImageManifest m;
  m.config = {std::string(oci::kImageConfigType), config_digest, config.size(), {}, {}};
  m.layers.push_back({std::string(oci::kTarLayerType), layer_digest, layer.total(), {}, {}});
  m.annotations = annotations;
  return s.put_manifest(tag, oci::to_json(m), oci::kImageManifestType);
}

// Adds `entry` to the index under the tag, replacing an entry with the same selection (counted in `replaced`);
// returns the index's digest.
std::string put_in_index(registry::Session& s, const std::string& tag, const oci::Descriptor& entry, const oci::Selection& sel,
                         const Reporter& out, std::size_t& replaced) {
  oci::Index index;
  if (std::optional<registry::Document> doc = s.get_manifest(tag)) {
    if (doc->media_type == oci::kImageIndexType) {
      index = oci::parse_index(doc->bytes, "index " + s.reference().str());
    } else {
      out.warn(s.reference().str() + " held a single manifest (" + http::escape_for_message(doc->media_type) +
               "); it is replaced by an index");
    }
  }
  std::size_t before = index.manifests.size();
  std::erase_if(index.manifests, [&](const oci::Descriptor& d) {
    std::optional<oci::Selection> other = oci::selection_of_annotations(d.annotations);
    return d.digest == entry.digest || (other && *other == sel);
  });
  replaced = before - index.manifests.size();
  index.manifests.push_back(entry);
  if (index.manifests.size() > oci::kMaxIndexEntries) throw Error("index " + s.reference().str() + " is full");
  return s.put_manifest(tag, oci::to_json(index), oci::kImageIndexType);
}

// --delta: the archive must be a delta; it goes under its delta tag next to the base's TAG, signed or not (a merge
// judges every delta as untrusted input). Returns the reference it is pushed to.
oci::Reference delta_reference(const PushOptions& o, const unpack::Archive& a, oci::Reference ref) {
  if (o.index || o.as_image) throw UsageError("--delta pushes one delta under its own tag: not with --index or --as-image");
  if (!a.manifest.delta) {
    throw UsageError(quoted_path(o.archive) + " is not a delta (made by `create --since-restore`); push a whole archive without --delta");
  }
  ref.tag = registry::delta_tag(ref.tag, to_hex(a.manifest_digest()));
  return ref;
}

int run(const PushOptions& o) {
  Reporter out(o.common);
  oci::Reference ref = oci::parse_reference(o.reference);
  if (!ref.digest.empty()) throw UsageError("push needs a tag, not a digest: '" + o.reference + "'");
  unpack::Archive a = unpack::Archive::open(o.archive);
  if (o.delta) ref = delta_reference(o, a, ref);
  std::string image_tag = o.image_tag.empty() ? ref.tag + "-image" : o.image_tag;
  (void)oci::parse_reference(ref.registry + "/" + ref.repository + ":" + image_tag);  // a valid tag, or exit 2
  if (!o.delta) require_signed(a, o, out);
  const std::vector<manifest::PrivateKey> keys = cosign_keys(o);  // before anything is sent: a bad key is exit 1 here
  std::uint64_t size = a.header.header_size + a.header.payload_size;
  oci::Selection sel = oci::selection_of(a.manifest.fingerprint);
  oci::Annotations annotations = oci::archive_annotations(a.manifest.fingerprint, a.manifest_digest(), a.header.header_size, "",
                                                          quoted_path(o.archive) + " fingerprint");
  http::FileRange file{a.fd.get(), 0, size, {}, {}};
  std::string layer_digest = body_digest(file, quoted_path(o.archive));

  registry::Session s(ref, session_options(o.registry, true, ref));
  if (!s.blob_exists(std::string(oci::kEmptyConfigDigest))) {
    s.upload_blob(std::string(oci::kEmptyConfigDigest), std::string(oci::kEmptyConfigData));
  }
  bool present = !ensure_blob(s, layer_digest, file);

  oci::ImageManifest m;
  m.artifact_type = oci::kArtifactType;
  m.config = {std::string(oci::kEmptyConfigType), std::string(oci::kEmptyConfigDigest), oci::kEmptyConfigData.size(), {}, {}};
  m.layers.push_back({std::string(oci::kLayerMediaType), layer_digest, size, {},
                      {{std::string(oci::kAnnotationTitle), o.archive.filename().string()}}});
  m.annotations = annotations;
  std::string body = oci::to_json(m);
  std::string manifest_digest = oci::digest_of(body);
  std::size_t replaced = 0;
  std::vector<std::string> signed_digests{manifest_digest};
  if (o.index) {
    s.put_manifest(manifest_digest, body, oci::kImageManifestType);
    oci::Descriptor entry{std::string(oci::kImageManifestType), manifest_digest, body.size(), {}, m.annotations};
    signed_digests.push_back(put_in_index(s, ref.tag, entry, sel, out, replaced));
  } else {
    s.put_manifest(ref.tag, body, oci::kImageManifestType);
  }
  ojson cosign = sign_pushed(s, ref, signed_digests, keys, out);
  std::string image_digest = o.as_image ? push_image(s, a, size, m.annotations, sel, image_tag) : "";
  if (o.as_image) out.say("pushed image " + ref.registry + "/" + ref.repository + ":" + image_tag + " (" + image_digest + ")");
  out.report({{"archive", o.archive.string()},
              {"image", o.as_image ? ojson(ref.registry + "/" + ref.repository + ":" + image_tag) : ojson(nullptr)},
              {"image_digest", image_digest},
              {"reference", ref.str()},
              {"manifest_digest", manifest_digest},
              {"layer_digest", layer_digest},
              {"layer_bytes", size},
              {"layer_uploaded", !present},
              {"index", o.index},
              {"delta", o.delta},
              {"replaced_entries", replaced},
              {"cosign", cosign},
              {"selection", sel}});
  out.say("pushed " + quoted_path(o.archive) + " to " + ref.str() + (o.index ? " (index entry for " + oci::describe(sel) + ")" : "") +
          ": manifest " + manifest_digest + ", layer " + mb(size) + (present ? " already present" : " uploaded"));
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
  add_registry_options(p, o->registry, false);
  add_common(p, o->common);
  p->footer(
      "Signatures for skopeo, podman, CRI-O, cosign and admission policies go under the tag sha256-<hex>.sig of each "
      "pushed document (docs/SIGNING.md, \"cosign signatures\").");
  commands.push_back({p, &o->common, [o] { return run(*o); }});
}

}  // namespace ccpack::tools
