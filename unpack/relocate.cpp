// See relocate.hpp.
#include "unpack/relocate.hpp"

#include <nlohmann/json.hpp>
#include <vector>

#include "manifest/json_guard.hpp"
#include "util/error.hpp"

namespace ccpack::unpack {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {

constexpr std::uint64_t kMaxGroupFileBytes = 16u << 20;
constexpr int kMaxDepth = 16;

bool is_group_file(std::string_view name) { return name.starts_with("__grp__") && name.ends_with(".json"); }

}  // namespace

std::size_t GroupRelocator::ChildHash::operator()(const ChildKey& k) const noexcept {
  return std::hash<std::string_view>{}(k.name) ^ (std::size_t{k.parent} * 0x9e3779b97f4a7c15ULL);
}

GroupRelocator::GroupRelocator(const manifest::Manifest& manifest, std::size_t component, const fs::path& target)
    : entries_(&manifest.entries.compact(scratch_)),
      component_(manifest.components[component].name),
      to_(target.lexically_normal().string() + "/") {
  // Only the files of folders that hold a group file of this component can be named (a million-file cache
  // builds the set in a fraction of the time it takes for every file).
  const manifest::EntryList& entries = *entries_;
  std::vector<bool> has_group(entries.size(), false);
  std::size_t candidates = 0;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    std::uint32_t p = entries.parent(i);
    if (p != manifest::EntryList::kNoParent && !has_group[p] && handles(i)) has_group[p] = true;
  }
  for (std::size_t i = 0; i < entries.size(); ++i) {
    std::uint32_t p = entries.parent(i);
    candidates += p != manifest::EntryList::kNoParent && has_group[p] ? 1 : 0;
  }
  files_.reserve(candidates);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    std::uint32_t p = entries.parent(i);
    if (p == manifest::EntryList::kNoParent || !has_group[p] || entries.type(i) != manifest::EntryType::file) continue;
    if (entries.component(i) == component_) files_.insert({p, entries.name(i)});
  }
}

bool GroupRelocator::handles(std::size_t entry) const {
  const manifest::EntryList& entries = *entries_;
  return entries.type(entry) == manifest::EntryType::file && is_group_file(entries.name(entry)) &&
         entries.component(entry) == component_;
}

bool GroupRelocator::skips(std::size_t entry) {
  if (entries_->file_size(entry) <= kMaxGroupFileBytes) return false;
  std::lock_guard lock(mutex_);
  ++stats_.group_files;
  ++stats_.files_unparsed;
  return true;
}

// Rewrites one parsed group document in place; false when it is not {"child_paths": {...}} of strings.
bool GroupRelocator::rewrite_paths(ojson& doc, std::size_t entry, RelocationStats& stats) const {
  if (!doc.is_object() || !doc.contains("child_paths") || !doc["child_paths"].is_object()) return false;
  std::string file_path = entries_->path(entry);
  std::string_view file_rel = manifest::relative_of(file_path);
  // The group file's folder relative to the component root ("" at the root, else ending in '/').
  std::string folder(file_rel.substr(0, file_rel.rfind('/') + 1));
  std::uint32_t parent = entries_->parent(entry);
  for (auto& [key, value] : doc["child_paths"].items()) {
    if (!value.is_string()) return false;
    const std::string& path = value.get_ref<const std::string&>();
    std::string_view base = std::string_view(path).substr(path.rfind('/') + 1);
    std::string rel = folder + std::string(base);  // where this child lies in the archive
    bool ours = path.size() > rel.size() && path.ends_with(rel) && path[path.size() - rel.size() - 1] == '/' && path.front() == '/';
    if (ours && files_.count(ChildKey{parent, base}) != 0 && path != to_ + rel) {
      value = to_ + rel;
      ++stats.paths_rewritten;
    } else {
      ++stats.paths_kept;
    }
  }
  return true;
}

std::optional<std::string> GroupRelocator::rewrite(std::size_t entry, std::string_view packed) {
  RelocationStats mine;
  mine.group_files = 1;
  std::optional<std::string> out;
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
  std::lock_guard lock(mutex_);
  stats_.group_files += mine.group_files;
  stats_.paths_rewritten += mine.paths_rewritten;
  stats_.paths_kept += mine.paths_kept;
  stats_.files_unparsed += mine.files_unparsed;
  return out;
}

RelocationStats GroupRelocator::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace ccpack::unpack
