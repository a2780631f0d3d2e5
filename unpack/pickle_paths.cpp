// See pickle_paths.hpp; the opcode table is pickle_ops.hpp. The rewrite never interprets a value beyond the strs
// it moves.
#include "unpack/pickle_paths.hpp"

#include <algorithm>
#include <optional>
#include <utility>

#include "unpack/pickle_ops.hpp"

namespace ccpack::unpack {
namespace {

using namespace pickle;  // NOLINT(google-build-using-namespace): the opcode table

constexpr std::uint64_t kMaxFrame = 4 << 20;       // a FRAME's content held whole, at most
constexpr std::uint64_t kWholeOp = 64 << 10;       // an opcode outside a frame held whole, at most
constexpr std::size_t kMaxLine = 64 << 10;         // a text-protocol argument, at most
constexpr std::size_t kOutBatch = 1 << 20;         // output handed to write in batches of about this size
constexpr int kMinElements = 2, kMaxElements = 6;  // path elements of a file that names a build folder

// The number of length bytes of an opcode whose argument is sized, else 0.
std::size_t length_bytes(Arg arg) { return arg == Arg::len1 ? 1 : arg == Arg::len4 ? 4 : arg == Arg::len8 ? 8 : 0; }

// Reads back a changed unit: its opcodes parse to its end and hold `strings` strs.
bool reads_back(std::string_view unit, std::uint64_t strings) {
  std::uint64_t seen = 0;
  std::size_t at = 0;
  while (at < unit.size()) {
    std::optional<Op> op = op_at(unit, at);
    if (!op) return false;
    seen += is_str(op->code) ? 1 : 0;
    at = op->end;
  }
  return seen == strings;
}

}  // namespace

PickleStream::PickleStream(const std::vector<std::string>& roots, std::string to, IsFile is_file, Write write)
    : to_(std::move(to)), is_file_(std::move(is_file)), write_(std::move(write)) {
  for (const std::string& root : roots) {
    if (root != to_) roots_.insert(root);
  }
}

// One wanted() a step, its answer kept: a unit is complete exactly when it wants the bytes it holds (a need that
// is not yet the whole unit, e.g. an opcode whose length is still to come, is always more than buf_ holds), so
// the step after the bytes that complete it takes it, even when this call's bytes are used up.
bool PickleStream::feed(std::string_view bytes) {
  while (!failed_) {
    if (pass_left_ > 0) {  // a large argument: straight through
      if (bytes.empty()) break;
      std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(pass_left_, bytes.size()));
      flush();
      write_(bytes.substr(0, n));
      written_ += n;
      consumed_ += n;
      pass_left_ -= n;
      bytes.remove_prefix(n);
      continue;
    }
    if (buf_.empty() && bytes.empty()) break;      // between units
    std::int64_t want = stopped_ ? -1 : wanted();  // nothing may follow STOP
    if (want >= 0 && buf_.size() == static_cast<std::size_t>(want)) {
      if (!take_unit()) fail();
      continue;
    }
    if (bytes.empty()) break;  // the unit needs more: a refusal too waits for the next bytes, as finish() does
    if (want < 0) {
      fail();
      break;
    }
    std::size_t n = std::min(static_cast<std::size_t>(want) - buf_.size(), bytes.size());
    buf_.append(bytes.substr(0, n));
    bytes.remove_prefix(n);
  }
  if (failed_) buf_.append(bytes);  // kept with the rest of what was not written (pending)
  return !failed_;
}

bool PickleStream::finish() {
  if (failed_) return false;
  if (!stopped_ || pass_left_ > 0 || !buf_.empty()) return fail();  // truncated
  flush();
  return true;
}

std::int64_t PickleStream::wanted() const {
  if (buf_.empty()) return 1;
  char code = buf_[0];
  Layout l = layout_of(code);
  std::size_t k = length_bytes(l.arg);
  if (code == kFrame) {
    if (buf_.size() < 9) return 9;
    std::uint64_t len = little_endian(buf_, 1, 8);
    return len > kMaxFrame ? -1 : static_cast<std::int64_t>(9 + len);
  }
  switch (l.arg) {
    case Arg::none:
      return 1;
    case Arg::fixed:
      return static_cast<std::int64_t>(1 + l.size);
    case Arg::len1:
    case Arg::len4:
    case Arg::len8: {
      if (buf_.size() < 1 + k) return static_cast<std::int64_t>(1 + k);
      std::uint64_t len = little_endian(buf_, 1, k);
      if (len <= kWholeOp) return static_cast<std::int64_t>(1 + k + len);
      // Enough to match any build folder, and to see a str that begins with the target already.
      std::uint64_t prefix = std::max<std::uint64_t>(roots_.longest_folder(), to_.size()) + 1;
      return static_cast<std::int64_t>(1 + k + (is_str(code) ? std::min(len, prefix) : 0));
    }
    case Arg::line:
    case Arg::two_lines: {  // scanned once: the bytes come one at a time
      int lines = l.arg == Arg::line ? 1 : 2;
      while (newlines_ < lines && scanned_ < buf_.size()) {
        if (buf_[scanned_] == '\n') ++newlines_;
        if (newlines_ < lines) ++scanned_;
      }
      if (newlines_ == lines) return static_cast<std::int64_t>(scanned_ + 1);
      return buf_.size() >= kMaxLine ? -1 : static_cast<std::int64_t>(buf_.size() + 1);
    }
    case Arg::unknown:
      return -1;
  }
  return -1;
}

