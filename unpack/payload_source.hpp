// Where an archive's payload bytes come from while it is checked and extracted: its file (the default, pread), or
// a stream that arrives while extraction runs (`restore oci://`, where the download and the extraction overlap and
// no copy of the archive is written anywhere).
//
// For a stream the extractor decodes the frames one after the other (a file's frames are decoded several at once),
// so it reads the payload strictly in order and a stream needs no random access: StreamedPayload is a bounded queue between a
// producer thread (the download) and the reader. The producer starts on the first read, so a restore that finds every folder
// already restored transfers no payload byte. Its bytes are not trusted, and cannot be read twice: the extractor checks each
// frame's SHA-256 at the frame's end and every file's as it is written (an archive file's frames are checked whole
// before decoding instead: FrameStream::authenticates). A producer failure (network, integrity) is rethrown to the reader with
// its type; destroying the queue cancels and joins the producer.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace ccpack::unpack {

class PayloadSource {
 public:
  virtual ~PayloadSource() = default;
  // Reads up to `size` bytes at archive offset `offset`; fewer only at the end of the payload. Throws Error.
  virtual std::size_t read(void* data, std::size_t size, std::uint64_t offset) = 0;
};

class StreamedPayload : public PayloadSource {
 public:
  // Hands bytes to the queue, in order; blocks while the queue is full; throws once the reader has gone.
  using Push = std::function<void(const char* data, std::size_t size)>;
  // `cancelled` turns true when the reader has gone: the producer should stop its transfer (push also throws).
  using Producer = std::function<void(const Push& push, const std::atomic<bool>& cancelled)>;

  // The stream delivers the archive bytes from offset `first` on (the payload's start).
  StreamedPayload(std::uint64_t first, Producer producer, std::size_t max_buffered = 64u << 20);
  ~StreamedPayload() override;
  StreamedPayload(const StreamedPayload&) = delete;
  StreamedPayload& operator=(const StreamedPayload&) = delete;

  std::size_t read(void* data, std::size_t size, std::uint64_t offset) override;
  // Whether the producer was ever started (a no-op restore must not start it).
  [[nodiscard]] bool started() const;

 private:
  void push(const char* data, std::size_t size);
  void run();

  Producer producer_;
  std::size_t max_buffered_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::string> chunks_;
  std::size_t front_used_ = 0;  // bytes of chunks_.front() already read
  std::size_t buffered_ = 0;
  std::uint64_t next_offset_;  // archive offset of the next byte the reader gets
  bool done_ = false;
  std::atomic<bool> cancelled_{false};
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace ccpack::unpack
