// `ccpack pull REF -o FILE`: download the archive under REF that fits this machine, checked before and after.
//
//   1. The tag's index (or manifest) is read and the entry whose selection annotations equal this machine's is
//      chosen; when none fits, exit 3 listing what is available, with no blob byte requested.
//   2. Only the header frame is fetched (Range; a 200 answer is cut off), into the output's temporary file and a
//      memory file sized like the layer, which the same reader as for a local file checks. Its
//      manifest must hash to the annotation, the signature hook runs, and the *signed* fingerprint must fit
//      (annotations are hints): otherwise exit 3 (or 4), having read the header only.
//   3. The payload follows (Range from the header's end; a cut connection resumes where it stopped) and the
//      whole layer must match its digest; only then is the file given its name (AtomicFile). Any failure
//      leaves no file.
#include <sys/mman.h>
#include <unistd.h>

#include "manifest/manifest.hpp"
#include "manifest/oci.hpp"
#include "registry/session.hpp"
#include "tools/cli.hpp"
#include "tools/fleet.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace ccpack::tools {
namespace fs = std::filesystem;
namespace oci = manifest::oci;

namespace {

struct PullOptions {
  CommonOptions common;
  RegistryOptions registry;
  std::string reference;
  fs::path output;
};

struct Chosen {
  std::string manifest_digest;
  oci::ImageManifest manifest;
  std::string selection;  // described
};

[[noreturn]] void refuse_all(const oci::Reference& ref, const oci::Selection& machine, const std::vector<std::string>& available) {
  std::string list;
  for (const std::string& a : available) list += (list.empty() ? "" : "; ") + a;
  throw Error("no archive in " + ref.str() + " fits this machine (" + oci::describe(machine) + "); available: " +
                  (list.empty() ? "none" : list),
              ExitCode::refused);
}

// Step 1: the manifest to pull, chosen from annotations only.
Chosen choose(registry::Session& s, const oci::Selection& machine) {
  const oci::Reference& ref = s.reference();
  std::optional<registry::Document> doc = s.get_manifest(ref.manifest_reference());
  if (!doc) throw Error(ref.str() + " not found in the registry");
  Chosen c;
  if (doc->media_type == oci::kImageIndexType) {
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
    doc = std::move(m);
  } else if (doc->media_type != oci::kImageManifestType) {
    throw Error(ref.str() + " is not a ccpack artifact (media type '" + http::escape_for_message(doc->media_type) + "')");
  }
  c.manifest_digest = doc->digest;
  c.manifest = oci::parse_image_manifest(doc->bytes, "manifest " + ref.str());
  std::optional<oci::Selection> sel = oci::selection_of_annotations(c.manifest.annotations);
  if (sel && oci::first_mismatch(machine, *sel)) refuse_all(ref, machine, {oci::describe(*sel)});
  c.selection = sel ? oci::describe(*sel) : "(no annotations)";
  if (c.manifest.artifact_type != oci::kArtifactType || c.manifest.layers.size() != 1 ||
      c.manifest.layers[0].media_type != oci::kLayerMediaType) {
    throw Error(ref.str() + " is not a ccpack archive artifact (artifactType '" + http::escape_for_message(c.manifest.artifact_type) +
                "', " + std::to_string(c.manifest.layers.size()) + " layer(s))");
  }
  return c;
}

std::uint64_t header_size_of(const Chosen& c, const std::string& what) {
  auto it = c.manifest.annotations.find(std::string(oci::kAnnotationHeaderSize));
  if (it == c.manifest.annotations.end()) throw IntegrityError(what + ": annotation " + std::string(oci::kAnnotationHeaderSize) + " is missing");
  std::uint64_t n = 0;
  const std::string& t = it->second;
  bool digits = !t.empty() && t.size() <= 12 && t.find_first_not_of("0123456789") == std::string::npos;
  if (digits) n = std::stoull(t);
  const std::uint64_t max = 72ULL + manifest::kMaxManifestBytes + manifest::kMaxSignatureBytes;
  if (!digits || n < 72 || n > max || n >= c.manifest.layers[0].size) {
    throw IntegrityError(what + ": annotation " + std::string(oci::kAnnotationHeaderSize) + " is not a valid header size");
  }
  return n;
}

// Step 2: the header frame, checked; returns its parsed manifest's fingerprint selection.
void check_header(int fd, const Chosen& c, const oci::Selection& machine, const std::string& what, std::string& signature) {
  manifest::ArchiveHeader h = manifest::read_header(fd, what);
  manifest::Manifest m;
  try {
    m = manifest::Manifest::parse(h.manifest);
  } catch (const IntegrityError& e) {
    throw IntegrityError(what + ": " + e.what());
  }
  if (m.payload_size() != h.payload_size) throw IntegrityError(what + ": manifest frames and header disagree on the payload size");
  auto sha = c.manifest.annotations.find(std::string(oci::kAnnotationManifestSha256));
  if (sha != c.manifest.annotations.end() && sha->second != to_hex(Sha256::of(h.manifest))) {
    throw IntegrityError(what + ": the archive's manifest does not match annotation " + std::string(oci::kAnnotationManifestSha256));
  }
  signature = check_archive_signature(h, what);
  oci::Selection signed_sel = oci::selection_of_fingerprint(m.fingerprint_json, what + " fingerprint");
  if (std::optional<std::string> why = oci::first_mismatch(machine, signed_sel)) {
    throw Error(what + ": the archive's signed fingerprint does not fit this machine: " + *why, ExitCode::refused);
  }
}

int run(const PullOptions& o) {
  Reporter out(o.common);
  oci::Reference ref = oci::parse_reference(o.reference);
  oci::Selection machine = local_selection(o.registry);
  registry::Session s(ref, session_options(o.registry, false));
  Chosen c = choose(s, machine);
  const oci::Descriptor& layer = c.manifest.layers[0];
  std::string what = "archive " + layer.digest + " of " + ref.str();
  std::uint64_t header_size = header_size_of(c, what);

  AtomicFile file(o.output);
  // The header frame also goes to a memory file the size of the layer (sparse), so the same reader as for a
  // local archive checks it, sizes included.
  UniqueFd header(::memfd_create("ccpack-header", MFD_CLOEXEC));
  if (!header.valid()) throw_errno("cannot create a memory file");
  Sha256 hash;
  std::uint64_t written = 0;
  http::Sink sink = [&](const char* data, std::size_t size) {
    if (written + size > layer.size) throw IntegrityError(what + ": the registry sent more bytes than the layer's size");
    pwrite_all(file.fd(), data, size, static_cast<off_t>(written), quoted_path(o.output));
    if (written < header_size) pwrite_all(header.get(), data, size, static_cast<off_t>(written), "a memory file");
    hash.update(data, size);
    written += size;
  };
  s.get_blob(layer.digest, 0, header_size - 1, sink);
  if (written != header_size) throw IntegrityError(what + ": the header frame ended early");
  if (::ftruncate(header.get(), static_cast<off_t>(layer.size)) != 0) throw_errno("cannot size a memory file");
  std::string signature;
  check_header(header.get(), c, machine, what, signature);
  header.reset();
  s.get_blob(layer.digest, header_size, std::nullopt, sink);
  if (written != layer.size) throw IntegrityError(what + ": " + std::to_string(written) + " bytes received, expected " + std::to_string(layer.size));
  std::string got = oci::digest_string(hash.finish());
  if (got != layer.digest) throw IntegrityError(what + ": the downloaded bytes hash to " + got + " (corrupt or tampered blob)");
  file.commit();
  out.report({{"reference", ref.str()},
              {"manifest_digest", c.manifest_digest},
              {"layer_digest", layer.digest},
              {"bytes", layer.size},
              {"output", o.output.string()},
              {"selection", c.selection},
              {"signatures", signature}});
  out.say("pulled " + ref.str() + " (" + c.selection + ") into " + quoted_path(o.output) + ": " + mb(layer.size) + ", digest OK");
  return 0;
}

}  // namespace

void add_pull(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<PullOptions>();
  CLI::App* p = app.add_subcommand("pull", "Download the archive under a registry reference that fits this machine");
  p->add_option("reference", o->reference, "What to pull: [oci://]host[:port]/repository[:tag|@sha256:...]")->required();
  p->add_option("-o,--output", o->output, "Where to write the archive")->required();
  add_registry_options(p, o->registry, true);
  add_common(p, o->common);
  commands.push_back({p, &o->common, [o] { return run(*o); }});
}

}  // namespace ccpack::tools
