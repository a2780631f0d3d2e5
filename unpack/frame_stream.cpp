// See frame_stream.hpp. The tar parser is a small state machine fed whatever the decompressor produced: a header
// or end block may straddle two chunks (block_ collects it), file data never moves (pieces point into the chunk).
#include "unpack/frame_stream.hpp"

#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <charconv>
#include <optional>

#include "manifest/tar.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"
#include "util/interrupt.hpp"

namespace ccpack::unpack {

using manifest::Entry;
using manifest::EntryType;
using manifest::kTarBlock;

namespace {
constexpr std::size_t kWholeStepBytes = 32 << 10;
}  // namespace

std::string quoted(const Entry& e) { return "'" + escaped(e.path) + "'"; }

std::string entry_name(const Entry& e, std::size_t index) { return "entry " + std::to_string(index) + " " + quoted(e); }

FrameDecoder::FrameDecoder() : dctx_(ZSTD_createDCtx_advanced(ZSTD_customMem{big_alloc, big_free, nullptr})) {
  if (dctx_ == nullptr) throw Error("zstd: cannot create a decompression context");
}

FrameDecoder::~FrameDecoder() { ZSTD_freeDCtx(dctx_); }

char* FrameDecoder::whole_buffer(std::size_t size) {
  if (whole_.size() < size) {
    whole_ = BigBuffer();  // the old one goes first: the two are never held at once
    whole_ = BigBuffer(size);
  }
  return whole_.data();
}

FrameStream::FrameStream(const Archive& a, FrameDecoder& decoder, std::size_t frame, std::uint64_t tar_offset, Progress& progress,
                         std::uint64_t whole_limit)
    : a_(a),
      m_(a.manifest),
      f_(a.manifest.frames[frame]),
      frame_(frame),
      last_frame_(frame + 1 == a.manifest.frames.size()),
      progress_(progress),
      dctx_(decoder.get()),
      input_(kInputBytes),
      in_left_(f_.compressed_size),
      in_offset_(a.header.header_size + f_.offset),
      tar_offset_(tar_offset),
      next_entry_(f_.first_entry),
      end_entry_(f_.first_entry + f_.entry_count),
      archive_name_(quoted_path(a.path)) {
  ZSTD_DCtx_reset(dctx_, ZSTD_reset_session_and_parameters);  // keeps the window's memory
  ZSTD_DCtx_setParameter(dctx_, ZSTD_d_windowLogMax, manifest::kMaxWindowLog);
  if (f_.raw_size <= whole_limit) {
    // One block more than recorded, so a frame that decodes to more is caught by the size check below, by name.
    whole_size_ = static_cast<std::size_t>(f_.raw_size) + ZSTD_BLOCKSIZE_MAX;
    whole_ = decoder.whole_buffer(whole_size_);
    ZSTD_DCtx_setParameter(dctx_, ZSTD_d_stableOutBuffer, 1);
  }
  in_ = {input_.data(), 0, 0};
}

std::uint64_t FrameStream::memory(const manifest::Frame& f, int window_log, std::size_t tokens) {
  const std::uint64_t input = kInputBytes + (f.compressed_size <= kHeldFrameBytes ? f.compressed_size : 0);
  if (f.raw_size <= kWholeFrameBytes) return f.raw_size + ZSTD_BLOCKSIZE_MAX + input;
  return std::min(f.raw_size, std::uint64_t{1} << window_log) + tokens * kChunkBytes + input;
}

bool FrameStream::next(Chunk& chunk) {
  if (frame_done_) return false;
  interrupt::check();  // SIGINT/SIGTERM: the installer removes the staging folders (util/interrupt.hpp)
  if (!authenticated_ && authenticates(a_)) authenticate();
  chunk.size = 0;
  chunk.pieces.clear();
  if (whole_ != nullptr) {
    chunk.base = whole_ + raw_in_frame_;
    while (chunk.size < kChunkBytes && !frame_done_) fill_whole(chunk);
  } else {
    if (chunk.buffer.size() == 0) chunk.buffer = BigBuffer(kChunkBytes);
    chunk.base = chunk.buffer.data();
    while (chunk.size < kChunkBytes && !frame_done_) fill(chunk);
  }
  parse(chunk);
  if (frame_done_) finish();
  return true;
}

std::string FrameStream::frame_name() const { return archive_name_ + ": frame " + std::to_string(frame_); }

// The frame's compressed bytes, read and hashed before zstd sees any of them: into held_ when they are at most
// kHeldFrameBytes (then decoded from there: in_ holds them all), else through the input buffer, to be read again
// (page-cache copies: the frame's compressed size) and hashed again as they are decoded.
void FrameStream::authenticate() {
  const bool hold = f_.compressed_size <= kHeldFrameBytes;
  if (hold) held_ = BigBuffer(static_cast<std::size_t>(f_.compressed_size));
  Sha256 hash;
  std::uint64_t offset = in_offset_;
  for (std::uint64_t done = 0; done != f_.compressed_size;) {
    interrupt::check();
    std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(f_.compressed_size - done, input_.size()));
    char* into = hold ? held_.data() + done : input_.data();
    std::size_t got = a_.read_payload(into, want, offset);
    if (got != want) throw IntegrityError(archive_name_ + " is truncated inside frame " + std::to_string(frame_));
    hash.update(into, got);
    offset += got;
    done += got;
  }
  // defence: frame-sha256-first
  if (hash.finish() != f_.sha256) throw IntegrityError(frame_name() + ": SHA-256 of the compressed bytes mismatch");
  authenticated_ = true;
  if (hold) {
    in_ = {held_.data(), held_.size(), 0};
    in_offset_ += in_left_;
    in_left_ = 0;
  }
}

