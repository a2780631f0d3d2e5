// The stages of a merge, in the order converge/merge.hpp gives.
#include "converge/merge.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "converge/delta_folders.hpp"
#include "converge/delta_gate.hpp"
#include "converge/merged_links.hpp"
#include "converge/scratch.hpp"
#include "manifest/cache_dir.hpp"
#include "pack/recorded_source.hpp"
#include "unpack/extractor.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"

namespace ccpack::converge {
namespace fs = std::filesystem;

namespace {

// Extracts the components of `archive` that the base has into `<dir>/<name>`, with every check of a restore; the
// others are checked and not written. As packed (no relocation), unless `relocate` (a delta, delta_folders.hpp).
void extract_into(const unpack::Archive& archive, const fs::path& dir, const std::vector<manifest::Component>& base,
                  const pack::PackOptions& options, const DeltaFolders* relocate = nullptr) {
  if (::mkdir(dir.c_str(), 0700) != 0) throw_errno("cannot create " + quoted_path(dir));
  std::vector<UniqueFd> fds;
  std::vector<unpack::StagingTarget> targets;
  for (const manifest::Component& c : archive.manifest.components) {
    bool wanted = std::any_of(base.begin(), base.end(), [&c](const manifest::Component& b) { return b.name == c.name; });
    if (!wanted) continue;
    fs::path root = dir / c.name;
    if (::mkdir(root.c_str(), 0700) != 0) throw_errno("cannot create " + quoted_path(root));
    fds.emplace_back(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fds.back().valid()) throw_errno("cannot open " + quoted_path(root));
    targets.push_back(unpack::StagingTarget{c.name, fds.back().get(), relocate ? relocate->relocator(c.name) : nullptr});
  }
  (void)unpack::extract(archive, targets, unpack::ExtractOptions{options.jobs, options.progress});
}

// Carries one decision out in the tree: a folder made, an entry moved from the delta's extraction.
void carry_out(const Decision& d, const manifest::Entry& e, const fs::path& tree, const fs::path& from) {
  fs::path to = tree / e.path;
  if (d.action == Decision::Action::make_folder) {
    if (::mkdir(to.c_str(), 0700) != 0 || ::chmod(to.c_str(), e.mode) != 0) throw_errno("cannot create " + quoted_path(to));
  } else if (d.action == Decision::Action::add || d.action == Decision::Action::replace) {
    fs::path src = from / e.path;
    if (::rename(src.c_str(), to.c_str()) != 0) throw_errno("cannot move " + quoted_path(src) + " to " + quoted_path(to));
  }
}

// Delta `index` merged into `tree`: extracted beside it relocated to the base's build folders `build`, each entry
// decided by the plan on those bytes and carried out.
void merge_delta(const unpack::Archive& delta, std::size_t index, MergePlan& plan, const fs::path& scratch,
                 const std::vector<manifest::Component>& base, const std::vector<manifest::CacheDir>& build,
                 const pack::PackOptions& options, MergeResult& result) {
  fs::path from = scratch / "delta";
  DeltaFolders folders(delta.manifest, build);
  extract_into(delta, from, base, options, &folders);
  DeltaReport& report = result.deltas[index];
  plan.begin_delta(index, report.manifest_sha256.substr(0, 12));
  const manifest::EntryList& entries = delta.manifest.entries;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    manifest::Entry e = entries[i];
    if (e.type == manifest::EntryType::file) e.sha256 = folders.identity(i, from);  // relocated: its pod's folders left out
    Decision d = plan.offer(e);
    carry_out(d, e, scratch / "tree", from);
    if (d.action == Decision::Action::add || d.action == Decision::Action::replace) {
      report.added.push_back(e.path);
      ++report.kept;
    }
    if (d.action == Decision::Action::replace) --result.deltas[d.conflict->dropped].kept;  // its entry lost the conflict
    if (d.conflict) result.conflicts.push_back(std::move(*d.conflict));
    if (d.action == Decision::Action::skip) report.skipped.push_back({e.path, d.reason});
  }
  unpack::RelocationStats moved = folders.stats();
  report.relocated = moved.paths_rewritten + moved.pickle_paths_rewritten;
  fs::remove_all(from);
}

// The deltas, each through the gate, in merge order (by manifest digest); a repeated one is reported once.
std::vector<unpack::Archive> open_deltas(const MergeRequest& rq, const unpack::Archive& base, MergeResult& result) {
  std::vector<unpack::Archive> deltas;
  for (const fs::path& p : rq.deltas) {
    deltas.push_back(open_delta(p, base));
    deltas.back().drop_manifest_text();  // parsed: the entries are what the merge reads
  }
  std::vector<std::size_t> order(deltas.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return deltas[a].manifest_digest() != deltas[b].manifest_digest() ? deltas[a].manifest_digest() < deltas[b].manifest_digest()
                                                                      : a < b;
  });
  std::vector<unpack::Archive> sorted;
  for (std::size_t i : order) {
    bool again = !sorted.empty() && sorted.back().manifest_digest() == deltas[i].manifest_digest();
    DeltaReport r{deltas[i].path, to_hex(deltas[i].manifest_digest()), again, {}, {}, 0};
    if (again) {
      result.deltas.push_back(std::move(r));  // reported, not merged twice
      continue;
    }
    result.deltas.push_back(std::move(r));
    sorted.push_back(std::move(deltas[i]));
  }
  return sorted;
}

