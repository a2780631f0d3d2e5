#include "util/fs.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <random>
#include <system_error>

#include "util/error.hpp"
#include "util/escape.hpp"

namespace ccpack {

namespace fs = std::filesystem;

void UniqueFd::reset(int fd) noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

int write_fully(int fd, const void* data, std::size_t size) noexcept {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return 0;
}

int pwrite_fully(int fd, const void* data, std::size_t size, off_t offset) noexcept {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::pwrite(fd, p, size, offset);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    p += n;
    size -= static_cast<std::size_t>(n);
    offset += n;
  }
  return 0;
}

void write_all(int fd, const void* data, std::size_t size, const std::string& what) {
  if (int err = write_fully(fd, data, size); err != 0) throw Error(errno_message("cannot write " + what, err));
}

void pwrite_all(int fd, const void* data, std::size_t size, off_t offset, const std::string& what) {
  if (int err = pwrite_fully(fd, data, size, offset); err != 0) throw Error(errno_message("cannot write " + what, err));
}

std::size_t pread_full(int fd, void* data, std::size_t size, off_t offset, const std::string& what) {
  char* p = static_cast<char*>(data);
  std::size_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(fd, p + done, size - done, offset + static_cast<off_t>(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno("cannot read " + what);
    }
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  return done;
}

void remove_tree(const fs::path& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (ec) throw Error("cannot remove " + quoted_path(path) + ": " + ec.message());
}

mode_t current_umask() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Umask:", 0) != 0) continue;
    std::size_t at = line.find_first_not_of(" \t", 6);
    if (at == std::string::npos) break;
    unsigned mask = 0;
    const char* last = line.data() + line.size();
    auto [end, ec] = std::from_chars(line.data() + at, last, mask, 8);
    if (ec == std::errc{} && end == last && mask <= 0777) return static_cast<mode_t>(mask);
    break;
  }
  return 0777;
}

std::string quoted_path(const fs::path& path) { return "'" + escaped(path.native()) + "'"; }

namespace {
int open_file(const char* path, int flags, mode_t mode) { return ::open(path, flags, mode); }
std::atomic<testing::OpenFn> tmpfile_open{open_file};
}  // namespace

void testing::set_tmpfile_open(OpenFn open) { tmpfile_open.store(open != nullptr ? open : open_file); }

AtomicFile::AtomicFile(fs::path destination, mode_t mode) : destination_(std::move(destination)), mode_(mode) {
  fs::path dir = destination_.parent_path();
  if (dir.empty()) dir = ".";
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    throw Error("cannot create " + quoted_path(destination_) + ": folder " + quoted_path(dir) + " does not exist");
  }
  if (!S_ISDIR(st.st_mode))
    throw Error("cannot create " + quoted_path(destination_) + ": " + quoted_path(dir) + " is not a folder");
  fd_.reset(tmpfile_open.load()(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, mode_));
  if (fd_.valid()) return;
  if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) throw_errno("cannot create " + quoted_path(destination_));
  std::random_device rd;
  for (int attempt = 0; attempt < 16 && !fd_.valid(); ++attempt) {
    named_temp_ = destination_;
    named_temp_ += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(rd());
    fd_.reset(::open(named_temp_.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, mode_));
    if (!fd_.valid() && errno != EEXIST) throw_errno("cannot create " + quoted_path(named_temp_));
  }
  if (!fd_.valid()) throw Error("cannot create a temporary file beside " + quoted_path(destination_));
}

AtomicFile::~AtomicFile() {
  if (!committed_ && !named_temp_.empty()) ::unlink(named_temp_.c_str());
}

void AtomicFile::write(const void* data, std::size_t size) { write_all(fd_.get(), data, size, quoted_path(destination_)); }

void AtomicFile::commit(bool durable) {
  if (committed_) return;
  if (::fchmod(fd_.get(), mode_) != 0) throw_errno("cannot set the mode of " + quoted_path(destination_));
  if (durable && ::fsync(fd_.get()) != 0) throw_errno("cannot flush " + quoted_path(destination_));
  if (named_temp_.empty()) {
    // Give the unnamed inode a temporary name, then rename it over the destination (linkat cannot replace).
    std::random_device rd;
    std::string proc = "/proc/self/fd/" + std::to_string(fd_.get());
    for (int attempt = 0; attempt < 16; ++attempt) {
      fs::path temp = destination_;
      temp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(rd());
      if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, temp.c_str(), AT_SYMLINK_FOLLOW) == 0) {
        named_temp_ = temp;
        break;
      }
      if (errno != EEXIST) throw_errno("cannot name " + quoted_path(destination_));
    }
    if (named_temp_.empty()) throw Error("cannot name " + quoted_path(destination_));
  }
  if (::rename(named_temp_.c_str(), destination_.c_str()) != 0) {
    int err = errno;
    ::unlink(named_temp_.c_str());
    named_temp_.clear();
    throw Error(errno_message("cannot rename into " + quoted_path(destination_), err));
  }
  committed_ = true;
  fd_.reset();
  if (durable) {
    fs::path dir = destination_.parent_path();
    UniqueFd dfd(::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dfd.valid()) ::fsync(dfd.get());
  }
}

UniqueFd open_scratch_file(const fs::path& dir, const std::string& what) {
  UniqueFd fd(::open(dir.empty() ? "." : dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
  if (fd.valid()) return fd;
  const char* tmpdir = std::getenv("TMPDIR");
  std::string name =
      (tmpdir != nullptr && *tmpdir != '\0' ? std::string(tmpdir) : std::string("/tmp")) + "/ccpack-scratch.XXXXXX";
  fd.reset(::mkstemp(name.data()));
  if (!fd.valid()) throw_errno("cannot create " + what);
  ::unlink(name.c_str());
  return fd;
}

}  // namespace ccpack
