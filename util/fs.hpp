// Small POSIX file helpers: an owning file descriptor, full reads and writes, a recursive remove, and
// `AtomicFile`, the only way ccpack publishes a file.
//
// AtomicFile writes into an unnamed O_TMPFILE inode in the destination folder (a plain temporary name where the
// filesystem lacks O_TMPFILE), and only `commit()` gives it its name: linked under a temporary name, then renamed
// over the destination. The destructor never commits, so an error, an exception or a kill before commit leaves
// the destination as it was and, with O_TMPFILE, no debris at all.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <string>

namespace ccpack {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  [[nodiscard]] int get() const noexcept { return fd_; }
  [[nodiscard]] bool valid() const noexcept { return fd_ >= 0; }
  int release() noexcept {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1) noexcept;

 private:
  int fd_ = -1;
};

// Writes everything or throws Error naming `what`.
void write_all(int fd, const void* data, std::size_t size, const std::string& what);
void pwrite_all(int fd, const void* data, std::size_t size, off_t offset, const std::string& what);
// The same, for callers that name the file only when it fails (a restore writes a hundred thousand): 0, or the
// errno of the write that failed (EINTR is retried).
[[nodiscard]] int write_fully(int fd, const void* data, std::size_t size) noexcept;
[[nodiscard]] int pwrite_fully(int fd, const void* data, std::size_t size, off_t offset) noexcept;
// Reads exactly `size` bytes at `offset`; returns the count actually read (short only at end of file).
std::size_t pread_full(int fd, void* data, std::size_t size, off_t offset, const std::string& what);

// Removes a tree without following symlinks; missing is fine. Throws Error on failure.
void remove_tree(const std::filesystem::path& path);

// The process's file-mode creation mask, read without changing it (the "Umask:" line of /proc/self/status, Linux
// 4.7+; umask(2) cannot read it without setting it, which is process-wide). 0777 when it cannot be read, so that a
// caller that puts back the bits the umask took puts back every bit.
[[nodiscard]] mode_t current_umask();

// Display of a path in messages: quoted with single quotes, its bytes escaped (util/escape.hpp) so that any
// name, even one holding a newline, stays on the message's one line.
[[nodiscard]] std::string quoted_path(const std::filesystem::path& path);

class AtomicFile {
 public:
  // Opens a temporary beside `destination`; throws Error naming the folder when it is missing or not writable.
  explicit AtomicFile(std::filesystem::path destination, mode_t mode = 0644);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  [[nodiscard]] int fd() const noexcept { return fd_.get(); }
  [[nodiscard]] const std::filesystem::path& destination() const noexcept { return destination_; }
  void write(const void* data, std::size_t size);
  // fsync (when asked), then give the file its name. After commit the object is inert.
  void commit(bool durable = true);

 private:
  std::filesystem::path destination_;
  std::filesystem::path named_temp_;  // only without O_TMPFILE
  UniqueFd fd_;
  mode_t mode_;
  bool committed_ = false;
};

// A scratch file no one else can see and that nothing leaves behind: an unnamed one (O_TMPFILE) in `dir` ("" is
// the current folder), else one created in $TMPDIR (/tmp when unset or empty) and unlinked at once. Throws Error
// "cannot create <what>".
[[nodiscard]] UniqueFd open_scratch_file(const std::filesystem::path& dir, const std::string& what);

// Test-only seam: the call that opens AtomicFile's unnamed O_TMPFILE inode. Unit tests swap it for one that fails
// with EOPNOTSUPP or EISDIR, as a filesystem without O_TMPFILE does, so the named-temporary path runs everywhere.
// Production code never sets it (nothing outside tests/ calls set_tmpfile_open), and no environment variable does.
namespace testing {
using OpenFn = int (*)(const char* path, int flags, mode_t mode);
void set_tmpfile_open(OpenFn open);  // nullptr: ::open again
}  // namespace testing

}  // namespace ccpack
