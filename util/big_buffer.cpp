#include "util/big_buffer.hpp"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <string>
#include <utility>

namespace ccpack {
namespace {

constexpr std::size_t kLarge = 2 << 20;  // big_alloc maps blocks of at least this size
constexpr std::size_t kHeader = 64;      // big_alloc keeps the mapping size in front of the block

constexpr std::size_t kReportingBit = 5;  // VIRTIO_BALLOON_F_REPORTING (the virtio specification, 5.5.3)

void* map_pages(std::size_t size) {
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  if (huge_pages_advised()) (void)::madvise(p, size, MADV_HUGEPAGE);  // best effort
  return p;
}

}  // namespace

bool free_pages_reported(const char* driver_dir) {
  std::error_code ec;
  for (std::filesystem::directory_iterator it(driver_dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename().string().rfind("virtio", 0) != 0) continue;  // the driver's devices: virtio0, ...
    std::ifstream features(it->path() / "features");
    std::string bits;
    if (std::getline(features, bits) && bits.size() > kReportingBit && bits[kReportingBit] == '1') return true;
  }
  return false;
}

bool huge_pages_advised() {
  static const bool advised = !free_pages_reported("/sys/bus/virtio/drivers/virtio_balloon");
  return advised;
}

BigBuffer::BigBuffer(std::size_t size) : size_(size) {
  data_ = static_cast<char*>(map_pages(size));
  if (data_ == nullptr) throw std::bad_alloc();
}

BigBuffer::~BigBuffer() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

BigBuffer::BigBuffer(BigBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

BigBuffer& BigBuffer::operator=(BigBuffer&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::munmap(data_, size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void* big_alloc(void* /*opaque*/, std::size_t size) {
  if (size < kLarge) {
    auto* p = static_cast<char*>(std::malloc(size + kHeader));
    if (p == nullptr) return nullptr;
    std::size_t tag = 0;
    std::memcpy(p, &tag, sizeof tag);
    return p + kHeader;
  }
  auto* p = static_cast<char*>(map_pages(size + kHeader));
  if (p == nullptr) return nullptr;
  std::size_t total = size + kHeader;
  std::memcpy(p, &total, sizeof total);
  return p + kHeader;
}

void big_free(void* /*opaque*/, void* address) {
  if (address == nullptr) return;
  char* p = static_cast<char*>(address) - kHeader;
  std::size_t total = 0;
  std::memcpy(&total, p, sizeof total);
  if (total == 0) {
    std::free(p);
  } else {
    ::munmap(p, total);
  }
}

}  // namespace ccpack

namespace ccpack {

std::shared_ptr<BigBuffer> BufferPool::take(std::size_t size) {
  if (size > buffer_size_) return std::make_shared<BigBuffer>(size);
  std::unique_ptr<BigBuffer> b;
  {
    std::lock_guard lock(mutex_);
    if (!free_.empty()) {
      b = std::move(free_.back());
      free_.pop_back();
    }
  }
  if (!b) b = std::make_unique<BigBuffer>(buffer_size_);
  return {b.release(), [this](BigBuffer* done) {
            std::lock_guard lock(mutex_);
            free_.emplace_back(done);
          }};
}

}  // namespace ccpack