// The next piece of the frame's compressed bytes into the input buffer, hashed, once zstd has taken the last.
void FrameStream::read_input() {
  if (in_.pos != in_.size || in_left_ == 0) return;
  std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(in_left_, input_.size()));
  std::size_t got = a_.read_payload(input_.data(), want, in_offset_);
  if (got != want) throw IntegrityError(archive_name_ + " is truncated inside frame " + std::to_string(frame_));
  frame_hash_.update(input_.data(), got);
  in_ = {input_.data(), got, 0};
  in_offset_ += got;
  in_left_ -= got;
}

// Decodes through zstd's window into the chunk's own buffer.
void FrameStream::fill(Chunk& c) {
  read_input();
  ZSTD_outBuffer out{c.data() + c.size, kChunkBytes - c.size, 0};
  std::size_t rc = ZSTD_decompressStream(dctx_, &out, &in_);
  if (ZSTD_isError(rc)) throw IntegrityError(frame_name() + " is corrupt: " + ZSTD_getErrorName(rc));
  c.size += out.pos;
  end_of_frame(rc, out.pos);
}

// Decodes straight into the frame's buffer, behind the chunk's bytes. zstd gets at most kWholeStepBytes of input
// per call, so a chunk ends soon after kChunkBytes (at a ratio of 40, a call adds about 1.3 MB).
void FrameStream::fill_whole(Chunk& c) {
  read_input();
  std::size_t before = raw_in_frame_;
  ZSTD_outBuffer out{whole_, whole_size_, before};
  ZSTD_inBuffer step{in_.src, std::min(in_.size, in_.pos + kWholeStepBytes), in_.pos};
  std::size_t rc = ZSTD_decompressStream(dctx_, &out, &step);
  in_.pos = step.pos;
  if (ZSTD_isError(rc)) {
    if (ZSTD_getErrorCode(rc) == ZSTD_error_dstSize_tooSmall) {
      throw IntegrityError(frame_name() + " decompresses to more than its recorded size");
    }
    throw IntegrityError(frame_name() + " is corrupt: " + ZSTD_getErrorName(rc));
  }
  c.size += out.pos - before;
  end_of_frame(rc, out.pos - before);
}

