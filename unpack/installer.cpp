// Locking, planning, staging and the atomic swap behind `ccpack restore`.
//
// For a target folder T (say ~/.triton/cache) everything happens in T's parent P, on T's filesystem:
//   P itself                    locked (folder_lock.hpp) for the whole restore: concurrent restores (eight ranks
//                               on a pod) and purges queue here; the later restores see the marker and return
//                               at once.
//   P/.T.ccpack-staging.<pid>   the new content, extracted and checked, with T's marker (manifest/marker.hpp)
//                               and entry list (manifest/restored_entries.hpp);
//                               swapped with T as one set with the other components' (swap_set.hpp).
// The phases, in order: resolve each component's target, lock the parents, remove debris of killed runs (every
// run that takes the lock, the no-op too), read what the targets hold, plan (plan.hpp, no I/O), check the folders'
// permissions and free space (preflight.hpp, before any payload byte is read), stage and check,
// swap all or nothing, remove the old content, and (--on-mismatch=purge) purge the folders of the components planned
// `purge`. Nothing is written outside T but the staging folder beside it.
#include "unpack/installer.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <memory>

#include "manifest/marker.hpp"
#include "manifest/reserved_names.hpp"
#include "manifest/restored_entries.hpp"
#include "unpack/extractor.hpp"
#include "unpack/folder_lock.hpp"
#include "unpack/preflight.hpp"
#include "unpack/purge.hpp"
#include "unpack/swap_set.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/interrupt.hpp"
#include "util/version.hpp"

