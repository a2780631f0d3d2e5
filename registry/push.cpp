// The push flow; the stages are listed in push.hpp.
#include "registry/push.hpp"

#include <algorithm>

#include "http/http.hpp"
#include "manifest/tar.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"

namespace ccpack::registry {
namespace {

// A document ready to be put: its bytes, media type, digest, and the tag that will name it.
struct Pending {
  std::string bytes;
  std::string_view media_type;
  std::string digest;
  std::string tag;
};

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
bool ensure_blob(Session& s, const std::string& digest, const http::FileRange& body) {
  if (s.blob_exists(digest)) return false;
  s.upload_blob(digest, body);
  return true;
}

void ensure_blob(Session& s, const std::string& digest, const std::string& body) {
  if (!s.blob_exists(digest)) s.upload_blob(digest, body);
}

Pending pending(std::string bytes, std::string_view media_type, const std::string& tag) {
  std::string digest = oci::digest_of(bytes);
  return {std::move(bytes), media_type, std::move(digest), tag};
}

// Step 1.
void upload_blobs(Session& s, const PushRequest& q, PushResult& r) {
  ensure_blob(s, std::string(oci::kEmptyConfigDigest), std::string(oci::kEmptyConfigData));
  http::FileRange file{q.fd, 0, q.size, {}, {}};
  r.layer_digest = body_digest(file, q.what);
  r.layer_uploaded = ensure_blob(s, r.layer_digest, file);
}

// The artifact manifest of the archive layer.
oci::ImageManifest artifact_manifest(const PushRequest& q, const PushResult& r) {
  oci::ImageManifest m;
  m.artifact_type = oci::kArtifactType;
  m.config = {std::string(oci::kEmptyConfigType), std::string(oci::kEmptyConfigDigest), oci::kEmptyConfigData.size(), {}, {}};
  m.layers.push_back(
      {std::string(oci::kLayerMediaType), r.layer_digest, q.size, {}, {{std::string(oci::kAnnotationTitle), q.file_name}}});
  m.annotations = q.annotations;
  return m;
}

// The tag's index with `entry` added, replacing an entry with the same selection (counted in the result).
Pending index_with(Session& s, const PushRequest& q, const oci::Descriptor& entry, PushResult& r) {
  const std::string& tag = s.reference().tag;
  oci::Index index;
  if (std::optional<registry::Document> doc = s.get_manifest(tag)) {
    if (doc->media_type == oci::kImageIndexType) {
      index = oci::parse_index(doc->bytes, "index " + s.reference().str());
    } else {
      r.warnings.push_back(s.reference().str() + " held a single manifest (" + http::escape_for_message(doc->media_type) +
                           "); it is replaced by an index");
    }
  }
  std::size_t before = index.manifests.size();
  std::erase_if(index.manifests, [&](const oci::Descriptor& d) {
    std::optional<oci::Selection> other = oci::selection_of_annotations(d.annotations);
    return d.digest == entry.digest || (other && *other == q.selection);
  });
  r.replaced_entries = before - index.manifests.size();
  index.manifests.push_back(entry);
  if (index.manifests.size() > oci::kMaxIndexEntries) throw Error("index " + s.reference().str() + " is full");
  return pending(oci::to_json(index), oci::kImageIndexType, tag);
}

// `--as-image`: the archive as the single file of an uncompressed tar layer, with a linux config; blobs uploaded.
Pending image_document(Session& s, const PushRequest& q) {
  http::FileRange layer{q.fd, 0, q.size, {}, {}};
  manifest::append_tar_header(layer.prefix, {q.file_name, manifest::EntryType::file, 0444, q.size, {}});
  layer.suffix.assign(manifest::tar_padding(q.size) + 2 * manifest::kTarBlock, '\0');
  std::string layer_digest = body_digest(layer, q.what);
  (void)ensure_blob(s, layer_digest, layer);
  std::string config = oci::image_config_json(q.selection.at("cpu.arch"), layer_digest);
  std::string config_digest = oci::digest_of(config);
  ensure_blob(s, config_digest, config);
  oci::ImageManifest m;
  m.config = {std::string(oci::kImageConfigType), config_digest, config.size(), {}, {}};
  m.layers.push_back({std::string(oci::kTarLayerType), layer_digest, layer.total(), {}, {}});
  m.annotations = q.annotations;
  return pending(oci::to_json(m), oci::kImageManifestType, q.image_tag);
}

// Step 2: every document put by its digest, none under a tag; returns those the tags will name (image first).
std::vector<Pending> put_documents(Session& s, const PushRequest& q, PushResult& r) {
  Pending manifest = pending(oci::to_json(artifact_manifest(q, r)), oci::kImageManifestType, s.reference().tag);
  r.manifest_digest = manifest.digest;
  std::vector<Pending> docs;
  if (!q.image_tag.empty()) docs.push_back(image_document(s, q));
  docs.push_back(manifest);
  if (q.index) {
    oci::Descriptor entry{std::string(oci::kImageManifestType), manifest.digest, manifest.bytes.size(), {}, q.annotations};
    docs.back().tag.clear();  // the manifest is named by the index, not by the tag
    docs.push_back(index_with(s, q, entry, r));
    r.index_digest = docs.back().digest;
  }
  if (!q.image_tag.empty()) r.image_digest = docs.front().digest;
  for (const Pending& d : docs) (void)s.put_manifest(d.digest, d.bytes, d.media_type);
  return docs;
}

// Step 3: each document signed for the reference that names it (the tag's, for a manifest under an index).
void sign(Session& s, const PushRequest& q, const std::vector<Pending>& docs, PushResult& r) {
  if (q.keys.empty()) return;
  const oci::Reference& ref = s.reference();
  for (const Pending& d : docs) {
    const std::string tag = d.tag.empty() ? ref.tag : d.tag;
    const std::string docker_reference = ref.registry + "/" + ref.repository + ":" + tag;
    SignedDocument signed_doc{d.digest, std::nullopt, std::nullopt};
    if (q.format != CosignFormat::bundle)
      signed_doc.attach = attach_cosign_signatures(s, d.digest, docker_reference, q.keys, q.creator);
    if (q.format != CosignFormat::legacy) {
      const bundle::Blob subject{std::string(d.media_type), d.digest, d.bytes.size()};
      signed_doc.bundle = attach_cosign_bundles(s, subject, docker_reference, q.keys);
    }
    r.signed_documents.push_back(std::move(signed_doc));
  }
}

// Step 4.
void move_tags(Session& s, const std::vector<Pending>& docs) {
  for (const Pending& d : docs) {
    if (!d.tag.empty()) (void)s.put_manifest(d.tag, d.bytes, d.media_type);
  }
}

}  // namespace

void push(Session& s, const PushRequest& q, PushResult& r) {
  upload_blobs(s, q, r);
  std::vector<Pending> docs = put_documents(s, q, r);
  // defence: push-sign-first
  sign(s, q, docs, r);
  move_tags(s, docs);
}

PushRequest archive_request(const unpack::Archive& archive, const std::filesystem::path& path) {
  PushRequest q;
  q.fd = archive.fd.get();
  q.size = archive.header.header_size + archive.header.payload_size;
  q.file_name = path.filename().string();
  q.what = quoted_path(path);
  q.annotations = oci::archive_annotations(archive.manifest.fingerprint, archive.manifest_digest(), archive.header.header_size,
                                           "", quoted_path(path) + " fingerprint");
  q.selection = oci::selection_of(archive.manifest.fingerprint);
  return q;
}

}  // namespace ccpack::registry
