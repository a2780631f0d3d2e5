// See streamed_pickle.hpp.
#include "unpack/streamed_pickle.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <utility>

#include "util/error.hpp"
#include "util/fs.hpp"

namespace ccpack::unpack {

StreamedPickle::StreamedPickle(const std::function<std::unique_ptr<PickleStream>(PickleStream::Write)>& make, int fd,
                               int root, std::string relative, std::string what)
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

// What the rewrite wrote, turned back into the packed bytes, and the bytes it held after them.
void StreamedPickle::back_to_packed() {
  const PickleStream& s = *stream_;
  UniqueFd reader(::openat(root_, relative_.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  std::string out(static_cast<std::size_t>(s.written()), '\0');
  if (!reader.valid() || pread_full(reader.get(), out.data(), out.size(), 0, what_) != out.size()) {
    throw_errno("cannot read back " + what_);
  }
  std::string packed = s.packed_prefix(out);
  pwrite_all(fd_, packed.data(), packed.size(), 0, what_);
  pwrite_all(fd_, s.pending().data(), s.pending().size(), static_cast<off_t>(s.consumed()), what_);
  as_packed_ = true;
}

}  // namespace ccpack::unpack