// Links across deltas (merged_links.hpp), before anything is extracted: exit 4 naming the delta and the link.
void check_links_across(const unpack::Archive& base, const std::vector<unpack::Archive>& deltas, const MergeResult& result) {
  std::vector<const manifest::EntryList*> lists;
  std::vector<const DeltaReport*> reports;  // the merged deltas' reports, in the same order
  lists.reserve(deltas.size());
  reports.reserve(deltas.size());
  for (const unpack::Archive& d : deltas) lists.push_back(&d.manifest.entries);
  for (const DeltaReport& r : result.deltas) {
    if (!r.duplicate) reports.push_back(&r);
  }
  std::optional<MergedLinkFailure> f = first_merged_link_failure(base.manifest.components, base.manifest.entries, lists);
  if (!f) return;
  std::string whose = f->owner == kLinkOfBase ? "the base's"
                      : f->owner == f->delta  ? "its own"
                                              : "delta " + quoted_path(reports[f->owner]->file) + "'s";
  bool loops = f->verdict == manifest::EntryTree::LinkVerdict::loops;
  throw IntegrityError("refusing delta " + quoted_path(reports[f->delta]->file) + ": merged, " + whose + " symlink " +
                       quoted_name(f->link) + (loops ? " loops" : " leaves its component") +
                       " through the other links of the base and the deltas");
}

// The base and the deltas as one folder tree under `scratch`/tree; returns the merge record.
manifest::MergeRecord build_tree(const MergeRequest& rq, const unpack::Archive& base, const fs::path& scratch,
                                 MergeResult& result) {
  std::vector<unpack::Archive> deltas = open_deltas(rq, base, result);
  check_links_across(base, deltas, result);
  extract_into(base, scratch / "tree", base.manifest.components, rq.pack);
  MergePlan plan(base.manifest.components, base.manifest.entries);
  std::vector<manifest::CacheDir> build = manifest::build_dirs(base.manifest);
  manifest::MergeRecord record{result.base_manifest_sha256, {}};
  std::size_t k = 0;
  for (std::size_t i = 0; i < result.deltas.size(); ++i) {
    if (result.deltas[i].duplicate) continue;
    merge_delta(deltas[k++], i, plan, scratch, base.manifest.components, build, rq.pack, result);
  }
  for (const DeltaReport& r : result.deltas) {
    if (!r.duplicate) record.deltas.push_back({r.manifest_sha256, r.kept});
  }
  return record;
}

}  // namespace

MergeResult merge(const MergeRequest& rq) {
  MergeResult result;
  unpack::Archive base = unpack::Archive::open(rq.base, rq.base_gate);
  if (base.manifest.delta) {
    throw UsageError("the base " + quoted_path(rq.base) + " is a delta, not a whole cache: give the archive its pods restored");
  }
  result.base_manifest_sha256 = to_hex(base.manifest_digest());
  base.drop_manifest_text();
  Scratch scratch(rq.output);
  pack::PackOptions po = rq.pack;
  po.records.merge = build_tree(rq, base, scratch.path(), result);
  po.records.fingerprint = base.manifest.fingerprint;
  po.records.settle = base.manifest.settle;
  po.records.delta.reset();
  po.level = base.manifest.compression.level;
  po.window_log = base.manifest.compression.window_log;
  std::vector<manifest::CacheDir> recorded = manifest::build_dirs(base.manifest);
  std::vector<manifest::CacheDir> tree = recorded;
  for (manifest::CacheDir& d : tree) d.dir = scratch.path() / "tree" / d.name;
  base = unpack::Archive();  // its manifest is no longer needed while the tree is packed
  pack::RecordedSource source(tree, recorded);
  result.packed = pack::create_archive(source, rq.output, po);
  return result;
}

}  // namespace ccpack::converge
