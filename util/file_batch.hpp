// Reads many small files with a handful of system calls for their opens and reads.
//
// Create reads every file of a cache whole (open, one read, a stat to prove it did not change, close); at 100,000
// small files those 400,000 system calls are most of its kernel time. Here the opens of up to kChunk files go to
// the kernel in one io_uring submission (one ring per thread, liburing), then their reads in another; each file's
// fstat and close are then plain calls on its descriptor. io_uring has no inline statx: it hands every one to a
// worker thread of its own, and those hand-offs cost more than they saved (at 100k files under one CPU on the
// 2-core dev VM, create's CPU was 4.4-4.8 s with fstat and close here against 5.6-6.0 s with statx and close
// hard-linked behind each read in the ring; docs/PERFORMANCE.md). What the caller gets per file is what the four
// calls would have told it; it judges the result itself (pack/filesystem_source.cpp). Where io_uring is
// unavailable (an old kernel, a container's seccomp policy) read_files returns false once and the caller reads
// the files itself.
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
  // Out: the errno of the open, read or fstat that failed (0: none did), the bytes read, and the file's status
  // after the read (fstat's).
  int error = 0;
  std::uint64_t got = 0;
  struct stat after {};
};

class FileBatch {
 public:
  // Files of one submission (one entry each in the ring).
  static constexpr unsigned kChunk = 64;

  // Whether this thread has a ring (false when this process cannot use io_uring).
  static bool available();
  // Reads `files` through this thread's ring; false (nothing read) when it has none.
  static bool read_files(std::span<FileRead> files);
};

}  // namespace ccpack
