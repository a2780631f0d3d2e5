// `ccpack pull REF -o FILE`: download the archive under REF that fits this machine, checked before and after.
//
// The flow is registry::pull (registry/pull.hpp: select, header, fit and signature, payload frame by frame, then the
// file's name; any failure leaves no file); this file parses the flags, finds the target machine (cli/machine.hpp:
// probe, --fingerprint, --select), checks signatures with the trusted keys, and prints.
// On a terminal the download shows one progress line, as restore oci:// does (util/progress.hpp).
#include <optional>

#include "cli/cache_dirs.hpp"
#include "cli/cli.hpp"
#include "cli/machine.hpp"
#include "cli/registry_options.hpp"
#include "cli/trust_options.hpp"
#include "registry/oci.hpp"
#include "registry/pull.hpp"
#include "registry/session.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/progress.hpp"

namespace ccpack::cli {
namespace fs = std::filesystem;
namespace oci = registry::oci;

namespace {

struct PullOptions {
  CommonOptions common;
  RegistryOptions registry;
  MachineOptions machine;
  std::string reference;
  fs::path output;
  TrustOptions trust;  // --trust and --require-cosign only: the pulled file is judged by restore and verify
};

int run(const PullOptions& o) {
  Reporter out(o.common);
  check_selects(o.machine);
  oci::Reference ref = oci::parse_reference(o.reference);
  if (!o.trust.trust.empty() && !o.trust.require_cosign) throw UsageError("--trust takes effect with --require-cosign only");
  Machine machine = target_machine(o.machine, "", resolve_cache_dirs({}));
  say_selected(out, machine);
  registry::Session s(ref, session_options(o.registry, false, ref));
  s.on_fallback = [&out](const std::string& line) { out.warn(line); };
  std::optional<Progress> download;
  registry::PullRequest rq;
  rq.output = o.output;
  rq.machine = machine.fingerprint;
  rq.check_signature = check_archive_signature;
  if (o.trust.require_cosign) {
    rq.check_artifact = [&o, &ref](registry::Session& session, const registry::RemoteArchive& remote) {
      return require_cosign(session, remote, ref, o.trust);
    };
  }
  rq.on_start = [&](std::uint64_t total) { download.emplace("download", total, out.progress()); };
  rq.on_bytes = [&](std::size_t bytes) { download->advance(bytes); };
  rq.on_resume = [&out](const registry::Resume& resume) { out.warn(registry::describe(resume)); };
  registry::PullResult result;
  registry::pull(s, rq, result);
  download->finish();
  const registry::RemoteArchive& r = result.remote;
  const std::string& signature = result.signature;
  const registry::FetchLog& log = result.log;
  out.report({{"reference", ref.str()},
              {"manifest_digest", r.manifest_digest},
              {"layer_digest", r.layer.digest},
              {"bytes", r.layer.size},
              {"output", o.output.string()},
              {"selection", r.selection},
              {"signatures", signature},
              {"cosign", result.artifact.empty() ? ojson(nullptr) : ojson(result.artifact)},
              {"machine", machine_json(machine)},
              {"resumes", registry::resumes_json(log)}});
  out.say("pulled " + ref.str() + " (" + r.selection + ") into " + quoted_path(o.output) + ": " + mb(r.layer.size) +
          ", digest OK" + (result.artifact.empty() ? "" : ", cosign signature by trusted key " + result.artifact));
  return 0;
}

}  // namespace

void add_pull(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<PullOptions>();
  CLI::App* p = app.add_subcommand("pull", "Download the archive under a registry reference that fits this machine");
  p->add_option("reference", o->reference, "What to pull: [oci://]host[:port]/repository[:tag|@sha256:...]")->required();
  p->add_option("-o,--output", o->output, "Where to write the archive")->required();
  add_trust_options(p, o->trust, true);
  add_cosign_option(p, o->trust);
  add_registry_options(p, o->registry);
  add_machine_options(p, o->machine);
  add_common(p, o->common);
  commands.push_back({p, &o->common, [o] { return run(*o); }});
}

}  // namespace ccpack::cli
