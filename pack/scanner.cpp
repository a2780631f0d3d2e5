#include "pack/scanner.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <malloc.h>
#include <oneapi/tbb/parallel_for.h>
#include <unistd.h>

#include <algorithm>
#include <memory>

#include "manifest/links.hpp"
#include "manifest/manifest.hpp"
#include "manifest/reserved_names.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"
#include "util/fs.hpp"
#include "util/thread_pool.hpp"

namespace ccpack::pack {
namespace fs = std::filesystem;
using manifest::EntryType;

namespace {

constexpr std::uint64_t kLargeFile = 4ULL << 20;

std::string special_kind(mode_t mode) {
  if (S_ISSOCK(mode)) return "socket";
  if (S_ISFIFO(mode)) return "FIFO";
  if (S_ISCHR(mode)) return "character device";
  if (S_ISBLK(mode)) return "block device";
  return "special file";
}

// One name in a folder as the walk found it.
struct Child {
  std::string name;
  EntryType type = EntryType::file;
  std::uint32_t mode = 0;
  std::uint64_t size = 0;
  std::string link_target;
  FileStamp stamp;  // without its device, numbered by flatten
  std::uint64_t dev = 0;
};

// `stamp` with its device `dev` numbered in `devices`.
FileStamp number_device(FileStamp stamp, std::uint64_t dev, std::vector<std::uint64_t>& devices) {
  auto it = std::find(devices.begin(), devices.end(), dev);
  stamp.dev = static_cast<std::uint32_t>(it - devices.begin());
  if (it == devices.end()) devices.push_back(dev);
  return stamp;
}

// Builds the child for one name from its lstat; refuses special files and names the manifest (JSON, UTF-8) cannot
// hold. Symlinks are judged once the whole tree is known (check_links). `source()` gives its path on disk (built
// for messages only); `at` is its name for readlinkat in `dir_fd`.
template <typename Source>
Child make_child(std::string name, const Source& source, const struct stat& st, int dir_fd, const char* at) {
  // defence: create-utf8
  if (!is_valid_utf8(at)) {
    throw Error("cannot pack " + quoted_path(source()) + ": its name is not valid UTF-8 (the manifest is JSON); rename it");
  }
  Child e;
  e.name = std::move(name);
  e.mode = st.st_mode & 0777;
  e.stamp = stamp_of(st, nullptr);
  e.dev = static_cast<std::uint64_t>(st.st_dev);
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
    ssize_t n = ::readlinkat(dir_fd, at, buf, sizeof buf);
    if (n < 0) throw_errno("cannot read symlink " + quoted_path(source()));
    e.link_target.assign(buf, static_cast<std::size_t>(n));
    // defence: create-utf8
    if (!is_valid_utf8(e.link_target)) {
      throw Error("cannot pack symlink " + quoted_path(source()) + ": its target is not valid UTF-8 (the manifest is JSON)");
    }
  } else {
    throw Error("refusing to pack " + special_kind(st.st_mode) + " " + quoted_path(source()) +
                ": only files, folders and symlinks can be packed");
  }
  return e;
}

// One folder's children in name order, with the listings of its subfolders. Subfolders are listed in parallel
// (a cache holds thousands of folders, and lstat is most of create's serial time), then flattened in the
// order a sequential depth-first walk would give, so the result does not depend on scheduling.
struct Listing {
  std::vector<Child> children;
  std::vector<std::string> skipped;
  std::vector<std::unique_ptr<Listing>> subfolders;  // one per folder in `children`, in the same order
};

void list_folder(UniqueFd dir_fd, const fs::path& dir, const std::string& archive_dir, bool at_root, Listing& out) {
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
    if (const char* why = transient_reason(name, S_ISDIR(st.st_mode), at_root)) {
      std::string path = archive_dir;
      path.append(1, '/').append(name);
      std::string skipped = escaped(path);
      skipped.append(" (").append(why).append(")");
      out.skipped.push_back(std::move(skipped));
      continue;
    }
    if (S_ISDIR(st.st_mode)) subfolder_names.push_back(name);
    const char* at = name.c_str();  // `name` outlives the call: it is copied into the child, not moved
    out.children.push_back(make_child(
        name, [&dir, at] { return dir / at; }, st, dir_fd.get(), at));
  }
  std::vector<std::string>().swap(names);
  out.subfolders.resize(subfolder_names.size());
  use_thread_pool();
  oneapi::tbb::parallel_for(std::size_t{0}, subfolder_names.size(), [&](std::size_t i) {
    const std::string& name = subfolder_names[i];
    UniqueFd sub(::openat(dir_fd.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!sub.valid()) throw_errno("cannot read folder " + quoted_path(dir / name));
    out.subfolders[i] = std::make_unique<Listing>();
    list_folder(std::move(sub), dir / name, archive_dir + "/" + name, false, *out.subfolders[i]);
  });
}

// Appends a listing to `out` in walk order (each folder before its children), below the folder entry `parent`;
// frees each part once it is in the list.
void flatten(Listing& listing, std::uint32_t parent, ScanResult& out) {
  std::size_t sub = 0;
  for (Child& c : listing.children) {
    std::uint32_t i = out.entries.append(parent, c.name, c.type, c.mode, c.size, c.link_target);
    out.stamps.push_back(number_device(c.stamp, c.dev, out.devices));
    if (c.type == EntryType::dir) {
      flatten(*listing.subfolders[sub], i, out);
      listing.subfolders[sub++].reset();
    }
  }
  std::vector<Child>().swap(listing.children);
  for (std::string& s : listing.skipped) out.skipped.push_back(std::move(s));
}

// Refuses a symlink that the restore would refuse: resolved through the other links of the tree it was scanned
// with (manifest/links.hpp owns the rule), it must stay inside its cache folder.
void check_links(const std::vector<manifest::CacheDir>& dirs, const manifest::EntryList& entries) {
  bool any_link = false;
  for (std::size_t i = 0; i < entries.size() && !any_link; ++i) any_link = entries.type(i) == EntryType::symlink;
  if (!any_link) return;  // nothing to resolve: the tree is not built (0.05 s at 100k files)
  manifest::EntryTree tree(entries.size());
  std::vector<std::pair<std::size_t, std::uint32_t>> links;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    std::uint32_t parent = entries.parent(i);
    manifest::EntryTree::AddResult added = parent == manifest::EntryList::kNoParent
                                               ? tree.add(entries.name(i), entries.type(i), entries.link_target(i))
                                               : tree.add_child(parent, entries.name(i), entries.type(i), entries.link_target(i));
    // A scan lists each name once, folders first: every add succeeds, so node numbers are entry indices.
    if (added.status != manifest::EntryTree::Added::ok || added.node != i)
      throw Error("internal error: scanned tree is inconsistent");
    if (entries.type(i) == EntryType::symlink) links.emplace_back(i, added.node);
  }
  for (auto [i, node] : links) {
    manifest::EntryTree::LinkVerdict verdict = tree.resolve_link(node);
    // defence: links-create
    if (verdict == manifest::EntryTree::LinkVerdict::inside) continue;
    std::string path = entries.path(i);
    std::string what =
        "refusing to pack symlink " + quoted_path(source_path(dirs, path)) + " -> '" + escaped(entries.link_target(i)) + "': ";
    if (verdict == manifest::EntryTree::LinkVerdict::loops) {
      throw Error(what + "resolving it follows more than " + std::to_string(manifest::kMaxLinkHops) + " symlinks (a loop)");
    }
    std::string_view component = manifest::component_of(path);
    auto root = std::find_if(dirs.begin(), dirs.end(), [&](const manifest::CacheDir& d) { return d.name == component; });
    throw Error(what + "it leads outside " + quoted_path(root->dir) + " (replace it with the file it points to)");
  }
}

