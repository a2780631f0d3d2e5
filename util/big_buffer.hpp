// Large, page-aligned buffers of their own mappings, and zstd's allocation hooks for its large blocks.
//
// Restore and create move hundreds of MB through a handful of big buffers (zstd's 128 MiB window, 1-4 MiB batches
// and chunks). Their own mappings give the memory back to the system when they go (malloc may keep it), and
// BufferPool hands the same buffers out again, so the stream is not page-faulted through fresh memory chunk after
// chunk (that was the top kernel cost of restore in perf). Buffers are never zero-filled by us: the kernel's fresh
// pages already are, and their content is always overwritten before use.
//
// Huge pages: the mappings are advised onto transparent huge pages (fewer faults, and zstd's random reads into its
// window and match tables miss the TLB less), except on a virtual machine whose host takes free memory back
// (a virtio balloon that reports free pages): there a fresh huge page is backed again by the host 4 KiB at a time,
// and costs several times its 4 KiB pages. Measured on the 2-core dev VM (free page reporting), 200 MiB first
// written after the memory had been free for 3 s (scripts/bench/first_touch.py): 500-560 ms in huge pages, 130 ms
// in 4 KiB pages (23 ms in huge pages right after a free). On an H100 host (a balloon without reporting) the same
// package with the advice switched off made the fixture's create under two CPUs 0.81 s instead of 0.72 s and its
// restore 0.38 s instead of 0.32 s (docs/PERFORMANCE.md).
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

// Whether this process advises its big mappings onto huge pages: decided once, from the virtio balloon drivers'
// devices in sysfs (free_pages_reported).
[[nodiscard]] bool huge_pages_advised();

// Whether a device of the virtio balloon driver folder `driver_dir` (sysfs:
// /sys/bus/virtio/drivers/virtio_balloon) offers free page reporting (VIRTIO_BALLOON_F_REPORTING, feature bit 5,
// in its `features` file of one '0' or '1' per bit). A missing folder or file counts as no.
[[nodiscard]] bool free_pages_reported(const char* driver_dir);

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
