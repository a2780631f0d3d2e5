// `ccpack check ARCHIVE`: the archive's fingerprint against this machine's, field by field, with the verdict per
// component. Exit 0 when everything matches or only warns, 3 when any component is stale or refused (what
// `restore` would refuse). Nothing is written.
//
// ARCHIVE may be oci://REF: the archive a restore of REF would choose for this machine (registry/remote_archive.hpp:
// the tag's index or manifest, then the header frame alone, checked against its layer and annotations; no payload
// byte is fetched). An index that holds nothing for this machine exits 3 listing what it holds, as restore does.
//
// It also looks at the local set-up the way hand-written checklists do (notes only, the exit code does not change):
// a cache folder on tmpfs (gone at the next restart), a cache folder this user cannot write (torch then compiles
// into nothing), and a TORCHINDUCTOR_CK_DIR that does not exist.
#include <linux/magic.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <future>
#include <optional>

#include "cli/cache_dirs.hpp"
#include "cli/card.hpp"
#include "cli/comparison.hpp"
#include "cli/fingerprint_options.hpp"
#include "cli/machine.hpp"
#include "cli/pod_settings.hpp"
#include "cli/registry_options.hpp"
#include "manifest/tuning_advice.hpp"
#include "registry/remote_archive.hpp"
#include "registry/session.hpp"
#include "util/fs.hpp"