int group_of(const SourceEntry& e) { return archive_group(e.type, e.size); }

// The entries of `walk` (in walk order) in archive order, with their stamps.
ScanResult in_archive_order(ScanResult& walk) {
  const manifest::EntryList& w = walk.entries;
  std::vector<std::uint32_t> order(w.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::uint32_t>(i);
  // The rule of sort_in_archive_order: folders keep walk order (parents first); the rest by group, then path. Each
  // path is built once (one block of text) for the sort: building both paths in every comparison took 0.1 s at
  // 100k files.
  std::vector<int> group(w.size());
  std::vector<std::uint64_t> path_at(w.size() + 1, 0);
  std::string paths;
  for (std::size_t i = 0; i < w.size(); ++i) {
    group[i] = archive_group(w.type(i), w.file_size(i));
    path_at[i] = paths.size();
    if (group[i] != 0) w.append_path(paths, i);
  }
  path_at[w.size()] = paths.size();
  auto path = [&](std::uint32_t i) { return std::string_view(paths).substr(path_at[i], path_at[i + 1] - path_at[i]); };
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    if (group[a] != group[b]) return group[a] < group[b];
    if (group[a] == 0) return false;
    return path(a) < path(b);
  });
  std::string().swap(paths);
  ScanResult out;
  out.stamps.reserve(order.size());
  std::vector<std::uint32_t> moved_to(order.size(), manifest::EntryList::kNoParent);
  for (std::uint32_t i : order) {
    std::uint32_t p = w.parent(i);
    moved_to[i] = out.entries.append_from(w, i, p == manifest::EntryList::kNoParent ? p : moved_to[p]);
    out.stamps.push_back(walk.stamps[i]);
  }
  out.skipped = std::move(walk.skipped);
  out.devices = std::move(walk.devices);
  return out;
}

}  // namespace

