// `ccpack merge BASE DELTA... -o NEXT`: what the pods of a fleet compiled (their deltas) merged into the base's next
// archive (converge/merge.hpp owns the flow, docs/CONVERGE.md the behaviour).
#include "cli/cli.hpp"
#include "cli/registry_options.hpp"
#include "cli/trust_options.hpp"
#include "converge/merge.hpp"
#include "converge/registry_inputs.hpp"
#include "converge/scratch.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"
#include "util/fs.hpp"
#include "util/interrupt.hpp"

namespace ccpack::cli {
namespace fs = std::filesystem;

namespace {

struct MergeOptions {
  CommonOptions common;
  std::string base;  // a file, or oci://REFERENCE with --deltas-from-registry
  std::vector<fs::path> deltas;
  bool from_registry = false;
  RegistryOptions registry;
  fs::path output;
  TrustOptions trust;
  SigningOptions signing;
};

ojson deltas_json(const converge::MergeResult& r) {
  ojson list = ojson::array();
  for (const converge::DeltaReport& d : r.deltas) {
    ojson skipped = ojson::array();
    for (const converge::SkippedEntry& s : d.skipped) skipped.push_back({{"path", s.path}, {"reason", s.reason}});
    list.push_back({{"file", d.file.string()},
                    {"manifest_sha256", d.manifest_sha256},
                    {"duplicate", d.duplicate},
                    {"added", d.added},
                    {"kept", d.kept},
                    {"relocated", d.relocated},
                    {"skipped", skipped}});
  }
  return list;
}

ojson conflicts_json(const converge::MergeResult& r) {
  ojson list = ojson::array();
  for (const converge::Conflict& c : r.conflicts) {
    list.push_back({{"path", c.path},
                    {"kept", {{"delta", r.deltas[c.kept].manifest_sha256}, {"sha256", c.kept_sha256}}},
                    {"dropped", {{"delta", r.deltas[c.dropped].manifest_sha256}, {"sha256", c.dropped_sha256}}}});
  }
  return list;
}

// The conflicts in one line: how many, and the first (--json lists each with its deltas and SHA-256s).
std::string conflicts_line(const converge::MergeResult& r) {
  const converge::Conflict& first = r.conflicts.front();
  std::string n = std::to_string(r.conflicts.size());
  return n + (r.conflicts.size() == 1 ? " conflict" : " conflicts") +
         " (the same path with other bytes in two deltas, their pods' folders left out), the first " + quoted_name(first.path) +
         " in deltas " + r.deltas[first.kept].manifest_sha256.substr(0, 12) + " and " +
         r.deltas[first.dropped].manifest_sha256.substr(0, 12) +
         "; the lower SHA-256 kept each time (`merge --json` lists them all)";
}

// --deltas-from-registry: the base and every delta tag of it pulled into `scratch` (converge/registry_inputs.hpp).
converge::RegistryInputs pull_inputs(const MergeOptions& o, const fs::path& scratch, const Reporter& out) {
  registry::oci::Reference ref = registry::oci::parse_reference(o.base);
  converge::RegistryInputs in = converge::pull_inputs(
      ref,
      [&o, &out](const registry::oci::Reference& r) {
        auto s = std::make_unique<registry::Session>(r, session_options(o.registry, false, r));
        s->on_fallback = [&out](const std::string& line) { out.warn(line); };
        return s;
      },
      scratch);
  out.say("pulled " + ref.str() + " and " + std::to_string(in.deltas.size()) + " delta tags of it");
  return in;
}

int run(const MergeOptions& o) {
  Reporter out(o.common);
  if (o.from_registry != o.base.starts_with("oci://")) {
    throw UsageError(o.from_registry
                         ? "--deltas-from-registry needs the base as oci://REGISTRY/REPOSITORY:TAG"
                         : "a base in a registry (oci://...) takes --deltas-from-registry (its deltas are the tags TAG.delta-*)");
  }
  if (!o.from_registry && o.deltas.empty())
    throw UsageError("merge needs at least one DELTA (or a registry base with --deltas-from-registry)");
  std::optional<manifest::PrivateKey> key = load_signing_key(o.signing, true);  // before any work
  interrupt::install();  // SIGINT/SIGTERM/SIGHUP: the scratch folders removed, exit 130/143/129
  std::optional<converge::Scratch> pulled;
  converge::RegistryInputs in;
  if (o.from_registry) {
    pulled.emplace(o.output);
    in = pull_inputs(o, pulled->path(), out);
  }
  unpack::TrustReport trust;
  converge::MergeRequest rq;
  rq.base = o.from_registry ? in.base : fs::path(o.base);
  rq.base_gate = trust_gate(o.trust, out, trust);
  rq.deltas = o.deltas;
  rq.deltas.insert(rq.deltas.end(), in.deltas.begin(), in.deltas.end());
  rq.output = o.output;
  rq.pack.jobs = thread_budget().threads;
  rq.pack.progress = out.progress();
  rq.pack.sign = manifest_signer(key, o.signing);
  converge::MergeResult r = converge::merge(rq);
  std::uint64_t added = 0;
  for (const converge::DeltaReport& d : r.deltas) added += d.kept;
  out.report({{"archive", o.output.string()},
              {"archive_bytes", r.packed.archive_size},
              {"base", o.base},
              {"delta_tags", in.delta_tags},
              {"base_manifest_sha256", r.base_manifest_sha256},
              {"signed_by", key ? ojson(key->key_id()) : ojson(nullptr)},
              {"added", added},
              {"deltas", deltas_json(r)},
              {"conflicts", conflicts_json(r)}});
  for (const converge::DeltaReport& d : r.deltas) {
    out.say("delta " + d.manifest_sha256.substr(0, 12) + " " + quoted_path(d.file) + ": " +
            (d.duplicate ? "given twice, merged once"
                         : "added " + std::to_string(d.added.size()) + ", skipped " + std::to_string(d.skipped.size())));
  }
  if (!r.conflicts.empty()) out.warn(conflicts_line(r));
  out.say("merged " + std::to_string(r.deltas.size()) + " deltas into " + quoted_path(o.output) + ": the base plus " +
          std::to_string(added) + " files (" + mb(r.packed.archive_size) + "), signed with key " + key->key_id());
  return 0;
}

}  // namespace

void add_merge(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<MergeOptions>();
  CLI::App* m = app.add_subcommand(
      "merge",
      "Merge what pods compiled since their restore (deltas from create --since-restore) into the next archive: the base "
      "verified with the trusted keys, each delta checked as untrusted input (base digest, fingerprint, every restore check); "
      "a file of the base is never replaced; same bytes in any delta order");
  m->add_option("base", o->base,
                "The archive the pods restored (signed by a trusted key): a file, or oci://REGISTRY/REPOSITORY:TAG with "
                "--deltas-from-registry")
      ->required();
  m->add_option("deltas", o->deltas, "Deltas made by `create --since-restore` from folders restored from BASE");
  m->add_option("-o,--output", o->output, "Archive to write: the base plus what the deltas add; it appears atomically")
      ->required();
  m->add_flag("--deltas-from-registry", o->from_registry,
              "Pull the base from the registry and merge every delta pushed next to it (`push --delta`: the tags "
              "TAG.delta-<12 hex>, docs/REGISTRY.md), with any DELTA files given");
  add_trust_options(m, o->trust);
  add_signing_options(m, o->signing, true);
  add_registry_options(m, o->registry);
  add_common(m, o->common);
  commands.push_back({m, &o->common, [o] { return run(*o); }});
}

}  // namespace ccpack::cli
