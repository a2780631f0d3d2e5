#include "unpack/relocate.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <unordered_set>

#include "manifest/json_guard.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace ccpack::unpack {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {

constexpr std::uint64_t kMaxGroupFileBytes = 16u << 20;
constexpr int kMaxDepth = 16;

bool is_group_file(std::string_view rel) {
  std::string_view name = rel.substr(rel.rfind('/') + 1);
  return name.starts_with("__grp__") && name.ends_with(".json");
}

std::string read_at(int dir_fd, const std::string& rel, std::uint64_t size) {
  UniqueFd fd(::openat(dir_fd, rel.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) throw_errno("cannot read " + quoted_path(rel) + " in staging");
  std::string text(size, '\0');
  if (pread_full(fd.get(), text.data(), text.size(), 0, quoted_path(rel)) != size) throw Error("short read of " + quoted_path(rel));
  return text;
}

void write_over(int dir_fd, const std::string& rel, const std::string& text, std::uint32_t mode) {
  std::string temp = rel + ".ccpack-relocate";
  UniqueFd fd(::openat(dir_fd, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
  if (!fd.valid()) throw_errno("cannot write " + quoted_path(temp) + " in staging");
  write_all(fd.get(), text.data(), text.size(), quoted_path(temp));
  if (::fchmod(fd.get(), mode) != 0) throw_errno("cannot set the mode of " + quoted_path(temp));
  if (::renameat(dir_fd, temp.c_str(), dir_fd, rel.c_str()) != 0) throw_errno("cannot replace " + quoted_path(rel));
}

// Rewrites one parsed group document in place; returns false when it is not {"child_paths": {...}} of strings.
// `folder` is the group file's folder relative to the component root ("" at the root, else ending in '/').
// The files of a component, as (folder entry, name) in the compact entry list (manifest/entry_list.hpp): the
// files a group file may name are in its own folder, so a name there is enough, and no path is copied.
struct ChildKey {
  std::uint32_t parent;
  std::string_view name;
  bool operator==(const ChildKey&) const = default;
};
struct ChildHash {
  std::size_t operator()(const ChildKey& k) const noexcept {
    return std::hash<std::string_view>{}(k.name) ^ (std::size_t{k.parent} * 0x9e3779b97f4a7c15ULL);
  }
};
using FileSet = std::unordered_set<ChildKey, ChildHash>;

// `parent`: the entry index of the group file's folder, where the files it names lie.
bool rewrite(ojson& doc, const std::string& folder, std::uint32_t parent, const std::string& to, const FileSet& files,
             RelocationStats& stats) {
  if (!doc.is_object() || !doc.contains("child_paths") || !doc["child_paths"].is_object()) return false;
  for (auto& [key, value] : doc["child_paths"].items()) {
    if (!value.is_string()) return false;
    const std::string& path = value.get_ref<const std::string&>();
    std::string_view base = std::string_view(path).substr(path.rfind('/') + 1);
    std::string rel = folder + std::string(base);  // where this child lies in the archive
    bool ours = path.size() > rel.size() && path.ends_with(rel) && path[path.size() - rel.size() - 1] == '/' && path.front() == '/';
    if (ours && files.count(ChildKey{parent, base}) != 0 && path != to + rel) {
      value = to + rel;
      ++stats.paths_rewritten;
    } else {
      ++stats.paths_kept;
    }
  }
  return true;
}


}  // namespace

RelocationStats relocate_group_files(const manifest::Manifest& manifest, std::size_t component, int staging_fd,
                                     const fs::path& target) {
  RelocationStats stats;
  const manifest::Component& c = manifest.components[component];
  const std::string to = target.lexically_normal().string() + "/";
  manifest::EntryList scratch;  // a compact copy of an edited list
  const manifest::EntryList& entries = manifest.entries.compact(scratch);
  // This component's files, as the group files name them after the build folder.
  FileSet files;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (entries.type(i) == manifest::EntryType::file && entries.component(i) == c.name) files.insert({entries.parent(i), entries.name(i)});
  }
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (entries.type(i) != manifest::EntryType::file || !is_group_file(entries.name(i)) || entries.component(i) != c.name) continue;
    std::string path = entries.path(i);
    std::string_view rel = manifest::relative_of(path);
    if (!is_group_file(rel)) continue;
    ++stats.group_files;
    std::uint64_t size = entries.file_size(i);
    if (size > kMaxGroupFileBytes) {
      ++stats.files_unparsed;
      continue;
    }
    std::string name(rel);
    std::string text = read_at(staging_fd, name, size);
    ojson doc;
    try {
      doc = manifest::parse_untrusted<ojson>(text, "Triton group file", nullptr, kMaxDepth);
    } catch (const IntegrityError&) {
      ++stats.files_unparsed;
      continue;
    }
    RelocationStats before = stats;
    std::string folder(rel.substr(0, rel.rfind('/') + 1));
    if (!rewrite(doc, folder, entries.parent(i), to, files, stats)) {
      stats = before;
      ++stats.files_unparsed;
      continue;
    }
    if (stats.paths_rewritten == before.paths_rewritten) continue;
    std::string rewritten = doc.dump();
    write_over(staging_fd, name, rewritten, entries.mode(i));
    if (read_at(staging_fd, name, rewritten.size()) != rewritten) throw Error("relocated " + quoted_path(name) + " does not read back as written");
  }
  return stats;
}

}  // namespace ccpack::unpack
