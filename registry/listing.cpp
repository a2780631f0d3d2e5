// The documents of a tag, listed; see listing.hpp.
#include "registry/listing.hpp"

#include "http/http.hpp"
#include "util/error.hpp"

namespace ccpack::registry {

namespace {

std::string annotation(const oci::Annotations& a, std::string_view name) {
  auto it = a.find(std::string(name));
  return it == a.end() ? std::string() : it->second;
}

// What an image manifest holds: the archive layer of a ccpack artifact, or of `push --as-image`'s image.
void describe_manifest(const oci::ImageManifest& m, ListedArchive& out) {
  out.title = annotation(m.annotations, oci::kAnnotationTitle);
  if (!out.selection) out.selection = oci::selection_of_annotations(m.annotations);
  if (m.layers.size() != 1) return;
  const oci::Descriptor& layer = m.layers[0];
  out.media_type = layer.media_type;
  bool artifact = m.artifact_type == oci::kArtifactType && layer.media_type == oci::kLayerMediaType;
  bool image = m.config.media_type == oci::kImageConfigType && layer.media_type == oci::kTarLayerType && out.selection;
  if (!artifact && !image) return;
  out.ccpack = true;
  out.layer_digest = layer.digest;
  out.layer_size = layer.size;
  if (out.title.empty()) out.title = annotation(layer.annotations, oci::kAnnotationTitle);
}

}  // namespace

Listing list_archives(Session& s) {
  const oci::Reference& ref = s.reference();
  std::optional<Document> doc = s.get_manifest(ref.manifest_reference());
  if (!doc) throw Error(ref.str() + " not found in the registry");
  Listing out;
  out.digest = doc->digest;
  if (doc->media_type == oci::kImageManifestType) {
    ListedArchive a;
    a.manifest_digest = doc->digest;
    a.manifest_size = doc->bytes.size();
    describe_manifest(oci::parse_image_manifest(doc->bytes, "manifest " + ref.str()), a);
    out.archives.push_back(std::move(a));
    return out;
  }
  if (doc->media_type != oci::kImageIndexType) {
    throw Error(ref.str() + " is not a ccpack artifact (media type '" + http::escape_for_message(doc->media_type) + "')");
  }
  out.index = true;
  oci::Index index = oci::parse_index(doc->bytes, "index " + ref.str());
  for (const oci::Descriptor& d : index.manifests) {
    ListedArchive a;
    a.manifest_digest = d.digest;
    a.manifest_size = d.size;
    a.media_type = d.media_type;
    a.selection = oci::selection_of_annotations(d.annotations);
    if (d.media_type == oci::kImageManifestType) {
      std::optional<Document> m = s.get_manifest(d.digest);
      if (!m) throw Error(ref.str() + ": manifest " + d.digest + " named by the index is missing");
      if (m->bytes.size() != d.size) throw IntegrityError(ref.str() + ": manifest " + d.digest + " size differs from the index");
      describe_manifest(oci::parse_image_manifest(m->bytes, "manifest " + d.digest + " of " + ref.str()), a);
    }
    out.archives.push_back(std::move(a));
  }
  return out;
}

}  // namespace ccpack::registry
