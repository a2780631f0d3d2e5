// `ccpack create`: pack the cache folders found from the environment (or flags) into one archive.
#include <sys/stat.h>

#include "cli/cache_dirs.hpp"
#include "cli/cli.hpp"
#include "cli/create_settle.hpp"
#include "cli/fingerprint_options.hpp"
#include "cli/trust_options.hpp"
#include "manifest/tuning_advice.hpp"
#include "pack/create.hpp"
#include "pack/since_restore.hpp"
#include "probe/probe.hpp"
#include "settle/report.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace ccpack::cli {
namespace fs = std::filesystem;

namespace {

struct CreateOptions {
  CommonOptions common;
  fs::path output;
  CacheDirOptions dirs;
  std::vector<std::string> extras;
  std::string level = "default";
  SigningOptions signing;
  std::string python;
  SettleOptions settle;
  bool since_restore = false;
};

struct Level {
  int level;
  int window_log;
};

Level parse_level(const std::string& text) {
  if (text == "default") return {1, manifest::kMaxWindowLog};
  if (text == "max") return {19, manifest::kMaxWindowLog};
  try {
    std::size_t used = 0;
    int n = std::stoi(text, &used);
    if (used == text.size() && n >= 1 && n <= 19) return {n, manifest::kMaxWindowLog};
  } catch (const std::exception&) {
  }
  throw UsageError("--level must be 'default', 'max' or a zstd level 1-19, got '" + text + "'");
}

bool path_exists(const fs::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

// The folders to pack, of those resolved: every one named by a flag or variable must exist; absent defaults are
// left out and noted.
std::vector<manifest::CacheDir> folders_to_pack(const std::vector<manifest::CacheDir>& resolved,
                                                std::vector<std::string>& looked) {
  std::vector<manifest::CacheDir> dirs;
  for (const manifest::CacheDir& d : resolved) {
    if (d.origin == "default" && !path_exists(d.dir)) {
      looked.push_back(d.name + " " + quoted_path(d.dir));
      continue;
    }
    dirs.push_back(d);
  }
  if (dirs.empty()) {
    std::string where;
    for (const std::string& l : looked) where += (where.empty() ? "" : ", ") + l;
    throw Error("no cache folder found (looked at " + where + "); set " + folder_variable(manifest::ComponentKind::inductor) +
                " / " + folder_variable(manifest::ComponentKind::triton) + " or pass --inductor-dir / --triton-dir");
  }
  for (const manifest::CacheDir& d : dirs) {
    if (!path_exists(d.dir))
      throw Error(d.name + " cache folder " + quoted_path(d.dir) + " (from " + d.origin + ") does not exist");
  }
  return dirs;
}

// --settle: the warm-up and the settle runs (create_settle.hpp), before anything is packed; nullopt without it.
std::optional<settle::SettleOutcome> settle_first(const CreateOptions& o, const std::vector<manifest::CacheDir>& resolved,
                                                  std::vector<std::string>& looked) {
  check_settle_options(o.settle, o.dirs);
  return settle_if_asked(
      o.settle, resolved, [&resolved, &looked] { return folders_to_pack(resolved, looked); }, o.output,
      [&o, &resolved] { return probe::probe_local(o.python, resolved); }, o.common, o.python);
}

// create's --json report.
void report_json(Reporter& out, const CreateOptions& o, const pack::CreateResult& created,
                 const std::optional<manifest::PrivateKey>& key, const settle::SettleOutcome* settled, const ojson& delta) {
  const pack::PackResult& r = created.packed;
  const manifest::ComponentTotals total = manifest::totals(r.manifest.components);
  ojson comps = ojson::array();
  for (const manifest::Component& c : r.manifest.components)
    comps.push_back({{"name", c.name}, {"source", c.source}, {"files", c.files}, {"bytes", c.bytes}});
  out.report({{"archive", o.output.string()},
              {"archive_bytes", r.archive_size},
              {"files", total.files},
              {"bytes", total.bytes},
              {"frames", r.manifest.frames.size()},
              {"components", comps},
              {"skipped", r.skipped},
              {"signed_by", key ? ojson(key->key_id()) : ojson(nullptr)},
              {"fingerprint_warnings", created.fingerprint_warnings},
              {"threads", thread_budget().threads},
              {"threads_from", thread_budget().from},
              {"settle", settle::outcome_json(settled)},
              {"delta", delta}});
}

// --since-restore's part of the report: the base, and what a delta leaves out (null for a whole cache).
ojson delta_json(const std::optional<pack::SinceRestoreResult>& delta) {
  if (!delta) return nullptr;
  return {{"base_manifest_sha256", delta->base_manifest_sha256},
          {"base_entries_left_out", delta->base_entries},
          {"note", "only files and symlinks added since the restore; files of the base changed in place are not in a delta"}};
}

// The create itself: a whole cache, or with --since-restore what the folders gained since their restore.
pack::CreateResult create_or_delta(const CreateOptions& o, const pack::CreateRequest& rq,
                                   std::optional<pack::SinceRestoreResult>& delta) {
  if (!o.since_restore) return pack::create(rq);
  delta = pack::create_since_restore(rq);
  return delta->created;
}

// A plain create of a cache warmed without the tuned settings: its pods will not settle; one line says how to fix it.
void warn_untuned(const Reporter& out, const manifest::Fingerprint& fp) {
  std::vector<manifest::TuningAdvice> advice = manifest::tuning_advice(fp);
  if (advice.empty()) return;
  std::string missing;
  for (const manifest::TuningAdvice& a : advice) missing += (missing.empty() ? "" : ", ") + a.setting;
  out.warn("this cache was warmed without " + missing +
           ": pods restoring it will compile and tune again; warm up with "
           "`ccpack create -o OUT --settle -- CMD ARGS...`, which sets them (docs/TUNING.md)");
}

// The terminal report: the folders not found, the transient entries left out, a delta's base, and what was packed.
void say_created(const Reporter& out, const CreateOptions& o, const pack::PackResult& r, const std::vector<std::string>& looked,
                 const std::optional<pack::SinceRestoreResult>& delta, const std::optional<manifest::PrivateKey>& key) {
  const manifest::ComponentTotals total = manifest::totals(r.manifest.components);
  for (const std::string& l : looked) out.say("note: no " + l + " folder, not packed");
  if (!r.skipped.empty()) {
    std::string list;
    for (std::size_t i = 0; i < r.skipped.size() && i < 5; ++i) list += (i ? ", " : "") + r.skipped[i];
    if (r.skipped.size() > 5) list += ", ...";
    out.say("skipped " + std::to_string(r.skipped.size()) + " transient entries: " + list);
  }
  std::string from;
  for (const manifest::Component& c : r.manifest.components)
    from += (from.empty() ? "" : ", ") + c.name + " " + quoted_path(c.source);
  if (delta) {
    out.say("delta of archive " + delta->base_manifest_sha256.substr(0, 12) + ": " + std::to_string(delta->base_entries) +
            " entries of the base left out (a changed file of the base is not in a delta)");
  }
  out.say("packed " + std::to_string(total.files) + " files (" + mb(total.bytes) + ") from " + from + " into " +
          quoted_path(o.output) + " (" + mb(r.archive_size) + ")" + (key ? ", signed with key " + key->key_id() : ", unsigned"));
}

int run(CreateOptions& o) {
  Reporter out(o.common);
  resolve_extras(o.dirs, o.extras);
  Level level = parse_level(o.level);
  // The key is read first: a missing or exposed key is reported before any packing work.
  std::optional<manifest::PrivateKey> key = load_signing_key(o.signing, false);
  std::vector<manifest::CacheDir> resolved = resolve_cache_dirs(o.dirs);  // once: packed, and probed for
  std::vector<std::string> looked;
  std::optional<settle::SettleOutcome> settled = settle_first(o, resolved, looked);
  pack::CreateRequest rq;
  rq.dirs = settled ? settled->settled : folders_to_pack(resolved, looked);
  rq.output = o.output;
  rq.machine = [&] { return settled ? settled->fingerprint : probe::probe_local(o.python, resolved); };
  if (settled) {
    rq.write = [&settled](const std::vector<manifest::CacheDir>&, const fs::path& output, const pack::PackOptions& po) {
      return settle::pack_settled(*settled, output, po);
    };
  }
  rq.pack.level = level.level;
  rq.pack.window_log = level.window_log;
  rq.pack.jobs = thread_budget().threads;
  rq.pack.progress = out.progress();
  rq.pack.sign = manifest_signer(key, o.signing);
  std::optional<pack::SinceRestoreResult> delta;
  pack::CreateResult created = create_or_delta(o, rq, delta);
  for (const std::string& w : created.fingerprint_warnings) out.warn(w);
  if (!settled && !o.since_restore) warn_untuned(out, created.packed.manifest.fingerprint);
  if (out.json()) {
    report_json(out, o, created, key, settled ? &*settled : nullptr, delta_json(delta));
  } else {
    say_created(out, o, created.packed, looked, delta, key);
  }
  return 0;
}

}  // namespace

void add_create(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<CreateOptions>();
  CLI::App* c = app.add_subcommand("create", "Pack the cache folders into a .ccpack archive (after a warm-up run)");
  c->add_option("-o,--output", o->output, "Archive to write; it appears atomically when complete")->required();
  add_cache_dirs(c, o->dirs, o->extras, "pack");
  c->add_option("--level", o->level,
                "Compression: 'default' (fast, zstd 1 + 128 MiB long-range window), 'max' (zstd 19, "
                "for publication) or a zstd level 1-19")
      ->default_str("default");
  add_signing_options(c, o->signing, false);
  add_python_option(c, o->python);
  add_settle_options(c, o->settle);
  c->add_flag("--since-restore", o->since_restore,
              "Pack only what the folders gained since `ccpack restore` filled them (a delta for `ccpack merge`): the files "
              "and symlinks the restore's entry list does not hold, with the base archive's digest and this pod's "
              "fingerprint; a folder ccpack did not restore exits 5")
      ->excludes("--settle");
  add_common(c, o->common);
  c->footer(
      "With --settle, every word after `--` is the warm-up command's: `ccpack create -o m.ccpack --settle -- python serve.py --warmup-only`.");
  commands.push_back({c, &o->common, [o] { return run(*o); }, &o->settle.command});
}

}  // namespace ccpack::cli
