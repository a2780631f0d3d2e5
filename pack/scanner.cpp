#include "pack/scanner.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

#include "manifest/manifest.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace ccpack::pack {
namespace fs = std::filesystem;
using manifest::EntryType;

namespace {

constexpr std::uint64_t kLargeFile = 4ULL << 20;

// Transient names that must not be shipped; returns the reason or nullptr.
const char* transient_reason(std::string_view name, bool is_dir, bool at_root) {
  if (is_dir && at_root && name == "locks") return "lock folder";
  if (is_dir && name.starts_with("tmp.pid_")) return "Triton temporary folder";
  if (!is_dir && name.ends_with(".lock")) return "lock file";
  if (name.starts_with(".ccpack-")) return "ccpack marker";
  if (name.find(".ccpack-staging.") != std::string_view::npos || name.find(".ccpack-old.") != std::string_view::npos) {
    return "ccpack restore debris";
  }
  return nullptr;
}

std::string special_kind(mode_t mode) {
  if (S_ISSOCK(mode)) return "socket";
  if (S_ISFIFO(mode)) return "FIFO";
  if (S_ISCHR(mode)) return "character device";
  if (S_ISBLK(mode)) return "block device";
  return "special file";
}

struct Walker {
  const manifest::CacheDir& root;
  ScanResult& out;

  void add(const std::string& archive_path, const fs::path& source, const struct stat& st) {
    SourceEntry e;
    e.path = archive_path;
    e.source = source;
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
      ssize_t n = ::readlink(source.c_str(), buf, sizeof buf);
      if (n < 0) throw_errno("cannot read symlink " + quoted_path(source));
      e.link_target.assign(buf, static_cast<std::size_t>(n));
      fs::path rel = fs::path(std::string(manifest::relative_of(archive_path))).parent_path() / e.link_target;
      std::string norm = rel.lexically_normal().string();
      if (e.link_target.empty() || e.link_target.front() == '/' || norm == ".." || norm.starts_with("../")) {
        throw Error("refusing to pack symlink " + quoted_path(source) + " -> '" + e.link_target +
                    "': it leads outside " + quoted_path(root.dir) + " (replace it with the file it points to)");
      }
    } else {
      throw Error("refusing to pack " + special_kind(st.st_mode) + " " + quoted_path(source) + ": only files, folders and symlinks can be packed");
    }
    out.entries.push_back(std::move(e));
  }

  void walk(const fs::path& dir, const std::string& archive_dir, bool at_root) {
    std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
    if (!d) throw_errno("cannot read folder " + quoted_path(dir));
    std::vector<std::string> names;
    while (dirent* ent = ::readdir(d.get())) {
      std::string_view name = ent->d_name;
      if (name == "." || name == "..") continue;
      names.emplace_back(name);
    }
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) {
      fs::path source = dir / name;
      struct stat st {};
      if (::lstat(source.c_str(), &st) != 0) {
        if (errno == ENOENT) continue;  // vanished since readdir: nothing to pack
        throw_errno("cannot stat " + quoted_path(source));
      }
      std::string archive_path = archive_dir + "/" + name;
      if (const char* why = transient_reason(name, S_ISDIR(st.st_mode), at_root)) {
        out.skipped.push_back(archive_path + " (" + why + ")");
        continue;
      }
      add(archive_path, source, st);
      if (S_ISDIR(st.st_mode)) walk(source, archive_path, false);
    }
  }
};

int group_of(const SourceEntry& e) {
  switch (e.type) {
    case EntryType::dir: return 0;
    case EntryType::file: return e.size >= kLargeFile ? 1 : 2;
    case EntryType::symlink: return 3;
  }
  return 4;
}

}  // namespace

ScanResult scan(const std::vector<manifest::CacheDir>& dirs) {
  ScanResult out;
  for (const manifest::CacheDir& root : dirs) {
    struct stat st {};
    if (::stat(root.dir.c_str(), &st) != 0) throw_errno("cannot read " + root.name + " cache folder " + quoted_path(root.dir));
    if (!S_ISDIR(st.st_mode)) throw Error(root.name + " cache folder " + quoted_path(root.dir) + " is not a folder");
    Walker w{root, out};
    w.add(root.name, root.dir, st);
    w.walk(root.dir, root.name, true);
  }
  // Folders keep walk order (parents first); the rest is ordered by group, then path.
  std::stable_sort(out.entries.begin(), out.entries.end(), [](const SourceEntry& a, const SourceEntry& b) {
    int ga = group_of(a);
    int gb = group_of(b);
    if (ga != gb) return ga < gb;
    if (ga == 0) return false;
    return a.path < b.path;
  });
  return out;
}

}  // namespace ccpack::pack
