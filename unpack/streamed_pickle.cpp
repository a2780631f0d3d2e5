// See streamed_pickle.hpp.
#include "unpack/streamed_pickle.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#include "util/error.hpp"
#include "util/fs.hpp"

namespace ccpack::unpack {

StreamedPickle::StreamedPickle(const std::function<std::unique_ptr<PickleStream>(PickleStream::Write)>& make, int fd, int root,
                               std::string relative, std::string what)
    : fd_(fd), root_(root), relative_(std::move(relative)), what_(std::move(what)) {
  stream_ = make([fd, name = what_](std::string_view b) { write_all(fd, b.data(), b.size(), name); });
}

void StreamedPickle::piece(std::uint64_t offset, std::string_view data) {
  if (!as_packed_ && !stream_->feed(data)) back_to_packed();
  // Once the rewrite has stopped: the pieces it never took, as packed at their offsets.
  if (as_packed_ && offset + data.size() > stream_->consumed() + stream_->pending().size()) {
    pwrite_all(fd_, data.data(), data.size(), static_cast<off_t>(offset), what_);
  }
}

bool StreamedPickle::finish(std::uint64_t size) {
  if (!as_packed_ && !stream_->finish()) back_to_packed();
  if (as_packed_ && ::ftruncate(fd_, static_cast<off_t>(size)) != 0) throw_errno("cannot write " + what_);
  return !as_packed_;
}

// What the rewrite wrote, turned back into the packed bytes, and the bytes it held after them. Streamed through a
// scratch file in 1 MiB pieces (a changed unit may be longer or shorter than its packed bytes, so the file cannot
// be rewritten in place front to back): memory does not grow with the file. Without a changed unit the file
// already holds the packed bytes up to consumed().
void StreamedPickle::back_to_packed() {
  const PickleStream& s = *stream_;
  if (s.strings_rewritten() != 0) {
    UniqueFd reader(::openat(root_, relative_.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!reader.valid()) throw_errno("cannot read back " + what_);
    UniqueFd scratch(::openat(root_, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
    if (!scratch.valid()) scratch = open_scratch_file("", "a scratch file for " + what_);
    auto read_exactly = [this](int fd, std::uint64_t at, char* into, std::size_t n) {
      if (pread_full(fd, into, n, static_cast<off_t>(at), what_) != n) throw Error("cannot read back " + what_ + ": it shrank");
    };
    // defence: pickle-back-streamed
    s.packed_prefix([&](std::uint64_t at, char* into, std::size_t n) { read_exactly(reader.get(), at, into, n); },
                    [&](std::string_view piece) { write_all(scratch.get(), piece.data(), piece.size(), "a scratch file"); });
    std::string piece(1 << 20, '\0');
    for (std::uint64_t at = 0; at < s.consumed();) {
      std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(s.consumed() - at, piece.size()));
      read_exactly(scratch.get(), at, piece.data(), n);
      pwrite_all(fd_, piece.data(), n, static_cast<off_t>(at), what_);
      at += n;
    }
  }
  pwrite_all(fd_, s.pending().data(), s.pending().size(), static_cast<off_t>(s.consumed()), what_);
  as_packed_ = true;
}

}  // namespace ccpack::unpack
