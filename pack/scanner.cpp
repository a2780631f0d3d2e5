#include "pack/scanner.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <oneapi/tbb/parallel_for.h>
#include <unistd.h>

#include <algorithm>
#include <memory>

#include "manifest/links.hpp"
#include "manifest/manifest.hpp"
#include "manifest/names.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"
#include "util/fs.hpp"

namespace ccpack::pack {
namespace fs = std::filesystem;
using manifest::EntryType;

namespace {

constexpr std::uint64_t kLargeFile = 4ULL << 20;

}  // namespace

// Transient names that must not be shipped; returns the reason or nullptr.
const char* transient_reason(std::string_view name, bool is_dir, bool at_root) {
  if (is_dir && at_root && name == "locks") return "lock folder";
  if (is_dir && name.starts_with("tmp.pid_")) return "Triton temporary folder";
  if (!is_dir && name.ends_with(".lock")) return "lock file";
  if (manifest::is_reserved_name(name)) return "ccpack marker or restore debris";
  return nullptr;
}

namespace {

std::string special_kind(mode_t mode) {
  if (S_ISSOCK(mode)) return "socket";
  if (S_ISFIFO(mode)) return "FIFO";
  if (S_ISCHR(mode)) return "character device";
  if (S_ISBLK(mode)) return "block device";
  return "special file";
}

// Builds the entry for one path from its lstat; refuses special files and names the manifest (JSON, UTF-8) cannot
// hold. Symlinks are judged once the whole tree is known (check_links).
SourceEntry make_entry(std::string archive_path, fs::path source, const struct stat& st, int dir_fd, const char* name) {
  if (!is_valid_utf8(name)) {
    throw Error("cannot pack " + quoted_path(source) + ": its name is not valid UTF-8 (the manifest is JSON); rename it");
  }
  SourceEntry e;
  e.path = std::move(archive_path);
  e.source = std::move(source);
  e.mode = st.st_mode & 0777;
  e.dev = st.st_dev;
  e.ino = st.st_ino;
  e.mtime = st.st_mtim;
  e.ctime = st.st_ctim;
  if (S_ISDIR(st.st_mode)) {
    e.type = EntryType::dir;
    e.mode |= 0700;  // ccpack must be able to read back and restore into what it packed
  } else if (S_ISREG(st.st_mode)) {
    e.type = EntryType::file;
    e.size = static_cast<std::uint64_t>(st.st_size);
  } else if (S_ISLNK(st.st_mode)) {
    e.type = EntryType::symlink;
    e.mode = 0777;
    char buf[4096];
    ssize_t n = ::readlinkat(dir_fd, name, buf, sizeof buf);
    if (n < 0) throw_errno("cannot read symlink " + quoted_path(e.source));
    e.link_target.assign(buf, static_cast<std::size_t>(n));
    if (!is_valid_utf8(e.link_target)) {
      throw Error("cannot pack symlink " + quoted_path(e.source) + ": its target is not valid UTF-8 (the manifest is JSON)");
    }
  } else {
    throw Error("refusing to pack " + special_kind(st.st_mode) + " " + quoted_path(e.source) +
                ": only files, folders and symlinks can be packed");
  }
  return e;
}

// One folder's children in name order, with the listings of its subfolders. Subfolders are listed in parallel
// (a cache holds thousands of folders, and lstat is most of create's serial time), then flattened in the
// order a sequential depth-first walk would give, so the result does not depend on scheduling.
struct Listing {
  std::vector<SourceEntry> entries;
  std::vector<std::string> skipped;
  std::vector<std::unique_ptr<Listing>> subfolders;  // one per folder in `entries`, in the same order
};

void list_folder(UniqueFd dir_fd, const fs::path& dir, const std::string& archive_dir,
                 bool at_root, Listing& out) {
  int copy = ::dup(dir_fd.get());
  std::unique_ptr<DIR, int (*)(DIR*)> d(copy >= 0 ? ::fdopendir(copy) : nullptr, ::closedir);
  if (!d) {
    if (copy >= 0) ::close(copy);
    throw_errno("cannot read folder " + quoted_path(dir));
  }
  std::vector<std::string> names;
  while (dirent* ent = ::readdir(d.get())) {
    std::string_view name = ent->d_name;
    if (name == "." || name == "..") continue;
    names.emplace_back(name);
  }
  std::sort(names.begin(), names.end());
  std::vector<std::string> subfolder_names;
  for (const std::string& name : names) {
    struct stat st {};
    if (::fstatat(dir_fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) continue;  // vanished since readdir: nothing to pack
      throw_errno("cannot stat " + quoted_path(dir / name));
    }
    std::string archive_path = archive_dir + '/';
    archive_path += name;
    if (const char* why = transient_reason(name, S_ISDIR(st.st_mode), at_root)) {
      out.skipped.push_back(escaped(archive_path) + " (" + why + ")");
      continue;
    }
    out.entries.push_back(make_entry(std::move(archive_path), dir / name, st, dir_fd.get(), name.c_str()));
    if (S_ISDIR(st.st_mode)) subfolder_names.push_back(name);
  }
  out.subfolders.resize(subfolder_names.size());
  oneapi::tbb::parallel_for(std::size_t{0}, subfolder_names.size(), [&](std::size_t i) {
    const std::string& name = subfolder_names[i];
    UniqueFd sub(::openat(dir_fd.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!sub.valid()) throw_errno("cannot read folder " + quoted_path(dir / name));
    out.subfolders[i] = std::make_unique<Listing>();
    list_folder(std::move(sub), dir / name, archive_dir + "/" + name, false, *out.subfolders[i]);
  });
}

void flatten(Listing& listing, ScanResult& out) {
  std::size_t sub = 0;
  for (SourceEntry& e : listing.entries) {
    bool is_dir = e.type == EntryType::dir;
    out.entries.push_back(std::move(e));
    if (is_dir) flatten(*listing.subfolders[sub++], out);
  }
  for (std::string& s : listing.skipped) out.skipped.push_back(std::move(s));
}

// Refuses a symlink that the restore would refuse: resolved through the other links of the tree it was scanned
// with (manifest/links.hpp owns the rule), it must stay inside its cache folder.
void check_links(const std::vector<manifest::CacheDir>& dirs, const std::vector<SourceEntry>& entries) {
  manifest::EntryTree tree(entries.size());
  std::vector<std::pair<const SourceEntry*, std::uint32_t>> links;
  for (const SourceEntry& e : entries) {
    manifest::EntryTree::AddResult added = tree.add(e.path, e.type, e.link_target);
    if (added.status == manifest::EntryTree::Added::ok && e.type == EntryType::symlink) links.emplace_back(&e, added.node);
  }
  for (auto [e, node] : links) {
    manifest::EntryTree::LinkVerdict verdict = tree.resolve_link(node);
    if (verdict == manifest::EntryTree::LinkVerdict::inside) continue;
    std::string what = "refusing to pack symlink " + quoted_path(e->source) + " -> '" + escaped(e->link_target) + "': ";
    if (verdict == manifest::EntryTree::LinkVerdict::loops) {
      throw Error(what + "resolving it follows more than " + std::to_string(manifest::kMaxLinkHops) + " symlinks (a loop)");
    }
    std::string_view component = manifest::component_of(e->path);
    auto root = std::find_if(dirs.begin(), dirs.end(), [&](const manifest::CacheDir& d) { return d.name == component; });
    throw Error(what + "it leads outside " + quoted_path(root->dir) + " (replace it with the file it points to)");
  }
}

int group_of(const SourceEntry& e) {
  switch (e.type) {
    case EntryType::dir:
      return 0;
    case EntryType::file:
      return e.size >= kLargeFile ? 1 : 2;
    case EntryType::symlink:
      return 3;
  }
  return 4;
}

}  // namespace

void sort_in_archive_order(std::vector<SourceEntry>& entries) {
  // Folders keep walk order (parents first); the rest is ordered by group, then path.
  std::stable_sort(entries.begin(), entries.end(), [](const SourceEntry& a, const SourceEntry& b) {
    int ga = group_of(a);
    int gb = group_of(b);
    if (ga != gb) return ga < gb;
    if (ga == 0) return false;
    return a.path < b.path;
  });
}

ScanResult scan(const std::vector<manifest::CacheDir>& dirs) {
  ScanResult out;
  for (const manifest::CacheDir& root : dirs) {
    struct stat st {};
    if (::stat(root.dir.c_str(), &st) != 0) throw_errno("cannot read " + root.name + " cache folder " + quoted_path(root.dir));
    if (!S_ISDIR(st.st_mode)) throw Error(root.name + " cache folder " + quoted_path(root.dir) + " is not a folder");
    UniqueFd fd(::open(root.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd.valid()) throw_errno("cannot read " + root.name + " cache folder " + quoted_path(root.dir));
    if (!is_valid_utf8(root.dir.native())) {
      throw Error("cannot pack " + root.name + " cache folder " + quoted_path(root.dir) +
                  ": its path is not valid UTF-8 (the manifest is JSON); rename it");
    }
    out.entries.push_back(make_entry(root.name, root.dir, st, fd.get(), "."));
    Listing listing;
    list_folder(std::move(fd), root.dir, root.name, true, listing);
    flatten(listing, out);
  }
  sort_in_archive_order(out.entries);
  check_links(dirs, out.entries);
  return out;
}

}  // namespace ccpack::pack
