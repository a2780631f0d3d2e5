// Reads many small files with a handful of system calls instead of four per file.
//
// Create reads every file of a cache whole (open, one read, a stat to prove it did not change, close); at 100,000
// small files those 400,000 system calls are most of its kernel time, and on a virtual machine each one costs an
// exit. Here each file's open, read, statx and close go to the kernel through one io_uring ring per thread
// (liburing): the opens of up to kChunk files in one submission, then each file's read, statx and close, hard-linked
// so they run in that order even when the read is short. What the caller gets per file is what the four calls
// would have told it; it judges the result itself (pack/filesystem_source.cpp). Where io_uring is unavailable (an
// old kernel, a container's seccomp policy) read_files returns false once and the caller reads the files itself.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <span>

namespace ccpack {

struct FileRead {
  // In: the file's path, where its bytes go and how many are expected. One byte past `size` is asked for too
  // (into a byte of the reader's own), so a file that grew shows as got == size + 1.
  const char* path = nullptr;
  char* data = nullptr;
  std::uint64_t size = 0;
  // Out: the errno of the open, read or statx that failed (0: none did), the bytes read, and the file's status
  // after the read (st_dev, st_ino, st_mode, st_size, st_mtim, st_ctim filled from statx).
  int error = 0;
  std::uint64_t got = 0;
  struct stat after {};
};

class FileBatch {
 public:
  // Files of one submission (3 entries each in the ring).
  static constexpr unsigned kChunk = 64;

  // Whether this thread has a ring (false when this process cannot use io_uring).
  static bool available();
  // Reads `files` through this thread's ring; false (nothing read) when it has none.
  static bool read_files(std::span<FileRead> files);
};

}  // namespace ccpack
