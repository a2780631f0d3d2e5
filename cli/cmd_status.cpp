// `ccpack status`: for each cache folder (the folders restore writes: flags, variables, defaults), which archive
// restored it (the marker: manifest digest, signer, time), whether that archive still fits this machine (the
// comparison of `check`, on the fingerprint the marker records), and what the pod compiled there since: the files
// the archive did not contain (unpack/status.hpp), grouped. What the pod compiled itself is what missed.
//
// Exit 0 whether or not anything was compiled, unless --max-compiled N: then exit 7 (ExitCode::over_compiled) when
// more than N Triton kernels were compiled since the restore, all folders together; exit 5 (ExitCode::not_restored) when a folder
// was not restored by ccpack: it holds no marker, or it was named (flag or variable) and does not exist. A default location that
// does not exist is only noted, as `create` does. Nothing is hashed unless --verify; nothing is written.
#include <cstdio>
#include <future>

#include "cli/cache_dirs.hpp"
#include "cli/comparison.hpp"
#include "cli/fingerprint_options.hpp"
#include "probe/probe.hpp"
#include "unpack/status.hpp"
#include "util/escape.hpp"
#include "util/fs.hpp"

namespace ccpack::cli {
namespace fs = std::filesystem;

namespace {

// Names shown in a line of the terminal report before "and N more": --json lists all.
constexpr std::size_t kShownNames = 10;

struct StatusCommandOptions {
  CommonOptions common;
  CacheDirOptions dirs;
  std::vector<std::string> extras;
  std::string python;
  std::vector<std::string> ignored;
  bool verify = false;
  std::optional<std::string> max_compiled;  // the smoke-test gate as given: exit 7 past this many Triton kernels
};

struct Folder {
  unpack::FolderStatus status;
  std::optional<manifest::Comparison> fit;  // restored folders whose marker records a readable fingerprint
  std::string fit_error;                    // why there is no fit
};

// A folder that counts as "not restored by ccpack" (exit 5): no marker, or named and missing.
bool not_restored(const unpack::FolderStatus& s) {
  return s.state == unpack::FolderState::not_restored || (s.state == unpack::FolderState::absent && s.dir.origin != "default");
}

std::optional<manifest::Comparison> fit_of(const unpack::FolderStatus& s, const manifest::Fingerprint& local,
                                           const std::vector<std::string>& ignored, std::string& error) {
  if (!s.marker) return std::nullopt;
  if (!s.marker->fingerprint_error.empty()) {
    error = "the marker's fingerprint cannot be read: " + s.marker->fingerprint_error;
    return std::nullopt;
  }
  return manifest::compare(s.marker->fingerprint, local, {{s.marker->component, s.dir.kind}}, ignored);
}

// "a, b, c and 7 more (--json lists all)"
std::string names(const std::vector<std::string>& all) {
  std::string out;
  for (std::size_t i = 0; i < all.size() && i < kShownNames; ++i) out += (out.empty() ? "" : ", ") + escaped(all[i], 200);
  if (all.size() > kShownNames) out += " and " + std::to_string(all.size() - kShownNames) + " more (--json lists all)";
  return out;
}

std::string count(std::size_t n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); }

ojson added_json(const unpack::FolderStatus& s) {
  ojson kernels = ojson::array();
  for (const unpack::AddedKernel& k : s.kernels) kernels.push_back({{"name", k.name}, {"folder", k.folder}});
  return {{"fx_graphs", s.fx_graphs}, {"triton_kernels", kernels}, {"autotune", s.autotune}, {"other", s.other}};
}

ojson folder_json(const Folder& f) {
  const unpack::FolderStatus& s = f.status;
  ojson archive = nullptr;
  if (s.marker) {
    const manifest::Marker& m = *s.marker;
    archive = {{"manifest_sha256", m.archive_manifest_sha256},
               {"component", m.component},
               {"signed_by", m.signed_by.empty() ? ojson(nullptr) : ojson(m.signed_by)},
               {"origin", m.origin.empty() ? ojson(nullptr) : ojson(m.origin)},
               {"restored_at", m.restored_at.empty() ? ojson(nullptr) : ojson(m.restored_at)},
               {"restored_by", m.restored_by}};
  }
  bool listed = s.state == unpack::FolderState::restored;
  return {{"name", s.dir.name},
          {"kind", manifest::to_string(s.dir.kind)},
          {"dir", s.dir.dir.string()},
          {"origin", s.dir.origin},
          {"state", unpack::to_string(s.state)},
          {"archive", archive},
          {"fit", f.fit ? comparison_json(*f.fit) : ojson(nullptr)},
          {"fit_error", f.fit_error.empty() ? ojson(nullptr) : ojson(f.fit_error)},
          {"archive_files", listed ? ojson(s.archive_files) : ojson(nullptr)},
          {"added_count", listed ? ojson(s.added()) : ojson(nullptr)},
          {"added", listed ? added_json(s) : ojson(nullptr)},
          {"missing", listed ? ojson(s.missing) : ojson(nullptr)},
          {"modified", listed && s.verified ? ojson(s.modified) : ojson(nullptr)},
          {"unverified", listed && s.verified ? ojson(s.unverified) : ojson(nullptr)}};
}

// The lines of what a restored folder gained and lost since the restore.
void say_changes(std::string& out, const unpack::FolderStatus& s, bool autotuned) {
  if (s.added() == 0)
    out += "  nothing compiled here since the restore (" + count(s.archive_files, "file", "files") + " from the archive)\n";
  if (!s.kernels.empty()) {
    // By kernel name: coordinate descent compiles several configs of one kernel, each in a folder of its own.
    std::vector<std::string> kernel_names;
    for (std::size_t i = 0, n = 1; i < s.kernels.size(); i += n) {
      n = 1;
      while (i + n < s.kernels.size() && s.kernels[i + n].name == s.kernels[i].name) ++n;
      kernel_names.push_back(n == 1 ? s.kernels[i].name : s.kernels[i].name + " (" + std::to_string(n) + " configs)");
    }
    out += "  " + count(s.kernels.size(), "Triton kernel", "Triton kernels") + " compiled here since the restore" +
           (autotuned ? " (autotuning ran again)" : "") + ": " + names(kernel_names) + "\n";
  }
  if (!s.fx_graphs.empty())
    out += "  " + count(s.fx_graphs.size(), "FX graph", "FX graphs") + " compiled here since the restore: " + names(s.fx_graphs) +
           "\n";
  if (!s.autotune.empty()) {
    out += "  " + count(s.autotune.size(), "autotune result", "autotune results") +
           " written here since the restore (autotuning ran again): " + names(s.autotune) + "\n";
  }
  if (!s.other.empty())
    out += "  " + count(s.other.size(), "other file", "other files") + " added since the restore: " + names(s.other) + "\n";
  if (!s.missing.empty())
    out += "  " + count(s.missing.size(), "file", "files") + " of the archive gone since the restore: " + names(s.missing) + "\n";
  if (s.verified) {
    std::string skipped =
        s.unverified == 0 ? "" : "; " + count(s.unverified, "file", "files") + " the relocating restore rewrites not compared";
    out += s.modified.empty()
               ? "  every file of the archive still holds the archive's bytes (--verify" + skipped + ")\n"
               : "  " + count(s.modified.size(), "file", "files") + " of the archive changed since the restore (--verify" +
                     skipped + "): " + names(s.modified) + "\n";
  }
}

std::string folder_text(const Folder& f, bool autotuned) {
  const unpack::FolderStatus& s = f.status;
  std::string out = s.dir.name + " " + quoted_path(s.dir.dir) + " (" + s.dir.origin + ")\n";
  if (s.state == unpack::FolderState::absent) {
    return out +
           (not_restored(s) ? "  not restored by ccpack: the folder does not exist\n" : "  not present (nothing to look at)\n");
  }
  if (s.state == unpack::FolderState::not_restored) return out + "  not restored by ccpack: it holds no ccpack restore marker\n";
  const manifest::Marker& m = *s.marker;
  out += "  restored from " + (m.origin.empty() ? std::string() : quoted_name(m.origin) + ", ") +
         "archive manifest sha256:" + m.archive_manifest_sha256 + ", " +
         (m.signed_by.empty() ? std::string("no trusted signer recorded") : "signed by " + escaped(m.signed_by, 64)) + ", " +
         (m.restored_at.empty() ? std::string("time not recorded") : "at " + escaped(m.restored_at, 64)) + " (" +
         escaped(m.restored_by, 64) + ")\n";
  if (f.fit) {
    manifest::Verdict v = f.fit->worst();
    out += v == manifest::Verdict::match ? std::string("  the archive still fits this machine\n")
           : v == manifest::Verdict::warn
               ? "  the archive still fits this machine, with warnings: " + f.fit->summary() + "\n"
               : "  the archive no longer fits this machine: " + f.fit->summary() + " (`ccpack check` shows the table)\n";
  } else {
    out += "  fit not known: " + f.fit_error + "\n";
  }
  if (s.state == unpack::FolderState::no_entry_list) {
    return out +
           "  what was added since is not known: no entry list of this restore (restored by an older ccpack; restore again to keep one)\n";
  }
  say_changes(out, s, autotuned);
  return out;
}

// What to do past --max-compiled, by the settle record the restore markers keep (manifest/marker.hpp): an archive
// that was settled met new work (its remedy is a delta and a merge); one that was not needs its settle runs.
std::string gate_remedy(const std::vector<Folder>& folders) {
  bool recorded = false, settled = true;
  for (const Folder& f : folders) {
    if (!f.status.marker || !f.status.marker->settle_recorded) continue;
    recorded = true;
    settled = settled && f.status.marker->settle && f.status.marker->settle->settled;
  }
  const std::string delta = "`ccpack create --since-restore` on this pod and `ccpack merge` of its delta in the pipeline";
  if (!recorded) {
    return "the restore markers do not say whether the archive was settled (restored by an older ccpack): if it was, " + delta +
           "; if not, see `create --settle`";
  }
  if (!settled) return "the archive was not settled for this workload: see `create --settle`";
  return "the archive was settled, and this pod met work its warm-up did not: bring it into the next archive with " + delta;
}

int run(StatusCommandOptions& o) {
  std::optional<std::uint64_t> gate;
  if (o.max_compiled) gate = count_option("--max-compiled", *o.max_compiled);
  Reporter out(o.common);
  check_ignored(o.ignored);
  resolve_extras(o.dirs, o.extras);
  std::vector<manifest::CacheDir> dirs = resolve_cache_dirs(o.dirs);
  std::future<manifest::Fingerprint> probing = std::async(std::launch::async, [&] { return probe::probe_local(o.python, dirs); });
  std::vector<Folder> folders;
  folders.reserve(dirs.size());
  for (const manifest::CacheDir& d : dirs) folders.push_back({unpack::folder_status(d, {o.verify}), std::nullopt, {}});
  manifest::Fingerprint local = probing.get();
  bool autotuned = false;
  std::uint64_t compiled = 0;
  std::vector<std::string> missing_folders;
  for (Folder& f : folders) {
    f.fit = fit_of(f.status, local, o.ignored, f.fit_error);
    autotuned = autotuned || !f.status.autotune.empty();
    compiled += f.status.added();
    if (not_restored(f.status)) missing_folders.push_back(f.status.dir.name);
  }
  ojson list = ojson::array();
  std::string text;
  for (const Folder& f : folders) {
    list.push_back(folder_json(f));
    text += folder_text(f, autotuned);
  }
  std::uint64_t kernels = 0;
  for (const Folder& f : folders) kernels += f.status.kernels.size();
  ojson body{{"compiled_since_restore", compiled},
             {"triton_kernels_since_restore", kernels},
             {"max_compiled", gate ? ojson(*gate) : ojson(nullptr)},
             {"not_restored", missing_folders},
             {"folders", std::move(list)}};
  if (!out.json()) std::fputs(text.c_str(), stdout);
  if (missing_folders.empty()) {
    if (gate && kernels > *gate) {
      return finish_with(out, std::move(body), ExitCode::over_compiled,
                         count(kernels, "Triton kernel", "Triton kernels") +
                             " compiled since the restore, more than --max-compiled " + std::to_string(*gate) + " (" +
                             gate_remedy(folders) + ")");
    }
    out.report(std::move(body));
    return 0;
  }
  std::string folder_names;
  for (const std::string& n : missing_folders) folder_names += (folder_names.empty() ? "" : ", ") + n;
  return finish_with(out, std::move(body), ExitCode::not_restored, "not restored by ccpack: " + folder_names);
}

}  // namespace

void add_status(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<StatusCommandOptions>();
  CLI::App* c = app.add_subcommand("status", "Say which archive restored each cache folder and what was compiled there since");
  add_cache_dirs(c, o->dirs, o->extras, "look at");
  add_python_option(c, o->python);
  add_ignore_option(c, o->ignored);
  c->add_flag("--verify", o->verify, "Also hash every file the archive put there and name those whose bytes changed");
  c->add_option("--max-compiled", o->max_compiled,
                "A smoke test's gate: exit 7 when more than N Triton kernels were compiled in these folders since the restore")
      ->type_name("N");
  add_common(c, o->common);
  c->footer(
      "Reads each folder's restore marker and entry list and walks the folder; nothing is hashed unless --verify. "
      "Exit 0 whether or not anything was compiled since the restore, unless --max-compiled N is given: then 7 when "
      "more than N Triton kernels were; 5 when a folder was not restored by ccpack (no marker, or named and missing; "
      "it wins over 7). See docs/FINGERPRINT.md, \"Why does AUTOTUNE run again on this pod?\".");
  commands.push_back({c, &o->common, [o] { return run(*o); }});
}

}  // namespace ccpack::cli