int archive_group(EntryType type, std::uint64_t size) {
  switch (type) {
    case EntryType::dir:
      return 0;
    case EntryType::file:
      return size >= kLargeFile ? 1 : 2;
    case EntryType::symlink:
      return 3;
  }
  return 4;
}

namespace {

std::uint64_t nanoseconds(const timespec& t) {
  return static_cast<std::uint64_t>(t.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(t.tv_nsec);
}

}  // namespace

FileStamp stamp_of(const struct stat& st, std::vector<std::uint64_t>* devices) {
  FileStamp s;
  s.ino = st.st_ino;
  s.mtime_ns = nanoseconds(st.st_mtim);
  s.ctime_ns = nanoseconds(st.st_ctim);
  s.dev = static_cast<std::uint32_t>(st.st_dev);
  if (devices != nullptr) {
    auto dev = static_cast<std::uint64_t>(st.st_dev);
    auto it = std::find(devices->begin(), devices->end(), dev);
    s.dev = static_cast<std::uint32_t>(it - devices->begin());
    if (it == devices->end()) devices->push_back(dev);
  }
  return s;
}

bool FileStamp::matches(const struct stat& st, std::uint32_t device) const {
  return st.st_ino == ino && nanoseconds(st.st_mtim) == mtime_ns && nanoseconds(st.st_ctim) == ctime_ns && dev == device;
}

std::string source_path(const std::vector<manifest::CacheDir>& dirs, std::string_view path) {
  std::string_view component = manifest::component_of(path);
  auto root = std::find_if(dirs.begin(), dirs.end(), [&](const manifest::CacheDir& d) { return d.name == component; });
  if (root == dirs.end()) return std::string(path);
  std::string out = root->dir.native();
  std::string_view rel = manifest::relative_of(path);
  if (!rel.empty()) {
    out += '/';
    out += rel;
  }
  return out;
}

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

ScanResult keep_only(ScanResult& scanned, const std::function<bool(const std::string& path)>& keep) {
  const manifest::EntryList& w = scanned.entries;
  constexpr std::uint32_t kNone = manifest::EntryList::kNoParent;
  std::vector<char> wanted(w.size(), 0);
  std::string path;
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (w.type(i) == EntryType::dir) {
      wanted[i] = w.parent(i) == kNone ? 1 : wanted[i];
      continue;
    }
    path.clear();
    w.append_path(path, i);
    if (!keep(path)) continue;
    wanted[i] = 1;
    // Folders come before what is inside them, and a wanted folder's own folders are wanted already.
    for (std::uint32_t p = w.parent(i); p != kNone && wanted[p] == 0; p = w.parent(p)) wanted[p] = 1;
  }
  ScanResult out;
  std::vector<std::uint32_t> moved_to(w.size(), kNone);
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (wanted[i] == 0) continue;
    std::uint32_t p = w.parent(i);
    moved_to[i] = out.entries.append_from(w, i, p == kNone ? p : moved_to[p]);
    out.stamps.push_back(scanned.stamps[i]);
  }
  out.skipped = std::move(scanned.skipped);
  out.devices = std::move(scanned.devices);
  return out;
}

ScanResult scan(const std::vector<manifest::CacheDir>& dirs) {
  ScanResult walk;
  for (const manifest::CacheDir& root : dirs) {
    struct stat st {};
    if (::stat(root.dir.c_str(), &st) != 0) throw_errno("cannot read " + root.name + " cache folder " + quoted_path(root.dir));
    if (!S_ISDIR(st.st_mode)) throw Error(root.name + " cache folder " + quoted_path(root.dir) + " is not a folder");
    UniqueFd fd(::open(root.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd.valid()) throw_errno("cannot read " + root.name + " cache folder " + quoted_path(root.dir));
    // defence: create-utf8
    if (!is_valid_utf8(root.dir.native())) {
      throw Error("cannot pack " + root.name + " cache folder " + quoted_path(root.dir) +
                  ": its path is not valid UTF-8 (the manifest is JSON); rename it");
    }
    Child c = make_child(
        root.name, [&root] { return root.dir; }, st, fd.get(), ".");
    std::uint32_t at = walk.entries.append(manifest::EntryList::kNoParent, c.name, c.type, c.mode, c.size, c.link_target);
    walk.stamps.push_back(number_device(c.stamp, c.dev, walk.devices));
    Listing listing;
    list_folder(std::move(fd), root.dir, root.name, true, listing);
    flatten(listing, at, walk);
  }
  ScanResult out = in_archive_order(walk);
  walk = ScanResult();
  check_links(dirs, out.entries);
  // The walk's many small blocks are free now but held by the allocator: give the whole pages back before the
  // packer allocates the compressor (peak RSS is bounded: docs/PERFORMANCE.md).
  ::malloc_trim(0);
  return out;
}

}  // namespace ccpack::pack
