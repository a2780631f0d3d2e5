// See relocate.hpp.
#include "unpack/relocate.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

#include "manifest/cache_dir.hpp"
#include "manifest/json_guard.hpp"
#include "manifest/kernel_json.hpp"
#include "unpack/group_file.hpp"
#include "unpack/pickle_paths.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"
#include "util/fs.hpp"

namespace ccpack::unpack {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {

constexpr std::uint64_t kMaxGroupFileBytes = 16u << 20;
constexpr std::string_view kPickledFolders[] = {"fxgraph", "aotautograd"};  // Inductor's, below its root
constexpr int kMaxDepth = 16;

}  // namespace

// Per entry: whether it is a file below one of the component's top-level pickled folders. Folders come before
// what they hold in the entry list, so one pass in order sees each parent's answer first.
std::vector<bool> pickled_entries(const manifest::EntryList& entries, std::string_view component) {
  std::vector<bool> below(entries.size(), false);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    std::uint32_t p = entries.parent(i);
    if (p == manifest::EntryList::kNoParent || p >= i || entries.component(i) != component) continue;
    bool top = entries.parent(p) == manifest::EntryList::kNoParent && entries.type(i) == manifest::EntryType::dir &&
               std::find(std::begin(kPickledFolders), std::end(kPickledFolders), entries.name(i)) != std::end(kPickledFolders);
    below[i] = top || below[p];
  }
  for (std::size_t i = 0; i < entries.size(); ++i) below[i] = below[i] && entries.type(i) == manifest::EntryType::file;
  return below;
}

PathRelocator::PathRelocator(const manifest::Manifest& manifest, std::size_t component, const fs::path& target)
    : entries_(&manifest.entries.compact(scratch_)),
      component_(manifest.components[component].name),
      to_(manifest::normal_folder(target).string() + "/"),
      source_(manifest::normal_folder(manifest.components[component].source).string()) {
  // The rewritten group files are JSON and the pickles' strs are read by Python as UTF-8: a folder whose path is
  // not UTF-8 cannot be written into them (the build folder is UTF-8: create refuses any other).
  // defence: relocate-utf8
  if (!is_valid_utf8(to_) && to_ != source_ + "/") {
    throw Error("cannot restore " + component_ + " into " + quoted_path(target) +
                ": its path is not valid UTF-8, and the restored pickles and group files would have to name it; restore into "
                "a UTF-8 path, or with --no-relocate");
  }
  if (manifest.components[component].kind == manifest::ComponentKind::inductor) pickled_ = pickled_entries(*entries_, component_);
  // Only the files of folders that hold a group file of this component can be named (a million-file cache
  // builds the set in a fraction of the time it takes for every file).
  const manifest::EntryList& entries = *entries_;
  std::vector<bool> has_group(entries.size(), false);
  std::size_t candidates = 0;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    std::uint32_t p = entries.parent(i);
    if (p != manifest::EntryList::kNoParent && !has_group[p] && is_group(i)) has_group[p] = true;
  }
  for (std::size_t i = 0; i < entries.size(); ++i) {
    std::uint32_t p = entries.parent(i);
    candidates += p != manifest::EntryList::kNoParent && has_group[p] ? 1 : 0;
  }
  files_.reserve(candidates);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    std::uint32_t p = entries.parent(i);
    if (p == manifest::EntryList::kNoParent || !has_group[p] || entries.type(i) != manifest::EntryType::file) continue;
    if (entries.component(i) == component_) (void)files_.emplace(p, entries.name(i), 0);
  }
}

bool PathRelocator::handles(std::size_t entry) const { return is_group(entry) || (entry < pickled_.size() && pickled_[entry]); }

bool PathRelocator::is_group(std::size_t entry) const {
  const manifest::EntryList& entries = *entries_;
  return entries.type(entry) == manifest::EntryType::file && manifest::is_group_file_name(entries.name(entry)) &&
         entries.component(entry) == component_;
}

bool PathRelocator::skips(std::size_t entry) {
  if (!is_group(entry) || entries_->file_size(entry) <= kMaxGroupFileBytes) return false;
  RelocationStats skipped;
  skipped.group_files = 1;
  skipped.files_unparsed = 1;
  count(skipped);
  return true;
}

bool PathRelocator::streams(std::size_t entry) const { return entry < pickled_.size() && pickled_[entry]; }

// Where child path `path` of a group file in folder `folder` (relative to the component root: "" at the root, else
// ending in '/'; its folder entry `parent`) moves to; nullopt when it stays.
std::optional<std::string> PathRelocator::moved_child(std::uint32_t parent, std::string_view folder,
                                                      std::string_view path) const {
  std::string_view base = path.substr(path.rfind('/') + 1);
  // Where this child lies in the archive: `folder` then `base`, which `path` must end with, after a '/'.
  const std::size_t rel = folder.size() + base.size();
  bool ours = path.size() > rel && path.front() == '/' && path[path.size() - rel - 1] == '/' &&
              path.substr(path.size() - rel, folder.size()) == folder;
  if (!ours || files_.find(parent, base) == ChildMap::kNone) return std::nullopt;
  if (path.size() == to_.size() + rel && path.starts_with(to_)) return std::nullopt;  // already there
  std::string moved;
  moved.reserve(to_.size() + rel);
  moved.append(to_).append(folder).append(base);
  return moved;
}