bool PickleStream::take_unit() {
  if (!started_) {  // the first opcode: PROTO 2 to 5
    if (buf_.size() != 2 || buf_[0] != '\x80' || buf_[1] < 2 || buf_[1] > 5) return false;
    started_ = true;
  }
  char code = buf_[0];
  Layout l = layout_of(code);
  std::size_t k = length_bytes(l.arg);
  if (code == kFrame) return take_frame(buf_.size());
  if (k != 0) {
    std::uint64_t len = little_endian(buf_, 1, k);
    if (len > kWholeOp) return take_large(1 + k, len);
  }
  return take_op(buf_.size());
}

bool PickleStream::take_frame(std::size_t size) {
  std::string_view packed(buf_.data(), size), content = packed.substr(9);
  std::string out;
  std::uint64_t strings = 0, changed = 0;
  std::size_t at = 0, kept = 0;
  while (at < content.size()) {
    std::optional<Op> op = op_at(content, at);  // nullopt too for an opcode across the frame's end
    if (!op) return false;
    if (op->code == kFrame) return false;  // a frame inside a frame
    if (op->code == kStop) {
      if (op->end != content.size()) return false;
      stopped_ = true;
    }
    if (is_str(op->code)) {
      ++strings;
      std::string value = moved(content.substr(op->arg, op->end - op->arg));
      if (!value.empty()) {
        out.append(content.substr(kept, op->begin - kept)).append(str_header(value.size())).append(value);
        kept = op->end;
        ++changed;
      }
    }
    at = op->end;
  }
  if (changed == 0) {
    emit(packed);
  } else {
    out.append(content.substr(kept));
    if (!reads_back(out, strings)) return false;
    emit_changed(packed, frame_header(out.size()) + out);
    moved_ += changed;
  }
  drop(size);
  return true;
}

bool PickleStream::take_large(std::size_t header, std::uint64_t length) {
  std::string_view packed = buf_;
  std::uint64_t prefix = packed.size() - header;
  // Only the start of the str is here: it may move, but it names no build folder.
  std::string value = is_str(packed[0]) ? moved(packed.substr(header), false) : std::string();
  if (value.empty()) {
    emit(packed);
  } else {
    emit_changed(packed, str_header(length + value.size() - prefix) + value);  // the new length: T replaces B
    ++moved_;
  }
  pass_left_ = length - prefix;
  drop(packed.size());
  return true;
}

bool PickleStream::take_op(std::size_t size) {
  std::string_view packed(buf_.data(), size);
  std::optional<Op> op = op_at(packed, 0);
  if (!op || op->end != size) return false;
  if (op->code == kStop) stopped_ = true;
  std::string value = is_str(op->code) ? moved(packed.substr(op->arg)) : std::string();
  if (value.empty()) {
    emit(packed);
  } else {
    std::string out = str_header(value.size()) + value;
    if (!reads_back(out, 1)) return false;
    emit_changed(packed, out);
    ++moved_;
  }
  drop(size);
  return true;
}

std::string PickleStream::moved(std::string_view value, bool whole) {
  if (whole) learn(value);
  if (value.size() > to_.size() && value.starts_with(to_) && value[to_.size()] == '/') return {};  // already here
  // defence: pickle-roots-linear
  std::size_t root = roots_.longest(value);  // one walk of the str's elements, whatever the number of folders
  return root == 0 ? std::string() : to_ + std::string(value.substr(root));
}

void PickleStream::learn(std::string_view value) {
  if (value.size() < 2 || value.front() != '/' || value.size() > kWholeOp) return;
  std::size_t slash = value.size();
  for (int elements = 1; elements <= kMaxElements; ++elements) {
    slash = value.rfind('/', slash - 1);
    if (slash == 0 || slash == std::string_view::npos) return;
    if (elements >= kMinElements && is_file_(value.substr(slash + 1))) {
      std::string_view root = value.substr(0, slash);
      if (root != to_) (void)roots_.insert(root);
      return;
    }
  }
}

void PickleStream::drop(std::size_t size) {
  consumed_ += size;
  buf_.erase(0, size);
  scanned_ = 1;
  newlines_ = 0;
}

void PickleStream::emit(std::string_view bytes) {
  out_.append(bytes);
  if (out_.size() >= kOutBatch) flush();
}

void PickleStream::emit_changed(std::string_view packed, std::string_view out) {
  edits_.push_back({written_ + out_.size(), out.size(), std::string(packed)});
  emit(out);
}

void PickleStream::flush() {
  if (out_.empty()) return;
  write_(out_);
  written_ += out_.size();
  out_.clear();
}

bool PickleStream::fail() {
  failed_ = true;
  flush();
  return false;
}

std::string PickleStream::packed_prefix(std::string_view output) const {
  std::string packed;
  packed.reserve(static_cast<std::size_t>(consumed_));
  packed_prefix([&](std::uint64_t at, char* into, std::size_t n) { output.copy(into, n, static_cast<std::size_t>(at)); },
                [&](std::string_view piece) { packed.append(piece); });
  return packed;
}

void PickleStream::packed_prefix(const ReadAt& read, const Write& write) const {
  std::string piece(kOutBatch, '\0');
  auto copy = [&](std::uint64_t from, std::uint64_t to) {  // output bytes [from, to), unchanged: packed as they are
    while (from < to) {
      std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(to - from, piece.size()));
      read(from, piece.data(), n);
      write(std::string_view(piece.data(), n));
      from += n;
    }
  };
  std::uint64_t at = 0;
  for (const Edit& e : edits_) {
    copy(at, e.at);
    write(e.packed);
    at = e.at + e.size;
  }
  copy(at, written_);
}

}  // namespace ccpack::unpack
