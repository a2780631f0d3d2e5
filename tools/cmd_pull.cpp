// `ccpack pull REF -o FILE`: download the archive under REF that fits this machine, checked before and after.
//
//   1-2. Select by annotations, then fetch and check the header frame (tools/oci_fetch.hpp: exit 3 or 4 before
//      any payload byte), which also goes to the output's temporary file.
//   3. The payload follows (Range from the header's end; a cut connection resumes where it stopped) and the
//      whole layer must match its digest; only then is the file given its name (AtomicFile). Any failure
//      leaves no file.
// On a terminal the download shows one progress line, as restore oci:// does (util/progress.hpp).
#include "manifest/oci.hpp"
#include "registry/session.hpp"
#include "tools/cli.hpp"
#include "tools/fleet.hpp"
#include "tools/oci_fetch.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/progress.hpp"

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

int run(const PullOptions& o) {
  Reporter out(o.common);
  oci::Reference ref = oci::parse_reference(o.reference);
  oci::Selection machine = local_selection(o.registry);
  registry::Session s(ref, session_options(o.registry, false));
  RemoteArchive r = select_remote(s, machine);

  AtomicFile file(o.output);
  Sha256 hash;
  std::uint64_t written = 0;
  Progress download("download", r.layer.size, out.progress());
  http::Sink sink = [&](const char* data, std::size_t size) {
    if (written + size > r.layer.size) throw IntegrityError(r.what + ": the registry sent more bytes than the layer's size");
    pwrite_all(file.fd(), data, size, static_cast<off_t>(written), quoted_path(o.output));
    hash.update(data, size);
    written += size;
    download.advance(size);
  };
  RemoteHeader h = fetch_header(s, r, machine, sink);
  s.get_blob(r.layer.digest, r.header_size, r.layer.size - 1, sink);
  if (written != r.layer.size) {
    throw IntegrityError(r.what + ": " + std::to_string(written) + " bytes received, expected " + std::to_string(r.layer.size));
  }
  std::string got = oci::digest_string(hash.finish());
  if (got != r.layer.digest) throw IntegrityError(r.what + ": the downloaded bytes hash to " + got + " (corrupt or tampered blob)");
  download.finish();
  file.commit();
  out.report({{"reference", ref.str()},
              {"manifest_digest", r.manifest_digest},
              {"layer_digest", r.layer.digest},
              {"bytes", r.layer.size},
              {"output", o.output.string()},
              {"selection", r.selection},
              {"signatures", h.signature}});
  out.say("pulled " + ref.str() + " (" + r.selection + ") into " + quoted_path(o.output) + ": " + mb(r.layer.size) + ", digest OK");
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
