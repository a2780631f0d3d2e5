#include "unpack/swap_set.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>

#include "util/error.hpp"
#include "util/fs.hpp"

namespace ccpack::unpack {
namespace fs = std::filesystem;

namespace {

enum class How { none, renamed, exchanged, two_renames };

bool unsupported(int err) { return err == EINVAL || err == ENOSYS || err == EOPNOTSUPP; }

bool target_exists(const fs::path& target) {
  struct stat st {};
  if (::lstat(target.c_str(), &st) != 0) return false;
  if (!S_ISDIR(st.st_mode)) throw Error("cannot restore into " + quoted_path(target) + ": it exists and is not a folder");
  return true;
}

// Where renameat2's flags are unsupported (some filesystems, gVisor): the old target aside, then the new one in.
How swap_by_two_renames(const StagedFolder& f) {
  bool had_target = target_exists(f.target);
  if (had_target && ::rename(f.target.c_str(), f.aside.c_str()) != 0)
    throw_errno("cannot move " + quoted_path(f.target) + " aside");
  if (::rename(f.staging.c_str(), f.target.c_str()) != 0) {
    int err = errno;
    if (had_target) (void)::rename(f.aside.c_str(), f.target.c_str());
    throw Error(errno_message("cannot move the restored folder into " + quoted_path(f.target), err));
  }
  return had_target ? How::two_renames : How::renamed;
}

How swap_one(const StagedFolder& f, bool flags_unsupported) {
  if (flags_unsupported) return swap_by_two_renames(f);
  if (::renameat2(AT_FDCWD, f.staging.c_str(), AT_FDCWD, f.target.c_str(), RENAME_NOREPLACE) == 0) return How::renamed;
  if (unsupported(errno)) return swap_by_two_renames(f);
  if (errno != EEXIST && errno != ENOTEMPTY) throw_errno("cannot move the restored folder into " + quoted_path(f.target));
  (void)target_exists(f.target);  // RENAME_EXCHANGE would swap a file in just as well
  if (::renameat2(AT_FDCWD, f.staging.c_str(), AT_FDCWD, f.target.c_str(), RENAME_EXCHANGE) != 0) {
    if (unsupported(errno)) return swap_by_two_renames(f);
    throw_errno("cannot swap the restored folder into " + quoted_path(f.target));
  }
  return How::exchanged;
}

// Best effort: a failure here leaves whole folders, which the next run's markers and debris removal sort out.
void undo(const StagedFolder& f, How how) {
  switch (how) {
    case How::renamed:
      (void)::rename(f.target.c_str(), f.staging.c_str());
      break;
    case How::exchanged:
      (void)::renameat2(AT_FDCWD, f.staging.c_str(), AT_FDCWD, f.target.c_str(), RENAME_EXCHANGE);
      break;
    case How::two_renames:
      if (::rename(f.target.c_str(), f.staging.c_str()) == 0) (void)::rename(f.aside.c_str(), f.target.c_str());
      break;
    case How::none:
      break;
  }
}

}  // namespace

void swap_all(const std::vector<StagedFolder>& folders, const FaultHook& fault) {
  std::vector<How> done;
  try {
    for (std::size_t i = 0; i < folders.size(); ++i) {
      if (fault) (void)fault(FaultPoint::swap, i);
      bool no_flags = fault && fault(FaultPoint::rename_flags, i);
      done.push_back(swap_one(folders[i], no_flags));
    }
  } catch (...) {
    // defence: swap-rollback
    for (std::size_t i = done.size(); i-- > 0;) undo(folders[i], done[i]);
    throw;
  }
  for (std::size_t i = 0; i < folders.size(); ++i) {
    if (done[i] == How::exchanged) remove_tree(folders[i].staging);
    if (done[i] == How::two_renames) remove_tree(folders[i].aside);
  }
}

}  // namespace ccpack::unpack
