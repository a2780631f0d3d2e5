// See folder_lock.hpp. A bounded wait polls flock(LOCK_NB): flock has no timeout of its own, and an alarm signal
// would be process-wide state changed inside a library call.
#include "unpack/folder_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <thread>

#include "manifest/cache_dir.hpp"
#include "util/error.hpp"

namespace ccpack::unpack {
namespace fs = std::filesystem;

namespace {

constexpr std::chrono::milliseconds kPollInterval{50};

std::string seconds_text(std::chrono::milliseconds ms) {
  const auto count = ms.count();
  return count % 1000 == 0 ? std::to_string(count / 1000) + " s" : std::to_string(count) + " ms";
}

// True when the lock was taken; false when another process holds it (only with `nonblocking`).
bool try_flock(int fd, bool nonblocking, const fs::path& folder) {
  while (::flock(fd, LOCK_EX | (nonblocking ? LOCK_NB : 0)) != 0) {
    if (errno == EWOULDBLOCK && nonblocking) return false;
    if (errno != EINTR) throw_errno("cannot lock folder " + quoted_path(folder));
  }
  return true;
}

UniqueFd take_lock(const fs::path& folder, const LockWait& wait) {
  UniqueFd fd(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) throw_errno("cannot open folder " + quoted_path(folder));
  if (try_flock(fd.get(), true, folder)) return fd;
  if (wait.on_wait) wait.on_wait(folder);
  if (!wait.timeout) {
    (void)try_flock(fd.get(), false, folder);
    return fd;
  }
  const auto deadline = std::chrono::steady_clock::now() + *wait.timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(kPollInterval);
    if (try_flock(fd.get(), true, folder)) return fd;
  }
  throw Error("cannot lock folder " + quoted_path(folder) +
              ": another ccpack restore or purge of its cache folders still holds it after " + seconds_text(*wait.timeout));
}

}  // namespace

fs::path resolve_cache_folder(const fs::path& given) {
  fs::path dir = manifest::normal_folder(given);  // "/p/ind/" is "/p/ind", whoever made the CacheDir
  struct stat st {};
  if (::lstat(dir.c_str(), &st) == 0 && S_ISLNK(st.st_mode) && ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return fs::canonical(dir);
  }
  return dir;
}

std::vector<UniqueFd> lock_folders(std::vector<fs::path> folders, const LockWait& wait) {
  std::sort(folders.begin(), folders.end());
  folders.erase(std::unique(folders.begin(), folders.end()), folders.end());
  std::vector<UniqueFd> locks;
  locks.reserve(folders.size());
  for (const fs::path& folder : folders) locks.push_back(take_lock(folder, wait));
  return locks;
}

}  // namespace ccpack::unpack
