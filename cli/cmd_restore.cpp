// `ccpack restore`: check an archive and put its components into this machine's cache folders.
//
// The archive's fingerprint is compared with this machine's before anything is written, and again on every run:
// folders that already carry this archive's marker are not proof that it still fits (a persistent volume outlives
// an image upgrade). --on-mismatch says what a stale or refused component does: refuse (default; nothing is
// written, exit 3, the table of `check` on stderr), force (restore anyway, one warning per differing field) or
// purge (restore the components that fit; for the stale ones restore nothing and remove the local artifacts that
// are stale here with the rules of `ccpack purge`; a refused component still refuses the whole restore).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>

#include "cli/cache_dirs.hpp"
#include "cli/cli.hpp"
#include "cli/comparison.hpp"
#include "cli/fingerprint_options.hpp"
#include "cli/machine.hpp"
#include "cli/pod_settings.hpp"
#include "cli/purge_report.hpp"
#include "cli/registry_options.hpp"
#include "cli/restore_command.hpp"
#include "cli/trust_options.hpp"
#include "registry/archive_stream.hpp"
#include "registry/restore_source.hpp"
#include "unpack/archive.hpp"
#include "unpack/restore.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"
#include "util/fs.hpp"
#include "util/interrupt.hpp"

namespace ccpack::cli {
namespace fs = std::filesystem;

namespace {

// What a restore into other folders than the build machine's rewrote, and what that implies, from this run's
// counts (docs/RELOCATION.md): nothing to warn about when every path-bearing file was rewritten.
std::string relocation_line(const unpack::ComponentOutcome& c) {
  if (c.action == unpack::Action::already) return "its paths were rewritten when it was restored";
  const unpack::RelocationStats& s = c.relocation;
  std::string line = std::to_string(s.paths_rewritten) + " Triton group paths rewritten";
  if (s.pickle_files != 0) {
    line += ", " + std::to_string(s.pickle_paths_rewritten) + " paths in " + std::to_string(s.pickle_files) +
            " FX-graph and AOTAutograd entries";
  }
  std::uint64_t unread = s.files_unparsed + s.pickle_files_unparsed;
  if (unread != 0) {
    line += "; " + std::to_string(unread) +
            " files could not be read and were restored as packed: those kernels may miss and autotune again "
            "(`restore --at-build-paths --print-env` restores exactly where it was built)";
  }
  return line;
}

// --print-env: the variables that point torch and triton at the folders just restored.
void print_env(const unpack::InstallReport& r) {
  for (const auto& c : r.components) {
    if (c.dir.empty()) continue;
    const char* var = folder_variable(manifest::kind_of_component(c.name));  // the one map (manifest/cache_dir.hpp)
    if (var != nullptr) std::printf("export %s=%s\n", var, shell_quoted(c.dir.string()).c_str());
  }
}

bool relocated(const unpack::ComponentOutcome& c) { return !c.dir.empty() && !c.build_dir.empty() && c.dir != c.build_dir; }

manifest::OnMismatch mismatch_policy(const std::string& flag) {
  manifest::OnMismatch p = manifest::OnMismatch::refuse;
  if (!flag.empty()) {
    p = manifest::parse_on_mismatch(flag, "--on-mismatch");
  } else if (const char* env = std::getenv("CCPACK_ON_MISMATCH"); env && *env) {
    p = manifest::parse_on_mismatch(env, "CCPACK_ON_MISMATCH");
  }
  return p;
}

// Differences that need no action (said with -v, and shown by check and --json): a GPU field this machine does
// not show while --select named the GPU (the restore was told what to expect), and the folders' relocation,
// which the restore rewrites (unless --no-relocate).
bool needs_no_action(const manifest::ComparisonRow& row, const Machine& machine, bool relocates) {
  bool named = std::any_of(machine.selected.begin(), machine.selected.end(),
                           [](const Selected& s) { return s.field == manifest::field::gpu_arch; });
  if (named && !row.local && row.field.starts_with("gpu.")) return true;
  return relocates && (row.field == manifest::field::paths_inductor || row.field == manifest::field::paths_triton);
}

// One warning per field that differs (all of them still restored: only warnings, or --on-mismatch=force); what
// needs no action only with -v.
void warn_differences(const Reporter& out, const manifest::Comparison& c, bool forced, const Machine& machine,
                      const RestoreOptions& o) {
  if (!c.archive_recorded) {
    out.warn("the archive records no fingerprint (made before fingerprints): restored without a check");
    return;
  }
  for (const manifest::ComparisonRow& row : c.rows) {
    std::string verdicts;
    for (std::size_t i = 0; i < c.components.size(); ++i) {
      if (row.verdicts[i] == manifest::Verdict::match) continue;
      verdicts += (verdicts.empty() ? "" : ", ") + c.components[i].name + " " + std::string(manifest::to_string(row.verdicts[i]));
    }
    if (verdicts.empty()) continue;
    if (needs_no_action(row, machine, !o.no_relocate)) {
      if (o.verbose)
        out.say("fingerprint field " + row.field + " differs (" + difference_text(row) + "): " + verdicts + ": " + row.why +
                " (no action needed)");
      continue;
    }
    out.warn("fingerprint field " + row.field + " differs (" + difference_text(row) + "): " + verdicts +
             (forced ? ", restored anyway (--on-mismatch=force)" : "") + ": " + row.why);
  }
}

// The report of a restore: --json, or one line per component (and what a relocation costs).
struct Judged {
  const Machine& machine;
  const manifest::Comparison& fit;
  const std::function<ojson()>& registry;  // empty for a local archive; read after the restore (its resumes)
};

// The default report, one line: what was restored, where, from where, in how long.
std::string summary_line(const RestoreOptions& o, const unpack::InstallReport& r) {
  std::string line;
  for (const auto& c : r.components) {
    line += (line.empty() ? "" : "; ") + c.name + ": " + unpack::to_string(c.action);
    if (!c.dir.empty()) line += " " + quoted_path(c.dir);
    if (c.action == unpack::Action::restore) line += " (" + std::to_string(c.files) + " files, " + mb(c.bytes) + ")";
    if (c.action != unpack::Action::restore && c.action != unpack::Action::already && !c.reason.empty()) line += ": " + c.reason;
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - o.started).count();
  char took[32];
  std::snprintf(took, sizeof took, "%.1f s", seconds);
  return line + " (from " + quoted_path(o.archive) + ", " + took + ")";
}

// A component's object in the --json report.
ojson component_json(const unpack::ComponentOutcome& c) {
  return {{"name", c.name},
          {"dir", c.dir.string()},
          {"status", unpack::to_string(c.action)},
          {"reason", c.reason},
          {"files", c.files},
          {"bytes", c.bytes},
          {"build_dir", c.build_dir.string()},
          {"relocated", relocated(c)},
          {"group_paths_rewritten", c.relocation.paths_rewritten},
          {"pickle_files", c.relocation.pickle_files},
          {"pickle_paths_rewritten", c.relocation.pickle_paths_rewritten},
          {"files_unparsed", c.relocation.files_unparsed + c.relocation.pickle_files_unparsed}};
}

void report_json(const RestoreOptions& o, const Reporter& out, const unpack::InstallReport& r, const unpack::TrustReport& trust,
                 const Judged& judged, const unpack::PurgeReport* purged, unpack::ManifestDepth depth, bool from_markers) {
  ojson comps = ojson::array();
  for (const auto& c : r.components) comps.push_back(component_json(c));
  out.report({{"archive", o.archive.string()},
              {"noop", r.noop()},
              {"trusted", trust.trusted()},
              {"signed_by", trust.trusted() ? ojson(trust.verified_by) : ojson(nullptr)},
              {"components", comps},
              {"fingerprint", comparison_json(judged.fit)},
              {"machine", machine_json(judged.machine)},
              {"registry", judged.registry ? judged.registry() : ojson(nullptr)},
              {"purge", purged ? purge_json(*purged) : ojson(nullptr)},
              // "top-level": the entries were not parsed (a no-op: every folder held this archive already);
              // "markers": no manifest byte was read (a no-op of the very file the folders' markers name)
              {"manifest", depth == unpack::ManifestDepth::full ? "full"
                           : from_markers                       ? "markers"
                                                                : "top-level"},
              {"threads", thread_budget().threads},
              {"threads_from", thread_budget().from}});
}

// -v: one line per component, and where a relocated one was built and what its relocation rewrote.
void say_components(const Reporter& out, const unpack::InstallReport& r) {
  for (const auto& c : r.components) {
    std::string line = c.name + ": " + unpack::to_string(c.action);
    if (!c.dir.empty()) line += " " + quoted_path(c.dir);
    if (c.action == unpack::Action::restore) line += " (" + std::to_string(c.files) + " files, " + mb(c.bytes) + ")";
    if (!c.reason.empty()) line += ": " + c.reason;
    out.say(line);
    if (relocated(c) && (c.action == unpack::Action::restore || c.action == unpack::Action::already)) {
      // A folder that already held this archive was relocated by the restore that wrote it; this run rewrote nothing.
      out.say(c.name + ": built in " + quoted_path(c.build_dir) + ", restored into " + quoted_path(c.dir) + "; " +
              relocation_line(c));
    }
  }
}

void report(const RestoreOptions& o, const Reporter& out, const unpack::InstallReport& r, const unpack::TrustReport& trust,
            const Judged& judged, const unpack::PurgeReport* purged, unpack::ManifestDepth depth, bool from_markers) {
  if (out.json()) {
    report_json(o, out, r, trust, judged, purged, depth, from_markers);
    return;
  }
  if (!o.verbose) {
    out.say(summary_line(o, r));
    for (const auto& c : r.components) {  // a relocation that left files as packed: some kernels may miss
      if (c.action == unpack::Action::restore && c.relocation.files_unparsed + c.relocation.pickle_files_unparsed != 0)
        out.warn(c.name + ": " + relocation_line(c));
    }
  } else {
    say_components(out, r);
  }
  if (purged) say_purge(out, *purged, false);
}

// The refusal (exit 3). Where this process only lacks the settings the cache was built with, one line names them with
// their values and the commands that set them, and --on-mismatch=force (every entry would miss) is not offered.
int refuse(const RestoreOptions& o, const Reporter& out, const manifest::Comparison& fit, const Machine& machine) {
  ojson body = {{"archive", o.archive.string()}, {"fingerprint", comparison_json(fit)}, {"machine", machine_json(machine)}};
  bool only_settings = false;
  std::vector<std::string> missing = manifest::missing_settings(fit, &only_settings);
  std::string settings = settings_clause(missing, o.archive.string());
  if (!out.json() && (!only_settings || o.verbose)) std::fputs(fit.to_table(true).c_str(), stderr);
  if (settings.empty()) {
    return refused(out, std::move(body),
                   "not restoring " + quoted_path(o.archive) + ": it does not fit this machine: " + fit.summary() +
                       " (nothing written; --on-mismatch=force restores anyway, --ignore FIELD accepts one field)");
  }
  body["missing_settings"] = missing;
  return refused(out, std::move(body),
                 "not restoring " + quoted_path(o.archive) + ": " + settings +
                     (only_settings ? "" : " (and more differs: the table above)") + " (nothing written)");
}

// After unpack::restore: the refusal (exit 3, the table of `check` on stderr), or the warnings and the report.
int finish(const RestoreOptions& o, const Reporter& out, const unpack::RestoreResult& r, const unpack::TrustReport& trust,
           const Machine& machine, const std::function<ojson()>& registry) {
  if (r.refused) return refuse(o, out, r.fit, machine);
  // After the restore: a manifest that fails validation (read by the restore unless it is a no-op) is refused
  // with its one error line and no warning before it.
  warn_differences(out, r.fit, r.fit.blocks() && !r.purging, machine, o);
  if (o.print_env) print_env(r.report);
  report(o, out, r.report, trust, {machine, r.fit, registry}, r.purging ? &r.report.purged : nullptr, r.depth,
         r.top_level_from_markers);
  return 0;
}

// What unpack::restore needs from the flags; the machine is probed (or read from --fingerprint) through the
// request's callback, kept in `machine` for the report.
unpack::RestoreRequest request(const RestoreOptions& o, const Reporter& out, std::optional<Machine>& machine) {
  unpack::RestoreRequest rq;
  rq.source = o.archive;
  rq.origin = fs::absolute(o.archive).string();  // restore oci:// names its reference instead (run_from_registry)
  rq.at_build_paths = o.at_build_paths;
  if (!o.at_build_paths) rq.dirs = resolve_cache_dirs(o.dirs);
  rq.machine = [&o, &machine](const std::vector<manifest::CacheDir>& dirs) {
    machine = target_machine(o.machine, o.python, dirs);
    return machine->fingerprint;
  };
  rq.on_machine = [&o, &out, &machine] {
    if (o.verbose) say_selected(out, *machine);  // the user's own choice: no action needed
  };
  rq.policy = mismatch_policy(o.on_mismatch);
  rq.ignored = o.ignored;
  rq.install.jobs = thread_budget().threads;
  rq.install.progress = out.progress();
  rq.install.durable = o.durable;
  rq.install.relocate = !o.no_relocate;
  rq.install.on_lock_wait = [&out](const fs::path& folder) { out.say(lock_wait_message(folder, "as long as it takes")); };
  return rq;
}

// `restore oci://REF`: the archive of REF that fits this machine best (registry/archive_stream.hpp), as the
// restore's stream source: it is chosen and its header fetched under the restore's folder locks, and its payload
// streams into staging while the restore runs.
int run_from_registry(const RestoreOptions& o, const Reporter& out, unpack::RestoreRequest& rq, std::optional<Machine>& machine) {
  if (o.at_build_paths) throw UsageError("--at-build-paths takes a local archive (pull it first with `ccpack pull`)");
  registry::oci::Reference ref = registry::oci::parse_reference(o.archive.string());
  rq.origin = std::string(registry::oci::kReferenceScheme) + ref.str();
  registry::ArchiveStream stream(
      ref, session_options(o.registry, false, ref), [&out](const std::string& line) { out.warn(line); }, out.progress());
  // force and purge judge a tag's single archive as they judge a file; an index offers only an archive that fits.
  bool single_may_differ = rq.policy != manifest::OnMismatch::refuse;
  std::string cosign_by;  // --require-cosign: the trusted key whose cosign signature passed
  rq.source = registry::restore_source(stream, single_may_differ, [&stream, &o, &ref, &cosign_by] {
    if (o.trust.require_cosign) cosign_by = require_cosign(stream.session(), stream.chosen(), ref, o.trust);
  });
  unpack::TrustReport trust;
  rq.gate = trust_gate(o.trust, out, trust, &cosign_by);
  rq.install.progress = false;  // one line on the terminal: the download's
  rq.trust = &trust;            // filled by the gate on the fetched header
  unpack::RestoreResult result = unpack::restore(rq);
  int rc = finish(o, out, result, trust, *machine, [&stream] { return stream.json(); });
  stream.finish_progress();
  return rc;
}

}  // namespace

int run_restore(RestoreOptions& o) {
  interrupt::install();  // SIGINT/SIGTERM: staging removed, "interrupted, nothing changed", exit 130/143
  Reporter out(o.common);
  require_file_or_reference(o.archive.string());
  check_ignored(o.ignored);
  check_selects(o.machine);
  (void)mismatch_policy(o.on_mismatch);  // a bad value is a usage error before anything is read
  resolve_extras(o.dirs, o.extras);
  if (o.at_build_paths && (o.dirs.inductor_dir || o.dirs.triton_dir || !o.extras.empty()))
    throw UsageError(
        "--at-build-paths restores where the archive was built: it does not take --inductor-dir, --triton-dir or --add");
  if (o.print_env && o.common.json) throw UsageError("--print-env and --json both write to standard output: choose one");
  std::optional<Machine> machine;
  unpack::RestoreRequest rq = request(o, out, machine);
  if (registry::oci::is_reference(o.archive.string())) return run_from_registry(o, out, rq, machine);
  unpack::TrustReport trust;
  rq.gate = trust_gate(o.trust, out, trust);
  rq.trust = &trust;  // filled by the gate before the restore writes a marker
  unpack::RestoreResult result = unpack::restore(rq);
  return finish(o, out, result, trust, *machine, {});
}

void add_restore_flags(CLI::App* r, RestoreOptions& o, bool for_run) {
  r->add_option("archive", o.archive, "The .ccpack archive, or oci://host[:port]/repository[:tag|@digest] in a registry")
      ->required();
  add_cache_dirs(r, o.dirs, o.extras, "restore into");
  r->add_flag("--durable", o.durable, "Flush the restored files to disk (one syncfs) before they are swapped into place");
  r->add_flag("--at-build-paths", o.at_build_paths,
              "Restore each component into the folder it was packed from on the build machine (exact warmth; see --print-env)");
  if (!for_run) {
    r->add_flag("--print-env", o.print_env,
                "Print `export TORCHINDUCTOR_CACHE_DIR=... TRITON_CACHE_DIR=...` lines for the folders restored, for eval "
                "(`ccpack env` also prints the settings the archive was built with)");
  }
  r->add_flag("--no-relocate", o.no_relocate,
              "Restore every file as packed: Triton's __grp__*.json files and Inductor's pickled FX-graph and AOTAutograd "
              "entries then name the build machine's folders");
  add_trust_options(r, o.trust);
  add_cosign_option(r, o.trust);
  add_python_option(r, o.python);
  add_ignore_option(r, o.ignored);
  r->add_option("--on-mismatch", o.on_mismatch,
                "When the fingerprint makes a component stale or refused: 'refuse' (default: write nothing, exit 3) or "
                "'force' (restore anyway, warn) or 'purge' (restore what fits, remove what is stale here; see `ccpack purge`); "
                "default $CCPACK_ON_MISMATCH, else refuse");
  add_machine_options(r, o.machine);
  add_registry_options(r, o.registry);
  r->add_flag("-v,--verbose", o.verbose,
              "Also print what needs no action: each component on its line, relocation, each --select, and the GPU fields "
              "this machine does not show when --select named gpu.arch (the default is one line)");
  add_common(r, o.common, !for_run);
}

void add_restore(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<RestoreOptions>();
  CLI::App* r = app.add_subcommand("restore", "Check an archive and restore it into this machine's cache folders");
  add_restore_flags(r, *o, false);
  r->footer(
      "The archive's fingerprint is checked against this machine's first, on every run (see `ccpack check`). Each "
      "target folder is replaced as a whole: the archive is extracted into a hidden staging folder beside it, every "
      "byte is checked, and the staging folders are swapped in together; if one swap fails, those already swapped are "
      "swapped back. Running it again with the same archive does nothing. The archive must carry a signature that "
      "verifies with a trusted key (--trust, $CCPACK_TRUSTED_KEYS, else /etc/ccpack/trusted.d and "
      "~/.config/ccpack/trusted.d), checked before anything is written; --allow-unsigned turns that off, loudly.");
  commands.push_back({r, &o->common, [o] { return run_restore(*o); }});
}

}  // namespace ccpack::cli
