// `ccpack purge`: remove the artifacts of this machine's cache folders that can no longer hit here (the rules are
// in unpack/purge_rules.hpp, the walk and removal in unpack/purge.hpp, the reasoning in docs/PURGE.md). It needs no
// archive: the local fingerprint is probed, and each folder, kernel and library is judged against it, under the
// lock restore takes (unpack/folder_lock.hpp), waited for up to --lock-timeout. Exit 0 (1: an entry could not be
// removed, or the lock was not had in time).
#include <chrono>

#include "tools/cache_dirs.hpp"
#include "tools/purge_report.hpp"
#include "tools/comparison.hpp"
#include "util/escape.hpp"
#include "util/fs.hpp"

namespace ccpack::tools {
namespace fs = std::filesystem;

namespace {

// How long a purge waits for a restore (or another purge) of the same folders to finish: longer than a restore of
// a large cache takes, short enough that a stuck holder fails the entrypoint visibly.
constexpr unsigned kDefaultLockTimeoutS = 300;

struct PurgeOptions {
  CommonOptions common;
  CacheDirOptions dirs;
  std::vector<std::string> extras;
  std::string python;
  bool dry_run = false;
  unsigned lock_timeout_s = kDefaultLockTimeoutS;
};

int run(PurgeOptions& o) {
  Reporter out(o.common);
  resolve_extras(o.dirs, o.extras);
  std::vector<manifest::CacheDir> dirs = resolve_cache_dirs(o.dirs);
  manifest::Fingerprint local = probe_local(o.python, dirs);
  unpack::PurgeOptions po{o.dry_run, {}};
  po.lock.timeout = std::chrono::seconds(o.lock_timeout_s);
  po.lock.on_wait = [&](const fs::path& folder) {
    if (o.lock_timeout_s > 0) out.say(lock_wait_message(folder, "up to " + std::to_string(o.lock_timeout_s) + " s, --lock-timeout"));
  };
  unpack::PurgeReport r = unpack::purge(dirs, local, po);
  if (out.json()) {
    ojson folders = ojson::array();
    for (const manifest::CacheDir& d : dirs) folders.push_back({{"name", d.name}, {"dir", d.dir.string()}, {"origin", d.origin}});
    ojson body = purge_json(r);
    body["dry_run"] = o.dry_run;
    body["folders"] = folders;
    out.report(std::move(body));
    return 0;
  }
  for (const manifest::CacheDir& d : dirs) out.say("looked at " + d.name + " " + quoted_path(d.dir) + " (" + d.origin + ")");
  say_purge(out, r, o.dry_run);
  return 0;
}

}  // namespace

ojson purge_json(const unpack::PurgeReport& r) {
  ojson removed = ojson::array();
  std::uint64_t files = 0;
  std::uint64_t bytes = 0;
  for (const unpack::PurgedEntry& e : r.removed) {
    removed.push_back({{"component", e.component},
                       {"path", e.path.string()},
                       {"rule", unpack::to_string(e.rule)},
                       {"reason", e.reason},
                       {"folder", e.folder},
                       {"files", e.files},
                       {"bytes", e.bytes}});
    files += e.files;
    bytes += e.bytes;
  }
  ojson unjudged = ojson::array();
  for (const unpack::UnjudgedEntry& u : r.unjudged_examples) unjudged.push_back({{"path", u.path.string()}, {"reason", u.reason}});
  return {{"removed", removed},          {"removed_files", files},  {"removed_bytes", bytes},          {"kept_files", r.kept_files},
          {"unjudged", r.unjudged}, {"unjudged_examples", unjudged}, {"truncated", r.truncated}};
}

void say_purge(const Reporter& out, const unpack::PurgeReport& r, bool dry_run) {
  std::uint64_t files = 0;
  std::uint64_t bytes = 0;
  for (const unpack::PurgedEntry& e : r.removed) {
    out.say(std::string(dry_run ? "would remove " : "removed ") + quoted_path(e.path) + " [" + unpack::to_string(e.rule) + "]: " + e.reason);
    files += e.files;
    bytes += e.bytes;
  }
  out.say(std::string(dry_run ? "would remove " : "removed ") + std::to_string(r.removed.size()) + " entries (" + std::to_string(files) +
          " files, " + mb(bytes) + "); kept " + std::to_string(r.kept_files) + " files; " + std::to_string(r.unjudged) +
          " entries could not be judged and were kept" + (dry_run ? " (dry run: nothing removed)" : ""));
  for (const unpack::UnjudgedEntry& u : r.unjudged_examples) out.say("  kept, not judged: " + quoted_path(u.path) + ": " + u.reason);
  if (r.truncated) out.warn("stopped after " + std::to_string(unpack::kMaxPurgeEntries) + " entries: the rest was not looked at");
}

std::string lock_wait_message(const fs::path& folder, const std::string& how_long) {
  return "waiting for the lock of " + quoted_path(folder) + ": another ccpack restore or purge of its cache folders holds it (" +
         how_long + ")";
}

void add_purge(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<PurgeOptions>();
  CLI::App* p = app.add_subcommand("purge", "Remove cache artifacts that can no longer be used on this machine");
  add_cache_dirs(p, o->dirs, o->extras, "purge");
  add_python_option(p, o->python);
  p->add_flag("--dry-run", o->dry_run, "Say what would be removed and why; remove nothing");
  p->add_option("--lock-timeout", o->lock_timeout_s,
                "Seconds to wait while a restore or another purge of the same folders runs, then fail with exit 1 "
                "(default 300; 0: fail at once)")
      ->check(CLI::Range(0u, 86400u));
  add_common(p, o->common);
  p->footer(
      "Removed, each entry on its own and atomically: a folder restored by ccpack whose marker's fingerprint is stale "
      "here; Triton kernel folders built for another GPU arch, warp size or Triton version; compiled .so files whose "
      "needed libraries no longer resolve, or resolve only from another CUDA major's wheel; lock files, tmp.pid_* "
      "folders and ccpack staging folders. What cannot be judged is kept and counted. It holds the lock restore takes "
      "(the parent folder of each cache folder) for the whole run. See docs/PURGE.md.");
  commands.push_back({p, &o->common, [o] { return run(*o); }});
}

}  // namespace ccpack::tools
