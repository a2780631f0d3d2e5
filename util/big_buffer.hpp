// Large, page-aligned buffers of their own mappings, and zstd's allocation hooks for its large blocks.
//
// Restore and create move hundreds of MB through a handful of big buffers (zstd's 128 MiB window, 1-4 MiB batches
// and chunks). Their own mappings give the memory back to the system when they go (malloc may keep it), and
// BufferPool hands the same buffers out again, so the stream is not page-faulted through fresh memory chunk after
// chunk (that was the top kernel cost of restore in perf). They are not advised onto transparent huge pages: on a
// virtual machine whose free memory the host takes back (virtio-balloon free page reporting, which the 2-core dev VM
// has), a fresh huge page is backed again page by page by the host: 200 MiB first touched took 440-640 ms in huge
// pages against 100-130 ms in 4 KiB pages once the memory had been free for 2 s (17-20 ms in huge pages right after
// it was freed), and the benchmark's create and restore of the fixture paid it every run (docs/PERFORMANCE.md).
// The system's own THP policy still applies. Buffers are never zero-filled by us: the kernel's fresh pages already
// are, and their content is always overwritten before use.
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

// Allocation hooks for zstd contexts: large blocks in mappings of their own, small ones through malloc.
void* big_alloc(void* opaque, std::size_t size);
void big_free(void* opaque, void* address);

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