// The folder of group file `entry` relative to its component root ("" at the root, else ending in '/').
std::string PathRelocator::group_folder(std::size_t entry) const {
  std::string file_path = entries_->path(entry);
  std::string_view file_rel = manifest::relative_of(file_path);
  return std::string(file_rel.substr(0, file_rel.rfind('/') + 1));
}

// Rewrites one parsed group document in place; false when it is not {"child_paths": {...}} of strings.
bool PathRelocator::rewrite_paths(ojson& doc, std::size_t entry, RelocationStats& stats) const {
  if (!doc.is_object() || !doc.contains("child_paths") || !doc["child_paths"].is_object()) return false;
  std::string folder = group_folder(entry);
  std::uint32_t parent = entries_->parent(entry);
  for (auto& [key, value] : doc["child_paths"].items()) {
    if (!value.is_string()) return false;
    if (std::optional<std::string> moved = moved_child(parent, folder, value.get_ref<const std::string&>())) {
      value = std::move(*moved);
      ++stats.paths_rewritten;
    } else {
      ++stats.paths_kept;
    }
  }
  return true;
}

std::optional<std::string> PathRelocator::rewrite(std::size_t entry, std::string_view packed) {
  return is_group(entry) ? rewrite_group(entry, packed) : rewrite_pickle(packed);
}

bool PathRelocator::is_component_file(std::string_view relative) {
  std::call_once(file_hashes_once_, [this] {
    const manifest::EntryList& entries = *entries_;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (entries.type(i) != manifest::EntryType::file || entries.component(i) != component_) continue;
      std::string path = entries.path(i);
      file_hashes_.insert(std::hash<std::string_view>{}(manifest::relative_of(path)));
    }
  });
  return file_hashes_.count(std::hash<std::string_view>{}(relative)) != 0;
}

std::unique_ptr<PickleStream> PathRelocator::stream(PickleStream::Write write) {
  std::vector<std::string> roots;
  if (!source_.empty() && source_.front() == '/') roots.push_back(source_);
  return std::make_unique<PickleStream>(
      std::move(roots), to_.substr(0, to_.size() - 1), [this](std::string_view rel) { return is_component_file(rel); },
      std::move(write));
}

void PathRelocator::streamed(const PickleStream& stream, bool rewritten) {
  RelocationStats mine;
  mine.pickle_files = 1;
  mine.pickle_paths_rewritten = rewritten ? stream.strings_rewritten() : 0;
  mine.pickle_files_unparsed = rewritten ? 0 : 1;
  count(mine);
}

// A pickled entry that lies whole in one piece: the same stream, into memory.
std::optional<std::string> PathRelocator::rewrite_pickle(std::string_view packed) {
  std::string out;
  std::unique_ptr<PickleStream> s = stream([&out](std::string_view bytes) { out.append(bytes); });
  bool ok = s->feed(packed) && s->finish();
  streamed(*s, ok);
  if (!ok || s->strings_rewritten() == 0) return std::nullopt;
  return out;
}

std::optional<std::string> PathRelocator::rewrite_group(std::size_t entry, std::string_view packed) {
  RelocationStats mine;
  mine.group_files = 1;
  std::optional<std::string> out;
  if (packed.size() <= kMaxGroupFileBytes) {
    if (std::optional<std::vector<GroupMember>> members = read_simple_group(packed)) {
      // Triton's own form: no tree built (unpack/group_file.hpp); the same paths move as below.
      std::string folder = group_folder(entry);
      std::uint32_t parent = entries_->parent(entry);
      std::vector<std::string> moved;
      moved.reserve(members->size());  // the members' views point into it: no reallocation
      for (GroupMember& m : *members) {
        if (std::optional<std::string> to = moved_child(parent, folder, m.value)) {
          m.value = moved.emplace_back(std::move(*to));
          m.replaced = true;
          ++mine.paths_rewritten;
        } else {
          ++mine.paths_kept;
        }
      }
      if (mine.paths_rewritten != 0) out = write_group(*members);
      count(mine);
      return out;
    }
  }
  ojson doc;
  bool parsed = packed.size() <= kMaxGroupFileBytes;
  if (parsed) {
    try {
      doc = manifest::parse_untrusted<ojson>(packed, "Triton group file", nullptr, kMaxDepth);
    } catch (const IntegrityError&) {
      parsed = false;
    }
  }
  RelocationStats counted = mine;
  if (parsed && rewrite_paths(doc, entry, counted)) {
    mine = counted;
    if (mine.paths_rewritten != 0) out = doc.dump();
  } else {
    mine.files_unparsed = 1;
  }
  count(mine);
  return out;
}

RelocationStats& RelocationStats::operator+=(const RelocationStats& o) {
  group_files += o.group_files;
  paths_rewritten += o.paths_rewritten;
  paths_kept += o.paths_kept;
  files_unparsed += o.files_unparsed;
  pickle_files += o.pickle_files;
  pickle_paths_rewritten += o.pickle_paths_rewritten;
  pickle_files_unparsed += o.pickle_files_unparsed;
  return *this;
}

void PathRelocator::count(const RelocationStats& one) {
  std::lock_guard lock(mutex_);
  stats_ += one;
}

RelocationStats PathRelocator::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace ccpack::unpack
