// How a .ccpack archive lives in an OCI registry: media types, annotation names, image manifests and indexes,
// references, and which index entry fits a machine. A format as fixed as the archive's, but the registry's (only
// registry/ and cli/ use it, so it lives here, not in manifest/): push writes it, pull reads it, and other
// registry clients (skopeo, crane, oras) see exactly these documents.
//
//   tag --> image index (optional, `push --index`): one entry per environment, each carrying the selection
//           annotations below, no artifactType (a compact index keeps its digest through skopeo and mirrors)
//       --> image manifest: artifactType kArtifactType, the empty config, one layer = the .ccpack file unchanged
//           (media type kLayerMediaType), annotations = selection fields + manifest SHA-256 + header size
//
// Annotations only *select*; they are unsigned hints. The archive's signed manifest decides (pull re-checks its
// fingerprint after fetching the header frame). Everything parsed here comes from the network: documents are
// bounded in size (by the HTTP layer) and nesting depth, every field is type-checked, digests must be sha256
// (the only algorithm we can verify), and every rejection names the field.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "manifest/fingerprint.hpp"
#include "util/sha256.hpp"

namespace ccpack::registry::oci {

inline constexpr std::string_view kArtifactType = "application/vnd.ccpack.archive.v1";
// The layer is the archive file itself: a zstd stream (its header is a zstd skippable frame).
inline constexpr std::string_view kLayerMediaType = "application/vnd.ccpack.archive.v1+zstd";
inline constexpr std::string_view kImageManifestType = "application/vnd.oci.image.manifest.v1+json";
inline constexpr std::string_view kImageIndexType = "application/vnd.oci.image.index.v1+json";
inline constexpr std::string_view kEmptyConfigType = "application/vnd.oci.empty.v1+json";
// `push --as-image`: the archive as the one file of a plain image layer (an uncompressed tar), so kubelet can pull
// it like any image and an image volume shows the .ccpack file. The image config type is also the config of a
// cosign signature manifest (cosign.hpp).
inline constexpr std::string_view kImageConfigType = "application/vnd.oci.image.config.v1+json";
inline constexpr std::string_view kTarLayerType = "application/vnd.oci.image.layer.v1.tar";
inline constexpr std::string_view kEmptyConfigData = "{}";
inline constexpr std::string_view kEmptyConfigDigest = "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a";
// Accept header for every manifest GET/HEAD (distribution answers 404 to a request that lists no OCI type).
inline constexpr std::string_view kManifestAccept =
    "application/vnd.oci.image.index.v1+json, application/vnd.oci.image.manifest.v1+json, "
    "application/vnd.docker.distribution.manifest.list.v2+json, application/vnd.docker.distribution.manifest.v2+json";

inline constexpr std::string_view kAnnotationFieldPrefix = "org.ccpack.fp.";
inline constexpr std::string_view kAnnotationManifestSha256 = "org.ccpack.manifest.sha256";
inline constexpr std::string_view kAnnotationHeaderSize = "org.ccpack.header.size";
inline constexpr std::string_view kAnnotationTitle = "org.opencontainers.image.title";
// The fingerprint fields an archive is selected by (docs/FINGERPRINT.md names them), and the annotation value
// of a field the fingerprint does not have.
inline constexpr std::array<std::string_view, 8> kSelectionFields{"gpu.vendor", "gpu.arch",       "torch.version", "torch.cuda",
                                                                  "torch.hip",  "triton.version", "python.abi",    "cpu.arch"};
inline constexpr std::string_view kAbsent = "absent";

// Bounds on untrusted documents.
inline constexpr int kMaxJsonDepth = 16;
inline constexpr std::size_t kMaxIndexEntries = 1024;
inline constexpr std::size_t kMaxLayers = 128;
inline constexpr std::size_t kMaxAnnotations = 256;
inline constexpr std::size_t kMaxAnnotationBytes = 4096;

// A selection: each kSelectionFields name to its value ("absent" when the fingerprint lacks it).
using Selection = std::map<std::string, std::string>;
using Annotations = std::map<std::string, std::string>;

struct Descriptor {
  std::string media_type;
  std::string digest;  // "sha256:<64 hex>"
  std::uint64_t size = 0;
  std::string artifact_type;  // index entries may carry it; we never write it there
  Annotations annotations;
};

struct ImageManifest {
  std::string artifact_type;
  Descriptor config;
  std::vector<Descriptor> layers;
  Annotations annotations;
};

struct Index {
  std::vector<Descriptor> manifests;
  Annotations annotations;
};

// Compact JSON, keys in a fixed order, so the same content gives the same digest.
[[nodiscard]] std::string to_json(const ImageManifest& m);
[[nodiscard]] std::string to_json(const Index& index);

// The image config of a one-layer image whose uncompressed layer has digest `diff_id`; the platform is linux and
// the OCI name of `cpu_arch` (x86_64 -> amd64, aarch64 -> arm64; "absent" -> amd64).
[[nodiscard]] std::string image_config_json(std::string_view cpu_arch, std::string_view diff_id);

// Parse untrusted documents; throw IntegrityError naming the field. `what` names the document in messages.
[[nodiscard]] ImageManifest parse_image_manifest(std::string_view json, std::string_view what);
[[nodiscard]] Index parse_index(std::string_view json, std::string_view what);
// The document's own "mediaType" when present, else `content_type` (the HTTP Content-Type); "" if neither.
[[nodiscard]] std::string media_type_of(std::string_view json, std::string_view content_type);

// Whether `tag` is a tag as the distribution spec writes them: [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}.
[[nodiscard]] bool is_valid_tag(std::string_view tag);

// "sha256:<hex>" of a digest and of bytes; the reverse (nullopt unless "sha256:" + 64 lower-case hex digits).
[[nodiscard]] std::string digest_string(const Digest& d);
[[nodiscard]] std::string digest_of(std::string_view bytes);
[[nodiscard]] std::optional<Digest> parse_digest(std::string_view text);

// The selection values of a fingerprint: each kSelectionFields name to its value, "absent" when the fingerprint
// lacks it or records it as absent (a fingerprint that records nothing selects as all-absent).
[[nodiscard]] Selection selection_of(const manifest::Fingerprint& fingerprint);
// The selection carried by annotations; nullopt when an entry carries none of them (not a ccpack archive).
[[nodiscard]] std::optional<Selection> selection_of_annotations(const Annotations& annotations);
// The annotations push writes on a manifest (and on its index entry): the selection of the archive's fingerprint
// and the manifest's identity, derived here only. Throws IntegrityError naming `what` (the fingerprint) when a
// selection value is longer than an annotation may be.
[[nodiscard]] Annotations archive_annotations(const manifest::Fingerprint& fingerprint, const Digest& manifest_sha256,
                                              std::uint64_t header_size, std::string_view title, std::string_view what);
// Whether an archive built for `archive` fits a machine whose selection is `machine`: every field equal.
// Returns the first field that differs, or nullopt when it fits.
[[nodiscard]] std::optional<std::string> first_mismatch(const Selection& machine, const Selection& archive);
// "gpu.arch=sm_90 torch.version=2.11.0+cu130 ..." for messages (values escaped).
[[nodiscard]] std::string describe(const Selection& selection);

// The scheme that makes an archive argument a registry reference (`restore oci://REF`), optional for pull.
inline constexpr std::string_view kReferenceScheme = "oci://";
[[nodiscard]] inline bool is_reference(std::string_view text) { return text.starts_with(kReferenceScheme); }

// A registry reference: [oci://]host[:port]/repo/sitory[:tag][@sha256:...]. Without a host part (no '.', ':' or
// "localhost" in the first component) the registry is docker.io, as docker and skopeo read it.
struct Reference {
  std::string registry;    // host[:port] as written ("docker.io" for Docker Hub)
  std::string repository;  // "team/model"
  std::string tag;         // "" when a digest is given without a tag
  std::string digest;      // "" or "sha256:..."

  // What goes in /v2/<repository>/manifests/<here>: the digest when given, else the tag.
  [[nodiscard]] std::string manifest_reference() const { return digest.empty() ? tag : digest; }
  // The host to talk to (Docker Hub's API lives at registry-1.docker.io).
  [[nodiscard]] std::string api_host() const;
  [[nodiscard]] std::string str() const;
};
// Throws UsageError naming what is wrong.
[[nodiscard]] Reference parse_reference(std::string_view text);
// `text` with the scheme put in front ("oci://host:5000/repo:tag") when it reads as a reference with a host
// ("host:5000/repo:tag", "registry.example.com/team/cache:v1", "localhost/x") but was written without the scheme;
// nullopt otherwise (a path such as "out/a.ccpack", or a reference already with its scheme).
[[nodiscard]] std::optional<std::string> scheme_less_reference(std::string_view text);

}  // namespace ccpack::registry::oci