// After a call to zstd that produced `produced` bytes and returned `rc`: the size checks, and at the frame's end
// its compressed size and SHA-256.
void FrameStream::end_of_frame(std::size_t rc, std::size_t produced) {
  raw_in_frame_ += produced;
  if (raw_in_frame_ > f_.raw_size) throw IntegrityError(frame_name() + " decompresses to more than its recorded size");
  if (rc == 0) {
    if (in_.pos != in_.size || in_left_ != 0) throw IntegrityError(frame_name() + " ends before its recorded compressed size");
    if (raw_in_frame_ != f_.raw_size) throw IntegrityError(frame_name() + " decompresses to fewer bytes than recorded");
    // defence: frame-sha256
    if (held_.size() == 0 && frame_hash_.finish() != f_.sha256)
      throw IntegrityError(frame_name() + ": SHA-256 of the compressed bytes mismatch");
    frame_done_ = true;
  } else if (in_.pos == in_.size && in_left_ == 0 && produced == 0) {
    throw IntegrityError(frame_name() + " is truncated (the zstd frame does not end)");
  }
}

// The frame is over: it must end where the manifest says, after its last entry (or the end of the tar stream).
void FrameStream::finish() const {
  if (!last_frame_) {
    // defence: frame-ends-after-entries
    if (phase_ == Phase::end || phase_ == Phase::done) {
      throw IntegrityError(frame_name() + " holds the end of the tar stream, but is not the last frame");
    }
    // defence: frame-ends-after-entries
    if (phase_ != Phase::header || !block_.empty() || pending_pax_ || next_entry_ != end_entry_) {
      throw IntegrityError(frame_name() + " does not end after its last entry (entry " + std::to_string(end_entry_ - 1) +
                           "), as the manifest says");
    }
    return;
  }
  if (phase_ != Phase::done) throw IntegrityError(archive_name_ + ": tar stream ends early (missing end-of-archive blocks)");
  if (next_entry_ != m_.entries.size()) {
    throw IntegrityError(archive_name_ + ": the tar stream holds " + std::to_string(next_entry_) +
                         " entries, the manifest lists " + std::to_string(m_.entries.size()));
  }
}

void FrameStream::parse(Chunk& c) {
  std::size_t pos = 0;
  while (pos < c.size) {
    std::size_t avail = c.size - pos;
    switch (phase_) {
      case Phase::header:
      case Phase::end: {
        std::size_t take = std::min(avail, kTarBlock - block_.size());
        block_.append(c.data() + pos, take);
        pos += take;
        tar_offset_ += take;
        if (block_.size() == kTarBlock) on_block(c, pos);
        break;
      }
      case Phase::pax: {
        std::size_t take = std::min<std::uint64_t>(avail, pax_need_ - pax_.size());
        pax_.append(c.data() + pos, take);
        pos += take;
        tar_offset_ += take;
        if (pax_.size() == pax_need_) {
          pending_pax_ = true;
          phase_ = Phase::header;
        }
        break;
      }
      case Phase::data: {
        std::size_t take = take_data(c, pos, avail);
        pos += take;
        tar_offset_ += take;
        break;
      }
      case Phase::padding: {
        std::size_t take = std::min<std::uint64_t>(avail, pad_left_);
        pos += take;
        tar_offset_ += take;
        pad_left_ -= take;
        if (pad_left_ == 0) phase_ = Phase::header;
        break;
      }
      case Phase::done:
        throw IntegrityError(archive_name_ + ": data after the end of the tar stream");
    }
  }
}

// File data in the chunk: one piece of the current file, written by the later stages straight from the chunk.
std::size_t FrameStream::take_data(Chunk& c, std::size_t pos, std::size_t avail) {
  std::size_t take = std::min<std::uint64_t>(avail, data_left_);
  const std::uint64_t size = m_.entries.file_size(current_);
  Piece p;
  p.entry = static_cast<std::uint32_t>(current_);
  p.at = pos;
  p.length = take;
  p.file_offset = size - data_left_;
  p.last = take == data_left_;
  p.large = large_;
  c.pieces.push_back(std::move(p));
  data_left_ -= take;
  if (data_left_ == 0) {
    large_.reset();
    pad_left_ = manifest::tar_padding(size);
    phase_ = pad_left_ > 0 ? Phase::padding : Phase::header;
  }
  return take;
}

