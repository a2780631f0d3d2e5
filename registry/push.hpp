// `push`'s flow: one local archive, unchanged, into a registry tag, every signature asked for in place before any
// tag moves, so no tag ever names an artifact without them (a failure leaves the tags as they were).
//
//   1. upload_blobs: the empty config and the archive layer (its digest from one read pass; skipped when present);
//   2. put_documents: the manifest by its digest, and with `index` the tag's index with the entry added (the entry of
//      the same selection replaced) by its digest; with `image_tag`, the one-layer image's blobs and manifest too;
//   3. sign: a cosign signature of each document by each key, for the reference that will name it (REG/REPO:TAG,
//      REG/REPO:IMAGE_TAG), in the forms asked for: the `.sig` tag (cosign_signatures.hpp) and the sigstore bundle
//      referrer (cosign_bundles.hpp); a key that signed the same payload already adds nothing;
//   4. move_tags: the image tag, then the tag (the manifest, or the index).
// The documents' bytes are those of oci.hpp; the front end (cli/cmd_push.cpp) only parses, checks the archive's
// own signature and prints.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "manifest/keys.hpp"
#include "registry/cosign_bundles.hpp"
#include "registry/cosign_signatures.hpp"
#include "registry/oci.hpp"
#include "registry/session.hpp"
#include "unpack/archive.hpp"

namespace ccpack::registry {

struct PushRequest {
  int fd = -1;  // the archive, bytes [0, size)
  std::uint64_t size = 0;
  std::string file_name;  // the layer's title, and the file's name in the image's tar
  std::string what;       // the archive, for messages
  oci::Annotations annotations;
  oci::Selection selection;
  bool index = false;                             // add to the tag's index instead of replacing the tag
  std::string image_tag;                          // also the one-layer image under this tag; "" for none
  std::vector<const manifest::PrivateKey*> keys;  // cosign signatures; none: unsigned
  CosignFormat format = CosignFormat::both;
  std::string creator;  // the payloads' optional.creator
};

// The request for an archive opened from `path`: its bytes, its layer's title, and the annotations and selection of
// its signed fingerprint; the caller adds the tags, the keys, the format and the creator.
[[nodiscard]] PushRequest archive_request(const unpack::Archive& archive, const std::filesystem::path& path);

struct SignedDocument {
  std::string digest;
  std::optional<CosignAttach> attach;  // the `.sig` form, when written
  std::optional<BundleAttach> bundle;  // the bundle referrers, when written
};

struct PushResult {
  std::string layer_digest;
  bool layer_uploaded = false;
  std::string manifest_digest;
  std::string index_digest;          // "" without `index`
  std::size_t replaced_entries = 0;  // index entries of the same selection replaced
  std::string image_digest;          // "" without `image_tag`
  std::vector<SignedDocument> signed_documents;
  std::vector<std::string> warnings;  // for the front end to print
};

// Steps 1-4 above, to session.reference()'s tag. Throws Error (network, a full index or signature manifest); the
// tags are then untouched.
void push(Session& session, const PushRequest& request, PushResult& result);

}  // namespace ccpack::registry
