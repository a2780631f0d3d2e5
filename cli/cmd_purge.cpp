// `ccpack purge`: remove the artifacts of this machine's cache folders that can no longer hit here (the rules are
// in unpack/purge_rules.hpp, the walk and removal in unpack/purge.hpp, the reasoning in docs/PURGE.md). It needs no
// archive: the local fingerprint is probed, and each folder, kernel and library is judged against it, under the
// lock restore takes (unpack/folder_lock.hpp), waited for up to --lock-timeout. Exit 0 (1: an entry could not be
// removed, or the lock was not had in time).
#include <chrono>

#include "cli/cache_dirs.hpp"
#include "cli/fingerprint_options.hpp"
#include "cli/purge_report.hpp"
#include "probe/probe.hpp"
#include "util/escape.hpp"
#include "util/fs.hpp"

namespace ccpack::cli {
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
  manifest::Fingerprint local = probe::probe_local(o.python, dirs);
  unpack::PurgeOptions po{o.dry_run, {}};
  po.lock.timeout = std::chrono::seconds(o.lock_timeout_s);
  po.lock.on_wait = [&](const fs::path& folder) {
    if (o.lock_timeout_s > 0)
      out.say(lock_wait_message(folder, "up to " + std::to_string(o.lock_timeout_s) + " s, --lock-timeout"));
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

}  // namespace ccpack::cli
