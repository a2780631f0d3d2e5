#include "unpack/payload_source.hpp"

#include <algorithm>
#include <cstring>

#include "util/error.hpp"

namespace ccpack::unpack {

StreamedPayload::StreamedPayload(std::uint64_t first, Producer producer, std::size_t max_buffered)
    : producer_(std::move(producer)), max_buffered_(max_buffered), next_offset_(first) {}

StreamedPayload::~StreamedPayload() {
  {
    std::lock_guard lock(mutex_);
    cancelled_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool StreamedPayload::started() const {
  std::lock_guard lock(mutex_);
  return thread_.joinable();
}

void StreamedPayload::run() {
  try {
    producer_([this](const char* data, std::size_t size) { push(data, size); }, cancelled_);
  } catch (...) {
    std::lock_guard lock(mutex_);
    error_ = std::current_exception();
  }
  {
    std::lock_guard lock(mutex_);
    done_ = true;
  }
  changed_.notify_all();
}

void StreamedPayload::push(const char* data, std::size_t size) {
  std::unique_lock lock(mutex_);
  // A chunk larger than the bound still goes in when the queue is empty, so a producer never waits forever.
  changed_.wait(lock, [&] { return cancelled_ || buffered_ == 0 || buffered_ + size <= max_buffered_; });
  if (cancelled_) throw Error("the payload stream was cancelled");
  chunks_.emplace_back(data, size);
  buffered_ += size;
  lock.unlock();
  changed_.notify_all();
}

std::size_t StreamedPayload::read(void* data, std::size_t size, std::uint64_t offset) {
  std::unique_lock lock(mutex_);
  if (offset != next_offset_) {
    throw Error("the payload stream was read out of order (offset " + std::to_string(offset) + ", expected " +
                std::to_string(next_offset_) + ")");
  }
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  auto* out = static_cast<char*>(data);
  std::size_t got = 0;
  while (got < size) {
    changed_.wait(lock, [&] { return buffered_ > 0 || done_; });
    if (buffered_ == 0) {
      if (error_) std::rethrow_exception(error_);
      break;  // the stream ended: a short read, which the extractor reports as truncation
    }
    std::string& front = chunks_.front();
    std::size_t n = std::min(size - got, front.size() - front_used_);
    std::memcpy(out + got, front.data() + front_used_, n);  // NOLINT(bugprone-not-null-terminated-result): bytes, not a C string
    got += n;
    front_used_ += n;
    buffered_ -= n;
    if (front_used_ == front.size()) {
      chunks_.pop_front();
      front_used_ = 0;
    }
    changed_.notify_all();
  }
  next_offset_ += got;
  return got;
}

}  // namespace ccpack::unpack