namespace ccpack::unpack {
namespace fs = std::filesystem;

namespace {

struct Slot {
  std::size_t component = 0;  // index in the manifest
  fs::path target;
  fs::path parent;
  std::string base;  // target's file name
  fs::path staging;
  UniqueFd staging_fd;
};

// Staging folders of `base` left by a killed run: new content never swapped in, or old content never removed.
void remove_debris(const fs::path& parent, const std::string& base) {
  const std::string prefix = manifest::staging_prefix(base);
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(parent.c_str()), ::closedir);
  if (!d) return;
  std::vector<fs::path> debris;
  while (dirent* ent = ::readdir(d.get())) {
    if (std::string_view(ent->d_name).starts_with(prefix)) debris.push_back(parent / ent->d_name);
  }
  for (const fs::path& p : debris) remove_tree(p);
}

// The marker and the entry list (manifest/restored_entries.hpp) of a staged folder, written before the swap so
// they appear with its content.
void write_marker(int dir_fd, const Archive& a, const std::string& component, const InstallRun& run,
                  const PathRelocator* relocator) {
  manifest::write_restored_entries(dir_fd, a.manifest, component, to_hex(a.manifest_digest()),
                                   [relocator](std::size_t i) { return relocator && relocator->handles(i); });
  manifest::Marker marker;
  marker.archive_manifest_sha256 = to_hex(a.manifest_digest());
  marker.component = component;
  marker.restored_by = std::string("ccpack ") + kVersion;
  marker.restored_at = manifest::utc_now();
  if (run.trust) marker.signed_by = run.trust->verified_by;
  marker.origin = run.origin;
  marker.settle_recorded = true;  // the archive's settle record, for `status --max-compiled`'s remedy
  marker.settle = a.manifest.settle;
  marker.fingerprint = a.manifest.fingerprint;
  if (a.file) {  // a local file: the next restore of it, unchanged, need not read its manifest (marker.hpp)
    marker.archive_file = *a.file;
    marker.archive_file->manifest_top_level = a.manifest.top_level_json();
    if (marker.archive_file->manifest_top_level.size() > manifest::kMaxMarkerTopLevel) marker.archive_file.reset();
  }
  std::string text = marker.to_json();
  UniqueFd fd(::openat(dir_fd, std::string(manifest::kMarkerName).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (!fd.valid()) throw_errno("cannot write the restore marker");
  write_all(fd.get(), text.data(), text.size(), "the restore marker");
}

// Tells ext4 (and filesystems that honour the flag) that this folder tops a tree of its own, so the allocator
// spreads its subfolders over block groups instead of packing them beside the parent. A cache restored where an
// old one was just deleted otherwise lands in block groups full of recently freed inodes, which ext4 without a
// journal scans past one by one. Best effort: other filesystems refuse the ioctl, and that is fine.
// Measured restoring the real fixture (median of 5-7, 2 cores): on ext4 without a journal, right after the
// previous tree was deleted, 0.40 s with the flag against 1.1 s without; with older trees left in place, 0.94 s
// against 0.84 s; on ext4 with a journal (loop device) 0.92 vs 0.80 s after a delete and 0.91 vs 0.93 s fresh.
void mark_top_of_tree(int dir_fd) {
  int flags = 0;
  if (::ioctl(dir_fd, FS_IOC_GETFLAGS, &flags) == 0) {
    flags |= FS_TOPDIR_FL;
    (void)::ioctl(dir_fd, FS_IOC_SETFLAGS, &flags);
  }
}

// Throws when the target exists but is not a folder.
void require_folder_or_absent(const fs::path& target) {
  struct stat st {};
  if (::lstat(target.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
    throw Error("cannot restore into " + quoted_path(target) + ": it exists and is not a folder");
}

// Phase 1: the folder of each component, and the report's rows.
std::vector<Slot> resolve_targets(const manifest::Manifest& m, const std::vector<manifest::CacheDir>& dirs,
                                  InstallReport& report) {
  std::vector<Slot> slots;
  for (std::size_t i = 0; i < m.components.size(); ++i) {
    const manifest::Component& c = m.components[i];
    report.components.push_back(ComponentOutcome{c.name, {}, Action::skip, {}, c.files, c.bytes, c.source, {}});
    auto it = std::find_if(dirs.begin(), dirs.end(), [&](const manifest::CacheDir& d) { return d.name == c.name; });
    if (it == dirs.end()) continue;
    report.components.back().dir = it->dir;
    Slot s;
    s.component = i;
    // A cache folder that is a symlink to a folder is restored where it points: the link stays, and the swap
    // happens on the folder's own filesystem.
    s.target = resolve_cache_folder(it->dir);
    s.parent = s.target.parent_path();
    s.base = s.target.filename().string();
    if (s.base.empty() || s.parent.empty())
      throw Error("cannot restore into " + quoted_path(it->dir) + ": not a folder below another");
    slots.push_back(std::move(s));
  }
  return slots;
}

// Each component needs a folder of its own: one inside another would be replaced along with it.
void require_disjoint(std::vector<Slot>& slots, const manifest::Manifest& m) {
  std::sort(slots.begin(), slots.end(), [](const Slot& a, const Slot& b) { return a.target < b.target; });
  for (std::size_t i = 0; i + 1 < slots.size(); ++i) {
    const fs::path& a = slots[i].target;
    const fs::path& b = slots[i + 1].target;
    auto [end, unused] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
    if (end == a.end()) {
      throw UsageError("components '" + m.components[slots[i].component].name + "' and '" +
                       m.components[slots[i + 1].component].name + "' would restore into overlapping folders " + quoted_path(a) +
                       " and " + quoted_path(b));
    }
  }
}

// Locks each parent folder (folder_lock.hpp), creating the missing ones.
std::vector<UniqueFd> lock_parents(std::vector<fs::path> parents, const std::function<void(const fs::path&)>& on_wait) {
  for (const fs::path& p : parents) {
    std::error_code ec;
    fs::create_directories(p, ec);
    if (ec) throw Error("cannot create folder " + quoted_path(p) + ": " + ec.message());
  }
  return lock_folders(std::move(parents), LockWait{std::nullopt, on_wait});
}

// Phase: what each target holds now, and the policy's verdicts, as the plan's facts.
std::vector<ComponentFacts> read_facts(const manifest::Manifest& m, const std::vector<Slot>& slots,
                                       const std::vector<std::pair<Fit, std::string>>& fits) {
  std::vector<ComponentFacts> facts(m.components.size());
  for (const Slot& s : slots) {
    ComponentFacts& f = facts[s.component];
    f.target = s.target;
    if (auto marker = manifest::Marker::read(s.target)) f.marker_digest = marker->archive_manifest_sha256;
  }
  for (std::size_t i = 0; i < fits.size() && i < facts.size(); ++i) {
    facts[i].fit = fits[i].first;
    facts[i].fit_reason = fits[i].second;
  }
  return facts;
}

// Phase: extract every component to restore into its staging folder, check it, relocate Triton's group files
// for the final folder, write its marker.
void stage(const Archive& archive, std::vector<Slot*>& todo, const InstallOptions& options, const InstallRun& run,
           InstallReport& report) {
  std::vector<StagingTarget> targets;
  std::vector<std::unique_ptr<PathRelocator>> relocators;
  interrupt::begin_writing();  // a signal from here on is acted on at a check, after which the catch below cleans up
  for (Slot* s : todo) {
    s->staging = s->parent / manifest::staging_name(s->base, std::to_string(::getpid()));
    if (::mkdir(s->staging.c_str(), 0700) != 0) throw_errno("cannot create staging folder " + quoted_path(s->staging));
    s->staging_fd.reset(::open(s->staging.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!s->staging_fd.valid()) throw_errno("cannot open staging folder " + quoted_path(s->staging));
    mark_top_of_tree(s->staging_fd.get());
    relocators.push_back(options.relocate ? std::make_unique<PathRelocator>(archive.manifest, s->component, s->target) : nullptr);
    targets.push_back(
        StagingTarget{archive.manifest.components[s->component].name, s->staging_fd.get(), relocators.back().get()});
  }
  // The frames are checked before they are decoded: each file need not be hashed again (unpack/extractor.hpp).
  (void)extract(archive, targets, ExtractOptions{options.jobs, options.progress, /*file_digests=*/false});
  for (std::size_t i = 0; i < todo.size(); ++i) {
    if (relocators[i]) report.components[todo[i]->component].relocation = relocators[i]->stats();
  }
  for (std::size_t i = 0; i < todo.size(); ++i) {
    write_marker(todo[i]->staging_fd.get(), archive, archive.manifest.components[todo[i]->component].name, run,
                 relocators[i].get());
  }
  if (options.durable) {
    for (Slot* s : todo) {
      if (::syncfs(s->staging_fd.get()) != 0) throw_errno("cannot flush " + quoted_path(s->staging));
    }
  }
}

// Phases: stage the components to restore, then swap them in as one set; on failure nothing has changed.
void stage_and_swap(const Archive& archive, std::vector<Slot>& slots, const RestorePlan& plan, const InstallOptions& options,
                    const InstallRun& run, InstallReport& report) {
  std::vector<Slot*> todo;
  for (Slot& s : slots) {
    if (plan.components[s.component].action == Action::restore) todo.push_back(&s);
  }
  try {
    stage(archive, todo, options, run, report);
    std::vector<StagedFolder> staged;
    staged.reserve(todo.size());
    for (Slot* s : todo) {
      staged.push_back({s->staging, s->target, s->parent / manifest::staging_name(s->base, "old." + std::to_string(::getpid()))});
    }
    interrupt::check();  // the last point where an interrupted restore changes nothing
    swap_all(staged, options.fault);
  } catch (...) {
    for (Slot* s : todo) {
      std::error_code ec;
      if (!s->staging.empty()) fs::remove_all(s->staging, ec);
    }
    throw;
  }
}

// Phase (--on-mismatch=purge): the purge rules on the folders of the components planned `purge`, judged for
// run.purge_for. The caller holds the parents' locks, so the purge takes none of its own.
void purge_planned(const manifest::Manifest& m, const RestorePlan& plan, const std::vector<manifest::CacheDir>& dirs,
                   const InstallOptions& options, const InstallRun& run, InstallReport& report) {
  if (!run.purge_for) return;
  std::vector<manifest::CacheDir> stale;
  for (const PlannedComponent& p : plan.components) {
    if (p.action != Action::purge) continue;
    auto it = std::find_if(dirs.begin(), dirs.end(),
                           [&](const manifest::CacheDir& d) { return d.name == m.components[p.component].name; });
    if (it != dirs.end()) stale.push_back(*it);
  }
  if (options.fault) (void)options.fault(FaultPoint::purge, stale.size());
  report.purged = purge_locked(stale, *run.purge_for, PurgeOptions{});
}

// Stage 2 of reading the archive (archive.hpp: the full parse and validation of every frame and entry), unless
// the plan writes and purges nothing because every component is `already` or `skip`. Skipping it then is safe:
// an `already` folder's marker names the SHA-256 of these exact manifest bytes, which this run has hashed and
// whose signature the trust gate has checked, and a marker is written only by a restore that parsed and
// validated those same bytes in full before extracting them. Validating them again would repeat a verdict
// already reached, at a cost that grows with the file count. Anything else (a restore, a purge, a refusal)
// reads the whole manifest first, so what is written, and which error wins, is as it always was.
void load_unless_noop(Archive& archive, const RestorePlan& plan) {
  bool noop = std::all_of(plan.components.begin(), plan.components.end(),
                          [](const PlannedComponent& p) { return p.action == Action::already || p.action == Action::skip; });
  if (!noop) {
    archive.load_full();
    // Parsed, hashed (the digest is kept) and checked: restore never reads the text again.
    archive.drop_manifest_text();
  }
}

// The folders the plan restores into, for the checks before the payload (preflight.hpp).
std::vector<PreflightTarget> preflight_targets(const manifest::Manifest& m, const std::vector<Slot>& slots,
                                               const RestorePlan& plan) {
  std::vector<PreflightTarget> out;
  for (const Slot& s : slots) {
    if (plan.components[s.component].action != Action::restore) continue;
    const manifest::Component& c = m.components[s.component];
    out.push_back(PreflightTarget{c.name, s.target, s.parent, c.bytes, c.files});
  }
  return out;
}

}  // namespace

bool InstallReport::noop() const {
  return std::none_of(components.begin(), components.end(),
                      [](const ComponentOutcome& c) { return c.action == Action::restore; });
}

std::vector<UniqueFd> lock_install_folders(const std::vector<manifest::CacheDir>& dirs,
                                           const std::function<void(const fs::path&)>& on_wait) {
  std::vector<fs::path> parents;
  for (const manifest::CacheDir& d : dirs) {
    fs::path parent = resolve_cache_folder(d.dir).parent_path();
    if (!parent.empty()) parents.push_back(parent);  // the install names a folder with none (resolve_targets)
  }
  return lock_parents(std::move(parents), on_wait);
}

InstallReport install(Archive& archive, const std::vector<manifest::CacheDir>& dirs, const InstallOptions& options,
                      const InstallRun& run) {
  const manifest::Manifest& m = archive.manifest;
  InstallReport report;
  std::vector<Slot> slots = resolve_targets(m, dirs, report);
  require_disjoint(slots, m);
  std::vector<fs::path> parents;
  parents.reserve(slots.size());
  for (const Slot& s : slots) parents.push_back(s.parent);
  std::vector<UniqueFd> locks =
      run.held != nullptr ? std::vector<UniqueFd>{} : lock_parents(std::move(parents), options.on_lock_wait);
  for (const Slot& s : slots) {
    remove_debris(s.parent, s.base);
    require_folder_or_absent(s.target);  // before any work, so nothing is swapped in and then undone
  }
  RestorePlan plan = plan_restore(m, to_hex(archive.manifest_digest()), read_facts(m, slots, run.fits));
  for (const PlannedComponent& p : plan.components) {
    report.components[p.component].action = p.action;
    report.components[p.component].reason = p.reason;
  }
  load_unless_noop(archive, plan);
  if (plan.refused()) return report;  // all or nothing: no component written, no folder purged
  if (plan.writes()) {
    preflight(preflight_targets(m, slots, plan));  // before the first payload byte is read
    stage_and_swap(archive, slots, plan, options, run, report);
  }
  purge_planned(m, plan, dirs, options, run, report);  // still under the locks: no other restore or purge runs here
  return report;
}

}  // namespace ccpack::unpack
