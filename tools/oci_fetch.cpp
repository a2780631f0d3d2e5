#include "tools/oci_fetch.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include "manifest/manifest.hpp"
#include "tools/fleet.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace ccpack::tools {
namespace oci = manifest::oci;

namespace {

[[noreturn]] void refuse_all(const oci::Reference& ref, const oci::Selection& machine, const std::vector<std::string>& available) {
  // One line, bounded: an index may hold up to 1024 entries.
  constexpr std::size_t kListed = 20;
  std::string list;
  for (std::size_t i = 0; i < available.size() && i < kListed; ++i) list += (list.empty() ? "" : "; ") + available[i];
  if (available.size() > kListed) list += "; and " + std::to_string(available.size() - kListed) + " more";
  throw Error("no archive in " + ref.str() + " fits this machine (" + oci::describe(machine) + "); available: " +
                  (list.empty() ? "none" : list),
              ExitCode::refused);
}

// The image manifest document to use: the tag's own, or the fitting entry of its index.
registry::Document choose_manifest(registry::Session& s, const oci::Selection& machine) {
  const oci::Reference& ref = s.reference();
  std::optional<registry::Document> doc = s.get_manifest(ref.manifest_reference());
  if (!doc) throw Error(ref.str() + " not found in the registry");
  if (doc->media_type != oci::kImageIndexType) {
    if (doc->media_type != oci::kImageManifestType) {
      throw Error(ref.str() + " is not a ccpack artifact (media type '" + http::escape_for_message(doc->media_type) + "')");
    }
    return std::move(*doc);
  }
  oci::Index index = oci::parse_index(doc->bytes, "index " + ref.str());
  std::vector<std::string> available;
  const oci::Descriptor* pick = nullptr;
  for (const oci::Descriptor& d : index.manifests) {
    std::optional<oci::Selection> sel = oci::selection_of_annotations(d.annotations);
    if (!sel) continue;
    available.push_back(oci::describe(*sel));
    if (!pick && !oci::first_mismatch(machine, *sel)) pick = &d;
  }
  if (!pick) refuse_all(ref, machine, available);
  if (pick->media_type != oci::kImageManifestType) throw IntegrityError("index " + ref.str() + ": the chosen entry is not an image manifest");
  std::optional<registry::Document> m = s.get_manifest(pick->digest);
  if (!m) throw Error(ref.str() + ": manifest " + pick->digest + " named by the index is missing");
  if (m->bytes.size() != pick->size) throw IntegrityError(ref.str() + ": manifest " + pick->digest + " size differs from the index");
  return std::move(*m);
}

std::uint64_t header_size_of(const RemoteArchive& r) {
  auto it = r.manifest.annotations.find(std::string(oci::kAnnotationHeaderSize));
  if (it == r.manifest.annotations.end()) throw IntegrityError(r.what + ": annotation " + std::string(oci::kAnnotationHeaderSize) + " is missing");
  std::uint64_t n = 0;
  const std::string& t = it->second;
  bool digits = !t.empty() && t.size() <= 12 && t.find_first_not_of("0123456789") == std::string::npos;
  if (digits) n = std::stoull(t);
  const std::uint64_t max = 72ULL + manifest::kMaxManifestBytes + manifest::kMaxSignatureBytes;
  if (!digits || n < 72 || n > max || n >= r.layer.size) {
    throw IntegrityError(r.what + ": annotation " + std::string(oci::kAnnotationHeaderSize) + " is not a valid header size");
  }
  return n;
}

}  // namespace

RemoteArchive select_remote(registry::Session& s, const oci::Selection& machine) {
  const oci::Reference& ref = s.reference();
  registry::Document doc = choose_manifest(s, machine);
  RemoteArchive r;
  r.manifest_digest = doc.digest;
  r.manifest = oci::parse_image_manifest(doc.bytes, "manifest " + ref.str());
  std::optional<oci::Selection> sel = oci::selection_of_annotations(r.manifest.annotations);
  if (sel && oci::first_mismatch(machine, *sel)) refuse_all(ref, machine, {oci::describe(*sel)});
  r.selection = sel ? oci::describe(*sel) : "(no annotations)";
  if (r.manifest.artifact_type != oci::kArtifactType || r.manifest.layers.size() != 1 ||
      r.manifest.layers[0].media_type != oci::kLayerMediaType) {
    throw Error(ref.str() + " is not a ccpack archive artifact (artifactType '" + http::escape_for_message(r.manifest.artifact_type) +
                "', " + std::to_string(r.manifest.layers.size()) + " layer(s))");
  }
  r.layer = r.manifest.layers[0];
  r.what = "archive " + r.layer.digest + " of " + ref.str();
  r.header_size = header_size_of(r);
  return r;
}

RemoteHeader fetch_header(registry::Session& s, const RemoteArchive& r, const oci::Selection& machine, const http::Sink& also) {
  UniqueFd mem(::memfd_create("ccpack-header", MFD_CLOEXEC));
  if (!mem.valid()) throw_errno("cannot create a memory file");
  std::uint64_t got = 0;
  s.get_blob(r.layer.digest, 0, r.header_size - 1, [&](const char* data, std::size_t size) {
    if (got + size > r.header_size) throw IntegrityError(r.what + ": the registry sent more than the header frame");
    pwrite_all(mem.get(), data, size, static_cast<off_t>(got), "a memory file");
    if (also) also(data, size);
    got += size;
  });
  if (got != r.header_size) throw IntegrityError(r.what + ": the header frame ended early");
  // Sized like the layer (sparse), so the reader's size checks hold the header to the layer's size.
  if (::ftruncate(mem.get(), static_cast<off_t>(r.layer.size)) != 0) throw_errno("cannot size a memory file");
  RemoteHeader out;
  out.header = manifest::read_header(mem.get(), r.what);
  manifest::Manifest m;
  try {
    m = manifest::Manifest::parse(out.header.manifest);
  } catch (const IntegrityError& e) {
    throw IntegrityError(r.what + ": " + e.what());
  }
  if (m.payload_size() != out.header.payload_size) throw IntegrityError(r.what + ": manifest frames and header disagree on the payload size");
  auto sha = r.manifest.annotations.find(std::string(oci::kAnnotationManifestSha256));
  if (sha != r.manifest.annotations.end() && sha->second != to_hex(out.header.manifest_sha256)) {
    throw IntegrityError(r.what + ": the archive's manifest does not match annotation " + std::string(oci::kAnnotationManifestSha256));
  }
  out.signature = check_archive_signature(out.header, r.what);
  oci::Selection signed_sel = oci::selection_of_fingerprint(m.fingerprint_json, r.what + " fingerprint");
  if (std::optional<std::string> why = oci::first_mismatch(machine, signed_sel)) {
    throw Error(r.what + ": the archive's signed fingerprint does not fit this machine: " + *why, ExitCode::refused);
  }
  return out;
}

}  // namespace ccpack::tools
