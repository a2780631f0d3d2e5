// `ccpack env ARCHIVE`: what a pod must export to use the archive (probe/pod_settings.hpp): the cache folders a
// restore fills, the settings its cache was built with, and a ptxas of the recorded version on this machine, as
// `export NAME='VALUE'` lines for sh (or --json). An init container writes them to a shared volume, and the main
// container sources them. The archive's signature is checked as restore checks it: these lines get sourced.
#include <cstdio>

#include "cli/fingerprint_options.hpp"
#include "cli/pod_settings.hpp"
#include "cli/restore_command.hpp"
#include "registry/remote_archive.hpp"
#include "unpack/archive.hpp"
#include "util/error.hpp"

namespace ccpack::cli {
namespace fs = std::filesystem;

namespace {

// oci://REF: the archive a restore of REF would choose here, its header fetched and its signature checked.
manifest::Manifest remote_manifest(const RestoreOptions& o, const Reporter& out, const std::vector<manifest::CacheDir>& dirs) {
  registry::oci::Reference ref = registry::oci::parse_reference(o.archive.string());
  registry::Session session(ref, session_options(o.registry, false, ref));
  session.on_fallback = [&out](const std::string& line) { out.warn(line); };
  Machine machine = target_machine(o.machine, o.python, dirs);
  registry::RemoteArchive remote = registry::select_remote(session, machine.fingerprint, true);
  std::string cosign_by;
  if (o.trust.require_cosign) cosign_by = require_cosign(session, remote, ref, o.trust);
  registry::RemoteHeader header = registry::fetch_header(session, remote, {});
  unpack::TrustReport trust;
  unpack::Archive a =
      unpack::Archive::from_header(remote.what, std::move(header.header), nullptr, trust_gate(o.trust, out, trust, &cosign_by));
  return std::move(a.manifest);
}

struct EnvOptions {
  RestoreOptions restore;  // the archive, folders, trust, registry and machine flags, as restore takes them
};

int run(EnvOptions& eo) {
  RestoreOptions& o = eo.restore;
  Reporter out(o.common);
  ArchiveForPod archive = archive_for_pod(o, out);
  probe::PodEnvironment env = probe::pod_environment(archive.manifest, archive.dirs, o.python);
  if (out.json()) {
    ojson vars = ojson::array();
    for (const probe::PodVariable& v : env.variables) vars.push_back({{"name", v.name}, {"value", v.value}, {"why", v.why}});
    out.report({{"archive", o.archive.string()}, {"variables", vars}, {"notes", env.notes}});
    return 0;
  }
  for (const std::string& n : env.notes) out.warn(n);
  probe::PodEnvironment quiet{env.variables, {}};
  std::fputs(export_lines(quiet).c_str(), stdout);
  return 0;
}

}  // namespace

ArchiveForPod archive_for_pod(const RestoreOptions& o, const Reporter& out) {
  require_file_or_reference(o.archive.string());
  ArchiveForPod a;
  CacheDirOptions dirs = o.dirs;  // a copy: restore resolves its own --add values again
  resolve_extras(dirs, o.extras);
  if (!o.at_build_paths) a.dirs = resolve_cache_dirs(dirs);
  if (registry::oci::is_reference(o.archive.string())) {
    if (o.at_build_paths) throw UsageError("--at-build-paths takes a local archive (pull it first with `ccpack pull`)");
    a.manifest = remote_manifest(o, out, a.dirs);
    return a;
  }
  unpack::TrustReport trust;
  a.manifest = open_trusted(o.archive, o.trust, out, trust, unpack::ManifestDepth::top_level).manifest;
  if (o.at_build_paths) {
    for (const manifest::Component& c : a.manifest.components)
      a.dirs.push_back({c.name, c.kind, c.source, "the archive's build folder"});
  }
  return a;
}

void add_env(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<EnvOptions>();
  CLI::App* e = app.add_subcommand(
      "env", "Print what a pod must export to use an archive: cache folders, the settings it was built with, a ptxas");
  e->add_option("archive", o->restore.archive, "The .ccpack archive, or oci://host[:port]/repository[:tag|@digest]")->required();
  add_cache_dirs(e, o->restore.dirs, o->restore.extras, "restore into");
  e->add_flag("--at-build-paths", o->restore.at_build_paths,
              "The folders the archive was packed from (as restore --at-build-paths)");
  add_trust_options(e, o->restore.trust);
  add_cosign_option(e, o->restore.trust);
  add_python_option(e, o->restore.python);
  add_machine_options(e, o->restore.machine);
  add_registry_options(e, o->restore.registry);
  add_common(e, o->restore.common);
  e->footer(
      "Prints `export NAME='VALUE'` lines on standard output: TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR (the folders a "
      "restore with the same flags fills), every TORCHINDUCTOR_*/TRITON_* setting the archive's cache key recorded, "
      "TRITON_PTXAS_PATH set to a ptxas of the recorded version found here, and TORCHINDUCTOR_COMPILE_THREADS=1 (unless set here) for an "
      "archive made with the tuned settings. What cannot be given (no ptxas of that version here, a path setting) is "
      "a warning on standard error. The archive's signature is checked first, as restore checks it. Use:\n"
      "  eval \"$(ccpack env model.ccpack)\" && ccpack restore model.ccpack && python serve.py\n"
      "  ccpack env model.ccpack > /shared/ccpack.env     # init container; the main container sources it\n"
      "or `ccpack run model.ccpack -- python serve.py`, which does both.");
  commands.push_back({e, &o->restore.common, [o] { return run(*o); }});
}

}  // namespace ccpack::cli
