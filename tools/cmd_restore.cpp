// `ccpack restore`: check an archive and put its components into this machine's cache folders.
//
// The archive's fingerprint is compared with this machine's before anything is written, and again on every run:
// folders that already carry this archive's marker are not proof that it still fits (a persistent volume outlives
// an image upgrade). --on-mismatch says what a stale or refused component does: refuse (default; nothing is
// written, exit 3, the table of `check` on stderr) or force (restore anyway, one warning per differing field);
// purge is reserved for the next issue.
#include <cstdio>
#include <cstdlib>
#include <future>

#include "tools/comparison.hpp"
#include "unpack/archive.hpp"
#include "unpack/installer.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace ccpack::tools {
namespace fs = std::filesystem;

namespace {

struct RestoreOptions {
  CommonOptions common;
  fs::path archive;
  manifest::CacheDirOptions dirs;
  std::vector<std::string> extras;
  bool durable = false;
  std::string python;
  std::vector<std::string> ignored;
  std::string on_mismatch;  // empty: $CCPACK_ON_MISMATCH, else refuse
};

std::string status_name(const unpack::ComponentOutcome& c) {
  switch (c.status) {
    case unpack::ComponentOutcome::Status::restored:
      return "restored";
    case unpack::ComponentOutcome::Status::already:
      return "already restored";
    case unpack::ComponentOutcome::Status::skipped:
      return "skipped";
  }
  return "?";
}

manifest::OnMismatch mismatch_policy(const std::string& flag) {
  manifest::OnMismatch p = manifest::OnMismatch::refuse;
  if (!flag.empty()) {
    p = manifest::parse_on_mismatch(flag, "--on-mismatch");
  } else if (const char* env = std::getenv("CCPACK_ON_MISMATCH"); env && *env) {
    p = manifest::parse_on_mismatch(env, "CCPACK_ON_MISMATCH");
  }
  if (p == manifest::OnMismatch::purge) throw UsageError("--on-mismatch=purge is not available yet in this ccpack: use refuse or force");
  return p;
}

// The comparison for the components this restore would write (those with a folder).
manifest::Comparison compare_for_restore(const RestoreOptions& o, const unpack::Archive& a, const std::vector<manifest::CacheDir>& dirs,
                                         const manifest::Fingerprint& local) {
  std::vector<manifest::ComponentRef> comps;
  for (const manifest::Component& c : a.manifest.components) {
    for (const manifest::CacheDir& d : dirs) {
      if (d.name == c.name) comps.push_back({c.name, c.kind});
    }
  }
  return manifest::compare(archive_fingerprint(a), local, comps, o.ignored);
}

// One warning per field that differs (all of them still restored: only warnings, or --on-mismatch=force).
void warn_differences(const Reporter& out, const manifest::Comparison& c, bool forced) {
  if (!c.archive_recorded) {
    out.warn("the archive records no fingerprint (made before fingerprints): restored without a check");
    return;
  }
  auto shown = [](const std::optional<std::string>& v, const std::string& note) {
    return v ? "'" + manifest::printable(*v, 80) + "'" : manifest::printable(note, 80);
  };
  for (const manifest::ComparisonRow& row : c.rows) {
    std::string verdicts;
    for (std::size_t i = 0; i < c.components.size(); ++i) {
      if (row.verdicts[i] == manifest::Verdict::match) continue;
      verdicts += (verdicts.empty() ? "" : ", ") + c.components[i].name + " " + std::string(manifest::to_string(row.verdicts[i]));
    }
    if (verdicts.empty()) continue;
    out.warn("fingerprint field " + row.field + " differs (archive " + shown(row.archive, row.archive_note) + ", here " +
             shown(row.local, row.local_note) + "): " + verdicts + (forced ? ", restored anyway (--on-mismatch=force)" : "") +
             ": " + row.why);
  }
}

int run(RestoreOptions& o) {
  Reporter out(o.common);
  check_ignored(o.ignored);
  manifest::OnMismatch policy = mismatch_policy(o.on_mismatch);
  resolve_extras(o.dirs, o.extras);
  std::vector<manifest::CacheDir> dirs = manifest::resolve_cache_dirs(o.dirs);
  // The probe (mostly waiting for Python) runs while the archive's header and manifest are read and checked.
  std::future<manifest::Fingerprint> probing = std::async(std::launch::async, [&] { return probe_local(o.python, dirs); });
  unpack::Archive a = unpack::Archive::open(o.archive);
  manifest::Comparison fit = compare_for_restore(o, a, dirs, probing.get());
  if (fit.blocks() && policy == manifest::OnMismatch::refuse) {
    if (!out.json()) std::fputs(fit.to_table(true).c_str(), stderr);
    return refused(out, {{"archive", o.archive.string()}, {"fingerprint", comparison_json(fit)}},
                   "not restoring " + quoted_path(o.archive) + ": it does not fit this machine: " + fit.summary() +
                       " (nothing written; --on-mismatch=force restores anyway, --ignore FIELD accepts one field)");
  }
  warn_differences(out, fit, fit.blocks());

  unpack::RestoreReport r = unpack::restore(a, dirs, unpack::RestoreOptions{o.common.jobs, out.progress(), o.durable});
  if (out.json()) {
    ojson comps = ojson::array();
    for (const auto& c : r.components) {
      comps.push_back({{"name", c.name},
                       {"dir", c.dir.string()},
                       {"status", status_name(c)},
                       {"reason", c.reason},
                       {"files", c.files},
                       {"bytes", c.bytes}});
    }
    out.report({{"archive", o.archive.string()}, {"noop", r.noop()}, {"components", comps}, {"fingerprint", comparison_json(fit)}});
    return 0;
  }
  for (const auto& c : r.components) {
    std::string line = c.name + ": " + status_name(c);
    if (!c.dir.empty()) line += " " + quoted_path(c.dir);
    if (c.status == unpack::ComponentOutcome::Status::restored) line += " (" + std::to_string(c.files) + " files, " + mb(c.bytes) + ")";
    if (!c.reason.empty()) line += ": " + c.reason;
    out.say(line);
  }
  return 0;
}

}  // namespace

void add_restore(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<RestoreOptions>();
  CLI::App* r = app.add_subcommand("restore", "Check an archive and restore it into this machine's cache folders");
  r->add_option("archive", o->archive, "The .ccpack archive")->required();
  add_cache_dirs(r, o->dirs, o->extras, "restore into");
  r->add_flag("--durable", o->durable, "Flush the restored files to disk (one syncfs) before they are swapped into place");
  add_python_option(r, o->python);
  add_ignore_option(r, o->ignored);
  r->add_option("--on-mismatch", o->on_mismatch,
                "When the fingerprint makes a component stale or refused: 'refuse' (default: write nothing, exit 3) or "
                "'force' (restore anyway, warn); default $CCPACK_ON_MISMATCH, else refuse ('purge' is reserved)");
  add_common(r, o->common);
  r->footer(
      "The archive's fingerprint is checked against this machine's first, on every run (see `ccpack check`). Each "
      "target folder is replaced as a whole: the archive is extracted into a hidden staging folder beside it, every "
      "byte is checked, and the staging folders are swapped in together; if one swap fails, those already swapped are "
      "swapped back. Running it again with the same archive does nothing.");
  commands.push_back({r, &o->common, [o] { return run(*o); }});
}

}  // namespace ccpack::tools
