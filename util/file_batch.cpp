#include "util/file_batch.hpp"

#include <fcntl.h>
#include <liburing.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

#include "util/error.hpp"
#include "util/fs.hpp"

namespace ccpack {
namespace {

// Set once any thread finds io_uring unusable: the others do not try again.
std::atomic<bool> g_unavailable{false};

class Ring {
 public:
  Ring() {
    if (g_unavailable.load(std::memory_order_relaxed)) return;
    int rc = io_uring_queue_init(FileBatch::kChunk, &ring_, 0);
    if (rc < 0) {
      g_unavailable.store(true, std::memory_order_relaxed);
      return;
    }
    ok_ = true;
  }
  ~Ring() {
    if (ok_) io_uring_queue_exit(&ring_);
  }
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  [[nodiscard]] bool ok() const { return ok_; }

  // The next submission entry; the ring holds a whole chunk's, so it is never full.
  io_uring_sqe* entry() {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (sqe == nullptr) throw Error("internal: the io_uring submission queue is full");
    return sqe;
  }

  // Submits what was prepared and hands each of the `count` completions to `done(tag, result)`.
  template <typename Done>
  void run(unsigned count, Done&& done) {
    int rc = 0;
    do rc = io_uring_submit_and_wait(&ring_, count);
    while (rc == -EINTR);
    if (rc < 0) throw Error(std::string("cannot submit reads to io_uring: ") + std::strerror(-rc));
    for (unsigned seen = 0; seen < count; ++seen) {
      io_uring_cqe* cqe = nullptr;
      do rc = io_uring_wait_cqe(&ring_, &cqe);
      while (rc == -EINTR);
      if (rc < 0) throw Error(std::string("cannot wait for io_uring: ") + std::strerror(-rc));
      done(cqe->user_data, cqe->res);
      io_uring_cqe_seen(&ring_, cqe);
    }
  }

 private:
  io_uring ring_{};
  bool ok_ = false;
};

// One chunk of at most kChunk files: their opens, then each open file's read, through the ring; then each file's
// fstat and close here (see file_batch.hpp for why not in the ring).
void read_chunk(Ring& ring, std::span<FileRead> files) {
  // The chunk's descriptors, closed however this returns (a failed submission throws). Each completion's data is
  // its file's index in the chunk: opens and reads go in separate submissions.
  std::array<UniqueFd, FileBatch::kChunk> fds;
  for (std::size_t k = 0; k < files.size(); ++k) {
    files[k].error = 0;
    files[k].got = 0;
    io_uring_sqe* sqe = ring.entry();
    io_uring_prep_openat(sqe, AT_FDCWD, files[k].path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0);
    io_uring_sqe_set_data64(sqe, k);
  }
  ring.run(static_cast<unsigned>(files.size()), [&](std::uint64_t k, int res) {
    fds[k] = UniqueFd(res);
    if (res < 0) files[k].error = -res;
  });

  std::array<char, FileBatch::kChunk> extra{};
  std::array<std::array<iovec, 2>, FileBatch::kChunk> iov{};
  unsigned reads = 0;
  for (std::size_t k = 0; k < files.size(); ++k) {
    if (!fds[k].valid()) continue;
    iov[k] = {iovec{files[k].data, files[k].size}, iovec{&extra[k], 1}};
    io_uring_sqe* sqe = ring.entry();
    io_uring_prep_readv(sqe, fds[k].get(), iov[k].data(), 2, 0);
    io_uring_sqe_set_data64(sqe, k);
    ++reads;
  }
  if (reads == 0) return;
  ring.run(reads, [&](std::uint64_t k, int res) {
    FileRead& f = files[k];
    if (res < 0)
      f.error = -res;
    else
      f.got = static_cast<std::uint64_t>(res);
  });
  for (std::size_t k = 0; k < files.size(); ++k) {
    if (fds[k].valid() && files[k].error == 0 && ::fstat(fds[k].get(), &files[k].after) != 0) files[k].error = errno;
  }
}

// This thread's ring, made at its first use.
Ring& this_thread_ring() {
  thread_local Ring ring;
  return ring;
}

}  // namespace

bool FileBatch::available() { return this_thread_ring().ok(); }

bool FileBatch::read_files(std::span<FileRead> files) {
  Ring& ring = this_thread_ring();
  if (!ring.ok()) return false;
  for (std::size_t at = 0; at < files.size(); at += kChunk) {
    read_chunk(ring, files.subspan(at, std::min<std::size_t>(kChunk, files.size() - at)));
  }
  return true;
}

}  // namespace ccpack
