#include "registry/remote_archive.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>

#include "http/http.hpp"
#include "manifest/manifest.hpp"
#include "registry/selection.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace ccpack::registry {

namespace {

[[noreturn]] void refuse_all(const oci::Reference& ref, const manifest::Fingerprint& machine,
                             const std::vector<std::string>& available) {
  // One line, bounded: an index may hold up to 1024 entries.
  constexpr std::size_t kListed = 20;
  std::string list;
  for (std::size_t i = 0; i < available.size() && i < kListed; ++i) list += (list.empty() ? "" : "; ") + available[i];
  if (available.size() > kListed) list += "; and " + std::to_string(available.size() - kListed) + " more";
  throw Error("no archive in " + ref.str() + " fits this machine (" + oci::describe(oci::selection_of(machine)) +
                  "); available: " + (list.empty() ? "none" : list),
              ExitCode::refused);
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// The best candidates differ in fields the comparison cannot decide: say which, and how to supply them.
[[noreturn]] void refuse_undecided(const oci::Reference& ref, const manifest::Fingerprint& machine, const oci::Choice& c,
                                   const std::vector<std::string>& available) {
  std::string list;
  for (std::size_t i : c.tied) list += (list.empty() ? "" : "; ") + available[i];
  std::string how = "name the target with --select " + (c.missing.empty() ? c.differ : c.missing)[0] +
                    "=VALUE or --fingerprint FILE (written by `ccpack fingerprint --json` on the target machine)";
  if (c.missing.size() == c.differ.size()) {
    std::string absent;
    for (const std::string& f : c.missing) {
      const manifest::FieldValue* v = machine.get(f);
      absent += (absent.empty() ? "" : "; ") + f + " " +
                (v ? "absent (" + http::escape_for_message(v->source, 160) + ")" : "not probed");
    }
    throw Error("the archives in " + ref.str() + " differ only in " + joined(c.missing) + ", which this machine does not show (" +
                    absent + "): " + list + "; give the container the GPU, or " + how,
                ExitCode::refused);
  }
  throw Error(std::to_string(c.tied.size()) + " archives in " + ref.str() + " fit this machine equally well and differ in " +
                  joined(c.differ) + ": " + list + "; " + how,
              ExitCode::refused);
}

// The image manifest document to use: the tag's own, or the best entry of its index. `single_may_differ`: a
// single manifest is returned even when its annotations do not fit (the caller's policy judges it).
// `index_digest` gets the index's digest when the tag names one.
registry::Document choose_manifest(registry::Session& s, const manifest::Fingerprint& machine, bool single_may_differ,
                                   std::string& index_digest) {
  const oci::Reference& ref = s.reference();
  std::optional<registry::Document> doc = s.get_manifest(ref.manifest_reference());
  if (!doc) throw Error(ref.str() + " not found in the registry");
  std::vector<oci::Selection> candidates;
  std::vector<std::string> available;
  std::vector<const oci::Descriptor*> entries;
  oci::Index index;
  if (doc->media_type == oci::kImageIndexType) {
    index = oci::parse_index(doc->bytes, "index " + ref.str());
    index_digest = doc->digest;
    for (const oci::Descriptor& d : index.manifests) {
      std::optional<oci::Selection> sel = oci::selection_of_annotations(d.annotations);
      if (!sel) continue;
      candidates.push_back(*sel);
      available.push_back(oci::describe(*sel));
      entries.push_back(&d);
    }
  } else if (doc->media_type != oci::kImageManifestType) {
    throw Error(ref.str() + " is not a ccpack artifact (media type '" + http::escape_for_message(doc->media_type) + "')");
  } else {
    oci::ImageManifest m = oci::parse_image_manifest(doc->bytes, "manifest " + ref.str());
    std::optional<oci::Selection> sel = oci::selection_of_annotations(m.annotations);
    if (!sel) return std::move(*doc);  // no annotations: the header's signed fingerprint is all there is to judge
    candidates.push_back(*sel);
    available.push_back(oci::describe(*sel));
  }
  oci::Choice c = oci::choose(candidates, machine);
  bool single = entries.empty();
  if (candidates.empty() || (c.verdict >= manifest::Verdict::stale && !(single && single_may_differ))) {
    refuse_all(ref, machine, available);
  }
  if (!c.pick) refuse_undecided(ref, machine, c, available);
  if (single) return std::move(*doc);
  const oci::Descriptor* pick = entries[*c.pick];
  if (pick->media_type != oci::kImageManifestType)
    throw IntegrityError("index " + ref.str() + ": the chosen entry is not an image manifest");
  std::optional<registry::Document> m = s.get_manifest(pick->digest);
  if (!m) throw Error(ref.str() + ": manifest " + pick->digest + " named by the index is missing");
  if (m->bytes.size() != pick->size)
    throw IntegrityError(ref.str() + ": manifest " + pick->digest + " size differs from the index");
  return std::move(*m);
}

std::uint64_t header_size_of(const RemoteArchive& r) {
  auto it = r.manifest.annotations.find(std::string(oci::kAnnotationHeaderSize));
  if (it == r.manifest.annotations.end())
    throw IntegrityError(r.what + ": annotation " + std::string(oci::kAnnotationHeaderSize) + " is missing");
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

RemoteArchive select_remote(registry::Session& s, const manifest::Fingerprint& machine, bool single_may_differ) {
  const oci::Reference& ref = s.reference();
  RemoteArchive r;
  registry::Document doc = choose_manifest(s, machine, single_may_differ, r.index_digest);
  r.manifest_digest = doc.digest;
  r.manifest = oci::parse_image_manifest(doc.bytes, "manifest " + ref.str());
  std::optional<oci::Selection> sel = oci::selection_of_annotations(r.manifest.annotations);
  r.selection = sel ? oci::describe(*sel) : "(no annotations)";
  if (r.manifest.artifact_type != oci::kArtifactType || r.manifest.layers.size() != 1 ||
      r.manifest.layers[0].media_type != oci::kLayerMediaType) {
    throw Error(ref.str() + " is not a ccpack archive artifact (artifactType '" +
                http::escape_for_message(r.manifest.artifact_type) + "', " + std::to_string(r.manifest.layers.size()) +
                " layer(s))");
  }
  r.layer = r.manifest.layers[0];
  r.what = "archive " + r.layer.digest + " of " + ref.str();
  r.header_size = header_size_of(r);
  return r;
}

RemoteHeader fetch_header(registry::Session& s, const RemoteArchive& r, const http::Sink& also) {
  UniqueFd mem(::memfd_create("ccpack-header", MFD_CLOEXEC));
  if (!mem.valid()) throw_errno("cannot create a memory file");
  std::uint64_t got = 0;
  registry::Session::BlobOptions how;
  how.total_size = r.layer.size;
  s.get_blob(
      r.layer.digest, 0, r.header_size - 1,
      [&](const char* data, std::size_t size) {
        if (got + size > r.header_size) throw IntegrityError(r.what + ": the registry sent more than the header frame");
        pwrite_all(mem.get(), data, size, static_cast<off_t>(got), "a memory file");
        if (also) also(data, size);
        got += size;
      },
      how);
  if (got != r.header_size) throw IntegrityError(r.what + ": the header frame ended early");
  // Sized like the layer (sparse), so the reader's size checks hold the header to the layer's size.
  if (::ftruncate(mem.get(), static_cast<off_t>(r.layer.size)) != 0) throw_errno("cannot size a memory file");
  RemoteHeader out;
  out.header = manifest::read_header(mem.get(), r.what);
  manifest::Manifest& m = out.manifest;
  try {
    m = manifest::Manifest::parse(out.header.manifest);
  } catch (const IntegrityError& e) {
    throw IntegrityError(r.what + ": " + e.what());
  }
  if (m.payload_size() != out.header.payload_size)
    throw IntegrityError(r.what + ": manifest frames and header disagree on the payload size");
  if (r.header_size + out.header.payload_size != r.layer.size) {
    throw IntegrityError(r.what + ": the layer's size (" + std::to_string(r.layer.size) + " bytes) is not the archive's (" +
                         std::to_string(r.header_size + out.header.payload_size) + ")");
  }
  auto sha = r.manifest.annotations.find(std::string(oci::kAnnotationManifestSha256));
  if (sha != r.manifest.annotations.end() && sha->second != to_hex(out.header.manifest_sha256)) {
    throw IntegrityError(r.what + ": the archive's manifest does not match annotation " +
                         std::string(oci::kAnnotationManifestSha256));
  }
  return out;
}

void require_signed_fit(const RemoteArchive& r, const RemoteHeader& h, const manifest::Fingerprint& machine) {
  const manifest::Fingerprint& signed_fp = h.manifest.fingerprint;
  std::vector<manifest::ComponentRef> comps;
  for (const manifest::Component& c : h.manifest.components) comps.push_back({c.name, c.kind});
  manifest::Comparison c = manifest::compare(signed_fp, machine, comps);
  if (!c.blocks()) return;
  std::string why;
  for (const manifest::ComparisonRow& row : c.rows) {
    bool blocks =
        std::any_of(row.verdicts.begin(), row.verdicts.end(), [](manifest::Verdict v) { return v >= manifest::Verdict::stale; });
    if (!blocks) continue;
    auto shown = [](const std::optional<std::string>& v) {
      return v ? "'" + http::escape_for_message(*v, 120) + "'" : std::string("absent");
    };
    why += (why.empty() ? "" : "; ") + row.field + " is " + shown(row.archive) + " in the archive, " + shown(row.local) + " here";
  }
  throw Error(r.what + ": the archive's signed fingerprint does not fit this machine: " + why + " (" + c.summary() + ")",
              ExitCode::refused);
}

}  // namespace ccpack::registry
