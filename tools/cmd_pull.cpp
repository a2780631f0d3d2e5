// `ccpack pull REF -o FILE`: download the archive under REF that fits this machine, checked before and after.
//
//   1-2. Select by annotations, then fetch and check the header frame (registry/remote_archive.hpp: exit 3 or 4 before
//      any payload byte), which also goes to the output's temporary file; the signed fingerprint must not make
//      any component stale or refused on the target machine (tools/machine.hpp: probe, --fingerprint, --select).
//   3. The payload follows frame by frame, each frame checked before it is written, a cut resumed at the end of
//      the last verified frame (registry/payload_fetch.hpp); the whole layer must match its digest; only then is the
//      file given its name (AtomicFile). Any failure leaves no file.
// On a terminal the download shows one progress line, as restore oci:// does (util/progress.hpp).
#include "registry/oci.hpp"
#include "registry/payload_fetch.hpp"
#include "registry/remote_archive.hpp"
#include "registry/session.hpp"
#include "tools/cache_dirs.hpp"
#include "tools/cli.hpp"
#include "tools/registry_options.hpp"
#include "tools/machine.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/progress.hpp"

namespace ccpack::tools {
namespace fs = std::filesystem;
namespace oci = registry::oci;

namespace {

struct PullOptions {
  CommonOptions common;
  RegistryOptions registry;
  MachineOptions machine;
  std::string reference;
  fs::path output;
};

int run(const PullOptions& o) {
  Reporter out(o.common);
  check_selects(o.machine);
  oci::Reference ref = oci::parse_reference(o.reference);
  Machine machine = target_machine(o.machine, "", resolve_cache_dirs({}));
  say_selected(out, machine);
  registry::Session s(ref, session_options(o.registry, false, ref));
  s.on_fallback = [&out](const std::string& line) { out.warn(line); };
  registry::RemoteArchive r = registry::select_remote(s, machine.fingerprint, false);

  AtomicFile file(o.output);
  Sha256 hash;
  std::uint64_t written = 0;
  Progress download("download", r.layer.size, out.progress());
  registry::RemoteHeader h = registry::fetch_header(s, r, [&](const char* data, std::size_t size) {
    pwrite_all(file.fd(), data, size, static_cast<off_t>(written), quoted_path(o.output));
    hash.update(data, size);
    written += size;
    download.advance(size);
  });
  registry::require_signed_fit(r, h, machine.fingerprint);
  std::string signature = check_archive_signature(h.header, r.what);
  // Only frames whose hash checked reach the file; the layer's digest is checked before the last one does.
  registry::FetchLog log;
  registry::fetch_payload(s, {r.layer.digest, r.layer.size, r.header_size, h.manifest.frames}, hash,
                [&](const char* data, std::size_t size, std::uint64_t offset) {
                  pwrite_all(file.fd(), data, size, static_cast<off_t>(offset), quoted_path(o.output));
                  download.advance(size);
                },
                log, [&out](const registry::Resume& resume) { out.warn(registry::describe(resume)); });
  download.finish();
  file.commit();
  out.report({{"reference", ref.str()},
              {"manifest_digest", r.manifest_digest},
              {"layer_digest", r.layer.digest},
              {"bytes", r.layer.size},
              {"output", o.output.string()},
              {"selection", r.selection},
              {"signatures", signature},
              {"machine", machine_json(machine)},
              {"resumes", registry::resumes_json(log)}});
  out.say("pulled " + ref.str() + " (" + r.selection + ") into " + quoted_path(o.output) + ": " + mb(r.layer.size) + ", digest OK");
  return 0;
}

}  // namespace

void add_pull(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<PullOptions>();
  CLI::App* p = app.add_subcommand("pull", "Download the archive under a registry reference that fits this machine");
  p->add_option("reference", o->reference, "What to pull: [oci://]host[:port]/repository[:tag|@sha256:...]")->required();
  p->add_option("-o,--output", o->output, "Where to write the archive")->required();
  add_registry_options(p, o->registry);
  add_machine_options(p, o->machine);
  add_common(p, o->common);
  commands.push_back({p, &o->common, [o] { return run(*o); }});
}

}  // namespace ccpack::tools