// A whole 512-byte block: an end-of-archive block, a pax header, or the header of the next manifest entry.
void FrameStream::on_block(Chunk& c, std::size_t pos) {
  // The block's place for messages, built in a reused string: this runs once per entry.
  std::string& where = where_;
  where.assign(archive_name_).append(": tar offset ");
  char digits[24];
  where.append(digits, std::to_chars(digits, digits + sizeof digits, tar_offset_ - kTarBlock).ptr);
  if (on_end_block(where)) return;
  manifest::UstarBlock b = manifest::decode_ustar_block(block_.data(), where);
  block_.clear();
  if (b.typeflag == 'x') {
    start_pax(b, where);
    return;
  }
  if (pending_pax_) {
    manifest::apply_pax_records(std::string_view(pax_).substr(0, pax_size_), b, where);
    pending_pax_ = false;
  }
  std::size_t index = match_entry(b, where);
  start_entry(c, pos, index);
}

// The two zero blocks that end the stream; false when the block is not one (and none was due).
bool FrameStream::on_end_block(const std::string& where) {
  if (phase_ == Phase::end) {
    if (!manifest::is_zero_block(block_.data())) throw IntegrityError(where + ": expected the second end-of-archive block");
    block_.clear();
    phase_ = Phase::done;
    return true;
  }
  if (!manifest::is_zero_block(block_.data())) return false;
  if (pending_pax_) throw IntegrityError(where + ": pax header without an entry");
  block_.clear();
  phase_ = Phase::end;
  return true;
}

// A pax 'x' header: its records are collected, then applied to the header that follows.
void FrameStream::start_pax(const manifest::UstarBlock& b, const std::string& where) {
  if (pending_pax_) throw IntegrityError(where + ": two pax headers in a row");
  if (b.size > 1 << 20) throw IntegrityError(where + ": pax header too large");
  pax_.clear();
  pax_need_ = b.size + manifest::tar_padding(b.size);
  pax_size_ = b.size;
  phase_ = Phase::pax;
}

// Checks an entry header against the next manifest entry of this frame (path, type, mode, size, link); returns
// its index.
std::size_t FrameStream::match_entry(const manifest::UstarBlock& b, const std::string& where) {
  if (next_entry_ >= m_.entries.size()) throw IntegrityError(where + ": entry '" + escaped(b.path) + "' is not in the manifest");
  if (next_entry_ >= end_entry_) {
    throw IntegrityError(where + ": entry '" + escaped(b.path) + "' is past the last entry the manifest gives frame " +
                         std::to_string(frame_));
  }
  std::size_t index = next_entry_++;
  const manifest::EntryList& entries = m_.entries;
  std::optional<EntryType> typed = manifest::entry_type_of(b.typeflag);
  if (!typed) {
    throw IntegrityError(where + ": entry '" + escaped(b.path) + "' has tar type '" + escaped(std::string(1, b.typeflag)) +
                         "', which ccpack never writes");
  }
  EntryType type = *typed;
  std::string_view path = b.path;
  if (type == EntryType::dir && !path.empty() && path.back() == '/') path.remove_suffix(1);
  path_.clear();
  entries.append_path(path_, index);
  // defence: tar-header-match
  if (path != path_ || type != entries.type(index) || (b.mode & 07777) != entries.mode(index) ||
      (type == EntryType::file && b.size != entries.file_size(index)) || (type != EntryType::file && b.size != 0) ||
      (type == EntryType::symlink && b.link_target != entries.link_target(index))) {
    throw IntegrityError(where + ": tar header '" + escaped(b.path) + "' does not match manifest " +
                         entry_name(entries[index], index));
  }
  return index;
}

// A matched file goes to the data phase (folders and symlinks are made from the manifest, unpack/extractor.cpp).
void FrameStream::start_entry(Chunk& c, std::size_t pos, std::size_t index) {
  if (m_.entries.type(index) != EntryType::file) return;
  const std::uint64_t size = m_.entries.file_size(index);
  progress_.advance(size);
  if (size == 0) {
    c.pieces.push_back(Piece{static_cast<std::uint32_t>(index), pos, 0, 0, true, nullptr});
    return;
  }
  current_ = index;
  data_left_ = size;
  phase_ = Phase::data;
  if (size > c.size - pos) large_ = std::make_shared<LargeFile>();  // spans chunks: opened by the writer first
}

}  // namespace ccpack::unpack
