// `ccpack push ARCHIVE REF [--index]`: publish an archive, unchanged, as the single layer of an OCI artifact
// (manifest/oci.hpp describes the documents), with the selection fields of its *signed* fingerprint as
// annotations. With --index the manifest is added to the OCI image index under the tag, replacing the entry
// for the same environment, so one reference serves a mixed fleet.
//
// Blobs are streamed from the file (the layer digest is computed first, in one read pass), and skipped when the
// registry already has them (HEAD). The index is written compact, without artifactType, so mirrors and
// `skopeo copy --all` keep its digest.
#include <sys/stat.h>

#include "manifest/oci.hpp"
#include "registry/session.hpp"
#include "tools/cli.hpp"
#include "tools/fleet.hpp"
#include "unpack/archive.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace ccpack::tools {
namespace fs = std::filesystem;
namespace oci = manifest::oci;

namespace {

struct PushOptions {
  CommonOptions common;
  RegistryOptions registry;
  fs::path archive;
  std::string reference;
  bool index = false;
};

std::string file_digest(const unpack::Archive& a, std::uint64_t size) {
  Sha256 h;
  std::string buf(1u << 20, '\0');
  for (std::uint64_t off = 0; off < size;) {
    std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), size - off));
    if (pread_full(a.fd.get(), buf.data(), want, static_cast<off_t>(off), quoted_path(a.path)) != want) {
      throw IntegrityError(quoted_path(a.path) + " changed while it was pushed");
    }
    h.update(buf.data(), want);
    off += want;
  }
  return oci::digest_string(h.finish());
}

// Adds `entry` to the index under the tag, replacing an entry with the same selection; returns how many it replaced.
std::size_t put_in_index(registry::Session& s, const std::string& tag, const oci::Descriptor& entry, const oci::Selection& sel,
                         const Reporter& out) {
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
  std::size_t replaced = before - index.manifests.size();
  index.manifests.push_back(entry);
  if (index.manifests.size() > oci::kMaxIndexEntries) throw Error("index " + s.reference().str() + " is full");
  s.put_manifest(tag, oci::to_json(index), oci::kImageIndexType);
  return replaced;
}

int run(const PushOptions& o) {
  Reporter out(o.common);
  oci::Reference ref = oci::parse_reference(o.reference);
  if (!ref.digest.empty()) throw UsageError("push needs a tag, not a digest: '" + o.reference + "'");
  unpack::Archive a = unpack::Archive::open(o.archive);
  std::uint64_t size = a.header.header_size + a.header.payload_size;
  oci::Selection sel = oci::selection_of_fingerprint(a.manifest.fingerprint_json, quoted_path(o.archive) + " fingerprint");
  std::string layer_digest = file_digest(a, size);

  registry::Session s(ref, session_options(o.registry, true));
  if (!s.blob_exists(std::string(oci::kEmptyConfigDigest))) {
    s.upload_blob(std::string(oci::kEmptyConfigDigest), std::string(oci::kEmptyConfigData));
  }
  bool present = s.blob_exists(layer_digest);
  if (!present) s.upload_blob(layer_digest, http::FileRange{a.fd.get(), 0, size});

  oci::ImageManifest m;
  m.artifact_type = oci::kArtifactType;
  m.config = {std::string(oci::kEmptyConfigType), std::string(oci::kEmptyConfigDigest), oci::kEmptyConfigData.size(), {}, {}};
  m.layers.push_back({std::string(oci::kLayerMediaType), layer_digest, size, {},
                      {{std::string(oci::kAnnotationTitle), o.archive.filename().string()}}});
  m.annotations = oci::archive_annotations(sel, a.manifest_digest, a.header.header_size, "");
  std::string body = oci::to_json(m);
  std::string manifest_digest = oci::digest_of(body);
  std::size_t replaced = 0;
  if (o.index) {
    s.put_manifest(manifest_digest, body, oci::kImageManifestType);
    oci::Descriptor entry{std::string(oci::kImageManifestType), manifest_digest, body.size(), {}, m.annotations};
    replaced = put_in_index(s, ref.tag, entry, sel, out);
  } else {
    s.put_manifest(ref.tag, body, oci::kImageManifestType);
  }
  out.report({{"archive", o.archive.string()},
              {"reference", ref.str()},
              {"manifest_digest", manifest_digest},
              {"layer_digest", layer_digest},
              {"layer_bytes", size},
              {"layer_uploaded", !present},
              {"index", o.index},
              {"replaced_entries", replaced},
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
  add_registry_options(p, o->registry, false);
  add_common(p, o->common);
  commands.push_back({p, &o->common, [o] { return run(*o); }});
}

}  // namespace ccpack::tools
