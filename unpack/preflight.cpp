// Permission and free-space checks before an install's payload is fetched; see preflight.hpp.
#include "unpack/preflight.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <map>

#include "util/error.hpp"
#include "util/fs.hpp"

namespace ccpack::unpack {
namespace fs = std::filesystem;

namespace {

std::string uid_text(uid_t uid) { return "uid " + std::to_string(uid); }

std::string mode_text(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// What to do about a folder owned by `owner` that this process cannot write.
std::string fix_for(uid_t owner) {
  return "run as " + uid_text(owner) + " (securityContext runAsUser), or set fsGroup so that the volume is group-writable";
}

bool can_write(const fs::path& p) { return ::faccessat(AT_FDCWD, p.c_str(), W_OK | X_OK, AT_EACCESS) == 0; }

void check_parent(const PreflightTarget& t) {
  struct stat st {};
  if (::stat(t.parent.c_str(), &st) != 0)
    throw_errno("cannot restore into " + quoted_path(t.target) + ": cannot stat " + quoted_path(t.parent));
  // defence: preflight-writable
  if (!can_write(t.parent)) {
    std::string where = "cannot restore " + t.component + " into " + quoted_path(t.target) + ": ";
    if (errno == EROFS) throw Error(where + quoted_path(t.parent) + " is on a read-only file system");
    throw Error(where + "its folder " + quoted_path(t.parent) + " is owned by " + uid_text(st.st_uid) + " (mode " +
                mode_text(st.st_mode) + ") and " + uid_text(::geteuid()) + " cannot write to it; " + fix_for(st.st_uid));
  }
  struct stat tt {};
  if (::lstat(t.target.c_str(), &tt) != 0) return;  // absent: created by the swap
  uid_t me = ::geteuid();
  bool sticky_other = (st.st_mode & S_ISVTX) != 0 && me != 0 && tt.st_uid != me && st.st_uid != me;
  // defence: preflight-writable
  if (sticky_other || !can_write(t.target)) {
    throw Error("cannot restore " + t.component + " into " + quoted_path(t.target) + ": it is owned by " + uid_text(tt.st_uid) +
                " (mode " + mode_text(tt.st_mode) + ") and " + uid_text(me) + " cannot replace it" +
                (sticky_other ? " in the sticky folder " + quoted_path(t.parent) : std::string()) + "; " + fix_for(tt.st_uid) +
                ", or restore into another folder");
  }
}

FreeSpace statvfs_probe(const fs::path& folder) {
  struct statvfs v {};
  if (::statvfs(folder.c_str(), &v) != 0) throw_errno("cannot read the free space of " + quoted_path(folder));
  FreeSpace f;
  f.bytes = static_cast<std::uint64_t>(v.f_bavail) * v.f_frsize;
  if (v.f_files != 0) f.inodes = static_cast<std::uint64_t>(v.f_favail);
  return f;
}

std::uint64_t mb_up(std::uint64_t bytes) { return (bytes + 999'999) / 1'000'000; }
std::uint64_t mb_down(std::uint64_t bytes) { return bytes / 1'000'000; }

struct Need {
  fs::path folder;  // the first parent on this file system, named in the message
  std::string components;
  std::uint64_t bytes = 0;
  std::uint64_t files = 0;
};

void check_space(const std::vector<PreflightTarget>& targets, const FreeSpaceProbe& probe) {
  std::map<dev_t, Need> by_device;  // components restored onto one file system add up
  for (const PreflightTarget& t : targets) {
    struct stat st {};
    if (::stat(t.parent.c_str(), &st) != 0) throw_errno("cannot stat " + quoted_path(t.parent));
    Need& n = by_device[st.st_dev];
    if (n.folder.empty()) n.folder = t.parent;
    n.components += (n.components.empty() ? "" : " and ") + t.component;
    n.bytes += t.bytes;
    n.files += t.files;
  }
  for (const auto& [device, n] : by_device) {
    FreeSpace f = probe ? probe(n.folder) : statvfs_probe(n.folder);
    std::string where = "cannot restore " + n.components + ": ";
    // defence: preflight-space
    if (n.bytes > f.bytes) {
      throw Error(where + "needs " + std::to_string(mb_up(n.bytes)) + " MB, " + std::to_string(mb_down(f.bytes)) +
                  " MB free on " + quoted_path(n.folder) + " (" + std::to_string(n.bytes) + " bytes needed, " +
                  std::to_string(f.bytes) + " free); free space there or restore into a larger volume");
    }
    if (f.inodes && n.files > *f.inodes) {
      throw Error(where + "needs " + std::to_string(n.files) + " files, " + std::to_string(*f.inodes) + " inodes free on " +
                  quoted_path(n.folder));
    }
  }
}

}  // namespace

void preflight(const std::vector<PreflightTarget>& targets, const FreeSpaceProbe& probe) {
  for (const PreflightTarget& t : targets) check_parent(t);
  check_space(targets, probe);
}

}  // namespace ccpack::unpack