namespace ccpack::cli {
namespace fs = std::filesystem;

namespace {

struct CheckOptions {
  CommonOptions common;
  fs::path archive;
  std::string python;
  std::vector<std::string> ignored;
  CacheDirOptions dirs;
  std::vector<std::string> extras;
  MachineOptions machine;
  RegistryOptions registry;
};

// What check judges of an archive: its signed fingerprint and the components it holds.
struct CheckedArchive {
  manifest::Fingerprint fingerprint;
  std::vector<manifest::ComponentRef> components;
  std::string settled, merged;  // what it covers beyond its create (settle_text, merge_text)
  bool merged_or_delta = false;
};

CheckedArchive checked_archive(const manifest::Manifest& m) {
  CheckedArchive j{m.fingerprint, {}, settle_text(m), merge_text(m), m.merge || m.delta};
  for (const manifest::Component& c : m.components) j.components.push_back({c.name, c.kind});
  return j;
}

// oci://REF: the archive a restore would choose here, read up to its header frame.
CheckedArchive checked_remote(const CheckOptions& o, const Reporter& out, const manifest::Fingerprint& local) {
  registry::oci::Reference ref = registry::oci::parse_reference(o.archive.string());
  registry::Session session(ref, session_options(o.registry, false, ref));
  session.on_fallback = [&out](const std::string& line) { out.warn(line); };
  registry::RemoteArchive remote = registry::select_remote(session, local, true);
  return checked_archive(registry::fetch_header(session, remote, {}).manifest);
}

// The nearest folder that exists at or above `p`.
fs::path existing_folder(fs::path p) {
  std::error_code ec;
  while (!p.empty() && !fs::is_directory(p, ec) && p != p.parent_path()) p = p.parent_path();
  return p;
}

std::vector<std::string> setup_notes(const std::vector<manifest::CacheDir>& dirs) {
  std::vector<std::string> notes;
  for (const manifest::CacheDir& d : dirs) {
    fs::path at = existing_folder(d.dir);
    struct statfs sf {};
    if (!at.empty() && ::statfs(at.c_str(), &sf) == 0 && sf.f_type == TMPFS_MAGIC) {
      notes.push_back(d.name + " cache folder " + quoted_path(d.dir) + " is on tmpfs: it is gone after a restart");
    }
    if (!at.empty() && ::access(at.c_str(), W_OK | X_OK) != 0) {
      notes.push_back(d.name + " cache folder " + quoted_path(d.dir) + " is not writable here (" + quoted_path(at) + ")");
    }
  }
  if (const char* ck = std::getenv("TORCHINDUCTOR_CK_DIR"); ck && *ck && !fs::is_directory(ck)) {
    notes.push_back("TORCHINDUCTOR_CK_DIR " + quoted_path(ck) + " does not exist");
  }
  return notes;
}

int run(CheckOptions& o) {
  Reporter out(o.common);
  require_file_or_reference(o.archive.string());
  check_ignored(o.ignored);
  check_selects(o.machine);
  resolve_extras(o.dirs, o.extras);
  std::vector<manifest::CacheDir> dirs = resolve_cache_dirs(o.dirs);
  std::future<Machine> probing = std::async(std::launch::async, [&] { return target_machine(o.machine, o.python, dirs); });
  bool remote = registry::oci::is_reference(o.archive.string());
  std::optional<CheckedArchive> archive;
  if (!remote) archive = checked_archive(unpack::Archive::open(o.archive).manifest);  // while the probe runs
  Machine machine = probing.get();
  say_selected(out, machine);
  const manifest::Fingerprint& local = machine.fingerprint;
  if (remote) archive = checked_remote(o, out, local);
  const manifest::Fingerprint& archive_fp = archive->fingerprint;
  manifest::Comparison c = manifest::compare(archive_fp, local, archive->components, o.ignored);

  std::vector<std::string> notes = setup_notes(dirs);
  std::vector<manifest::TuningAdvice> advice = manifest::tuning_advice(archive_fp);
  ojson advice_json = ojson::array();
  for (const manifest::TuningAdvice& t : advice) advice_json.push_back({{"setting", t.setting}, {"why", t.why}});
  ojson body{{"archive", o.archive.string()}, {"fingerprint", comparison_json(c)},       {"machine", machine_json(machine)},
             {"setup_notes", notes},          {"tuning_advice", std::move(advice_json)}, {"settled", archive->settled},
             {"merged", archive->merged}};
  if (!out.json()) {
    std::fputs(c.to_table(true).c_str(), stdout);
    // What the archive covers beyond its create: said for a merged archive or a delta only (plain output unchanged).
    if (archive->merged_or_delta) std::printf("settled: %s\nmerged: %s\n", archive->settled.c_str(), archive->merged.c_str());
    for (const manifest::TuningAdvice& t : advice) {
      std::printf("tuning: the warm-up ran without %s: %s (set it for the warm-up and the pods; docs/TUNING.md)\n",
                  t.setting.c_str(), t.why.c_str());
    }
  }
  for (const std::string& n : notes) out.warn(n);
  if (c.blocks()) {
    std::string settings = settings_clause(manifest::missing_settings(c), o.archive.string());
    return refused(out, std::move(body),
                   "archive " + quoted_path(o.archive) + " does not fit this machine: " + c.summary() +
                       (settings.empty() ? "" : "; " + settings));
  }
  out.report(std::move(body));
  out.say(c.worst() == manifest::Verdict::match ? "the archive fits this machine"
                                                : "the archive fits this machine, with warnings: " + c.summary());
  return 0;
}

}  // namespace

void add_check(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<CheckOptions>();
  CLI::App* c = app.add_subcommand("check", "Compare an archive's fingerprint with this machine's, field by field");
  c->add_option("archive", o->archive,
                "The .ccpack archive, or oci://host[:port]/repository[:tag|@digest]: the archive a restore of it would "
                "choose here (only its header is fetched)")
      ->required();
  add_python_option(c, o->python);
  add_ignore_option(c, o->ignored);
  add_cache_dirs(c, o->dirs, o->extras, "compare with");
  add_machine_options(c, o->machine);
  add_registry_options(c, o->registry);
  add_common(c, o->common);
  c->footer(
      "Verdicts per component: match; warn (still works); stale (can never hit here); refuse (loading risks a crash). "
      "Exit 0 when nothing is stale or refused, 3 otherwise. See docs/FINGERPRINT.md.");
  commands.push_back({c, &o->common, [o] { return run(*o); }});
}

}  // namespace ccpack::cli
