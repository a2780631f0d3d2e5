// Large, page-aligned buffers backed by transparent huge pages where the kernel allows them.
//
// Restore and create move hundreds of MB through a handful of big buffers (zstd's 128 MiB window, 4 MiB chunks).
// With 4 KiB pages every first touch is a page fault, and on virtual machines a fault is expensive (it showed as
// the top kernel cost of restore in perf). madvise(MADV_HUGEPAGE) cuts the faults 512-fold. Buffers are never
// zero-filled by us: the kernel's fresh pages already are, and their content is always overwritten before use.
#pragma once

#include <cstddef>

struct ZSTD_customMem_s;

namespace ccpack {

class BigBuffer {
 public:
  BigBuffer() = default;
  explicit BigBuffer(std::size_t size);
  ~BigBuffer();
  BigBuffer(BigBuffer&& other) noexcept;
  BigBuffer& operator=(BigBuffer&& other) noexcept;
  BigBuffer(const BigBuffer&) = delete;
  BigBuffer& operator=(const BigBuffer&) = delete;

  [[nodiscard]] char* data() noexcept { return data_; }
  [[nodiscard]] const char* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  char* data_ = nullptr;
  std::size_t size_ = 0;
};

// Allocation hooks for zstd contexts: large blocks through mmap + MADV_HUGEPAGE, small ones through malloc.
void* huge_alloc(void* opaque, std::size_t size);
void huge_free(void* opaque, void* address);

}  // namespace ccpack

#include <memory>
#include <mutex>
#include <vector>

namespace ccpack {

// Recycles BigBuffers of one size among the tokens of a pipeline, so the tar stream is not page-faulted through
// fresh memory chunk after chunk. Must outlive every buffer it hands out.
class BufferPool {
 public:
  explicit BufferPool(std::size_t buffer_size) : buffer_size_(buffer_size) {}
  [[nodiscard]] std::size_t buffer_size() const noexcept { return buffer_size_; }
  // A buffer of at least `size` bytes (of buffer_size() when `size` is 0 or fits).
  [[nodiscard]] std::shared_ptr<BigBuffer> take(std::size_t size = 0);

 private:
  std::size_t buffer_size_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<BigBuffer>> free_;
};

}  // namespace ccpack
