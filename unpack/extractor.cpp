// The restore/verify pipeline (oneTBB parallel_pipeline):
//
//   1. serial, in order:   read each frame's compressed bytes (only the range the manifest gives it), hash them,
//                          decompress into 4 MiB chunks, and parse the tar stream. Every header is checked
//                          against the next manifest entry (path, type, mode, size, link). The chunk goes on
//                          with the folders and file pieces that lie in it.
//   1b. serial, in order:  create the chunk's folders and open its files that span chunks, off the decoder's
//                          thread (the critical path); in order, so every folder exists before a file in it.
//   2. parallel:           write the pieces: a file that lies whole in one chunk is created, written, hashed and
//                          checked here (most cache files); pieces of larger files are written with pwrite.
//   3. serial, in order:   hash the pieces of large files in order; check and close them at their last piece.
//
// Zero-copy where it matters: file data is written straight from the decompressed chunk. Memory is bounded by
// the zstd window (128 MiB) plus the chunks in flight. Symlinks are created last, after every file, so no write
// can pass through a link; folder modes are applied last, so a read-only folder can still be filled.
#include "unpack/extractor.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#define ZSTD_STATIC_LINKING_ONLY
#include <oneapi/tbb/info.h>
#include <oneapi/tbb/parallel_pipeline.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>

#include "manifest/tar.hpp"
#include "util/big_buffer.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"
#include "util/fs.hpp"
#include "util/progress.hpp"
#include "util/sha256.hpp"
#include "util/token_ring.hpp"

namespace ccpack::unpack {
namespace {

using manifest::Entry;
using manifest::EntryType;
using manifest::kTarBlock;

constexpr std::size_t kChunkBytes = 4 << 20;
constexpr std::size_t kInputBytes = 1 << 20;

struct LargeFile {
  UniqueFd fd;
  Sha256 hash;
};

struct Piece {
  std::uint32_t entry = 0;
  std::size_t at = 0;  // offset in the chunk
  std::size_t length = 0;
  std::uint64_t file_offset = 0;
  bool last = false;
  std::shared_ptr<LargeFile> large;  // null: the whole file is in this chunk
};

struct Chunk {
  BigBuffer buffer;  // kChunkBytes, allocated on first use and reused for every chunk this slot carries
  std::size_t size = 0;
  std::vector<Piece> pieces;
  std::vector<std::uint32_t> folders;  // folder entries whose headers lie in this chunk, in stream order

  [[nodiscard]] char* data() { return buffer.data(); }
};

// A folder is created with its final mode when that leaves its owner full access; others get 0700 until the end.
bool needs_final_chmod(const Entry& e) { return (e.mode & 0700) != 0700; }

// An entry path in a message: quoted and escaped, so a hostile name cannot break the message's one line.
std::string quoted(const Entry& e) { return "'" + escaped(e.path) + "'"; }

// Creates a file of an entry below a staging root: never through a symlink, never over an existing name. The
// process's umask is left alone: where it took bits of the entry's mode (`umask` holds them), fchmod puts them back.
UniqueFd create_file(int root, const Entry& e, mode_t umask) {
  std::string rel(manifest::relative_of(e.path));
  UniqueFd fd(::openat(root, rel.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, e.mode));
  if (!fd.valid()) throw_errno("cannot create " + quoted(e));
  if ((e.mode & umask) != 0 && ::fchmod(fd.get(), e.mode) != 0) throw_errno("cannot set the mode of " + quoted(e));
  return fd;
}

// Creates a folder of an entry with `mode` exactly, whatever the umask.
void create_folder(int root, const Entry& e, mode_t mode, mode_t umask) {
  std::string rel(manifest::relative_of(e.path));
  if (::mkdirat(root, rel.c_str(), mode) != 0) throw_errno("cannot create folder " + quoted(e));
  // No symlink exists yet in the staging tree (they come last), so fchmodat cannot be led astray.
  if ((mode & umask) != 0 && ::fchmodat(root, rel.c_str(), mode, 0) != 0) throw_errno("cannot set the mode of " + quoted(e));
}

std::string entry_name(const Entry& e, std::size_t index) { return "entry " + std::to_string(index) + " " + quoted(e); }

void check_digest(const Digest& got, const Entry& e, std::size_t index) {
  if (got != e.sha256) throw IntegrityError(entry_name(e, index) + ": SHA-256 mismatch (corrupt or tampered archive)");
}

class Decoder {
 public:
  Decoder(const Archive& a, Progress& progress)
      : a_(a),
        m_(a.manifest),
        progress_(progress),
        dctx_(ZSTD_createDCtx_advanced(ZSTD_customMem{huge_alloc, huge_free, nullptr})),
        input_(kInputBytes) {
    if (dctx_ == nullptr) throw Error("zstd: cannot create a decompression context");
    ZSTD_DCtx_setParameter(dctx_, ZSTD_d_windowLogMax, manifest::kMaxWindowLog);
    start_frame();
  }
  ~Decoder() { ZSTD_freeDCtx(dctx_); }
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  // Fills `chunk` with the next part of the stream; false at the end of the stream.
  bool next(Chunk& chunk) {
    if (frame_ >= m_.frames.size()) return false;
    if (chunk.buffer.size() == 0) chunk.buffer = BigBuffer(kChunkBytes);
    chunk.size = 0;
    chunk.pieces.clear();
    chunk.folders.clear();
    while (chunk.size < kChunkBytes && frame_ < m_.frames.size()) fill(chunk);
    parse(chunk);
    return true;
  }

  // Called once the stream is exhausted.
  void finish() const {
    if (phase_ != Phase::done)
      throw IntegrityError(quoted_path(a_.path) + ": tar stream ends early (missing end-of-archive blocks)");
    if (next_entry_ != m_.entries.size()) {
      throw IntegrityError(quoted_path(a_.path) + ": the tar stream holds " + std::to_string(next_entry_) +
                           " entries, the manifest lists " + std::to_string(m_.entries.size()));
    }
  }

  [[nodiscard]] const std::vector<std::size_t>& symlinks() const { return symlinks_; }
  [[nodiscard]] const std::vector<std::size_t>& folders() const { return folders_; }

 private:
  enum class Phase { header, pax, data, padding, end, done };

  void start_frame() {
    if (frame_ >= m_.frames.size()) return;
    ZSTD_DCtx_reset(dctx_, ZSTD_reset_session_only);
    const manifest::Frame& f = m_.frames[frame_];
    in_left_ = f.compressed_size;
    in_offset_ = a_.header.header_size + f.offset;
    in_ = {input_.data(), 0, 0};
    raw_in_frame_ = 0;
  }

  std::string frame_name() const { return quoted_path(a_.path) + ": frame " + std::to_string(frame_); }

  void fill(Chunk& c) {
    const manifest::Frame& f = m_.frames[frame_];
    if (in_.pos == in_.size && in_left_ > 0) {
      std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(in_left_, input_.size()));
      std::size_t got = a_.read_payload(input_.data(), want, in_offset_);
      if (got != want) throw IntegrityError(quoted_path(a_.path) + " is truncated inside frame " + std::to_string(frame_));
      frame_hash_.update(input_.data(), got);
      in_ = {input_.data(), got, 0};
      in_offset_ += got;
      in_left_ -= got;
    }
    ZSTD_outBuffer out{c.data() + c.size, kChunkBytes - c.size, 0};
    std::size_t rc = ZSTD_decompressStream(dctx_, &out, &in_);
    if (ZSTD_isError(rc)) throw IntegrityError(frame_name() + " is corrupt: " + ZSTD_getErrorName(rc));
    c.size += out.pos;
    raw_in_frame_ += out.pos;
    if (raw_in_frame_ > f.raw_size) throw IntegrityError(frame_name() + " decompresses to more than its recorded size");
    if (rc == 0) {
      if (in_.pos != in_.size || in_left_ != 0) throw IntegrityError(frame_name() + " ends before its recorded compressed size");
      if (raw_in_frame_ != f.raw_size) throw IntegrityError(frame_name() + " decompresses to fewer bytes than recorded");
      if (frame_hash_.finish() != f.sha256) throw IntegrityError(frame_name() + ": SHA-256 of the compressed bytes mismatch");
      ++frame_;
      start_frame();
    } else if (in_.pos == in_.size && in_left_ == 0 && out.pos == 0) {
      throw IntegrityError(frame_name() + " is truncated (the zstd frame does not end)");
    }
  }

  void parse(Chunk& c) {
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
          throw IntegrityError(quoted_path(a_.path) + ": data after the end of the tar stream");
      }
    }
  }

  // File data in the chunk: one piece of the current file, written by the later stages straight from the chunk.
  std::size_t take_data(Chunk& c, std::size_t pos, std::size_t avail) {
    std::size_t take = std::min<std::uint64_t>(avail, data_left_);
    const Entry& e = m_.entries[current_];
    Piece p;
    p.entry = static_cast<std::uint32_t>(current_);
    p.at = pos;
    p.length = take;
    p.file_offset = e.size - data_left_;
    p.last = take == data_left_;
    p.large = large_;
    c.pieces.push_back(std::move(p));
    data_left_ -= take;
    if (data_left_ == 0) {
      large_.reset();
      pad_left_ = manifest::tar_padding(e.size);
      phase_ = pad_left_ > 0 ? Phase::padding : Phase::header;
    }
    return take;
  }

  // A whole 512-byte block: an end-of-archive block, a pax header, or the header of the next manifest entry.
  void on_block(Chunk& c, std::size_t pos) {
    std::string where = quoted_path(a_.path) + ": tar offset " + std::to_string(tar_offset_ - kTarBlock);
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
  bool on_end_block(const std::string& where) {
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
  void start_pax(const manifest::UstarBlock& b, const std::string& where) {
    if (pending_pax_) throw IntegrityError(where + ": two pax headers in a row");
    if (b.size > 1 << 20) throw IntegrityError(where + ": pax header too large");
    pax_.clear();
    pax_need_ = b.size + manifest::tar_padding(b.size);
    pax_size_ = b.size;
    phase_ = Phase::pax;
  }

  // Checks an entry header against the next manifest entry (path, type, mode, size, link); returns its index.
  std::size_t match_entry(const manifest::UstarBlock& b, const std::string& where) {
    if (next_entry_ >= m_.entries.size()) throw IntegrityError(where + ": entry '" + escaped(b.path) + "' is not in the manifest");
    std::size_t index = next_entry_++;
    const Entry& e = m_.entries[index];
    std::optional<EntryType> typed = manifest::entry_type_of(b.typeflag);
    if (!typed) {
      throw IntegrityError(where + ": entry '" + escaped(b.path) + "' has tar type '" + escaped(std::string(1, b.typeflag)) +
                           "', which ccpack never writes");
    }
    EntryType type = *typed;
    std::string path = b.path;
    if (type == EntryType::dir && !path.empty() && path.back() == '/') path.pop_back();
    if (path != e.path || type != e.type || (b.mode & 07777) != e.mode || (type == EntryType::file && b.size != e.size) ||
        (type != EntryType::file && b.size != 0) || (type == EntryType::symlink && b.link_target != e.link_target)) {
      throw IntegrityError(where + ": tar header '" + escaped(b.path) + "' does not match manifest " + entry_name(e, index));
    }
    return index;
  }

  // Routes a matched entry: folders to the chunk (stage 1b), symlinks to the end, files to the data phase.
  void start_entry(Chunk& c, std::size_t pos, std::size_t index) {
    const Entry& e = m_.entries[index];
    switch (e.type) {
      case EntryType::dir:
        folders_.push_back(index);
        c.folders.push_back(static_cast<std::uint32_t>(index));
        break;
      case EntryType::symlink:
        symlinks_.push_back(index);
        break;
      case EntryType::file: {
        progress_.advance(e.size);
        if (e.size == 0) {
          c.pieces.push_back(Piece{static_cast<std::uint32_t>(index), pos, 0, 0, true, nullptr});
          break;
        }
        current_ = index;
        data_left_ = e.size;
        phase_ = Phase::data;
        if (e.size > c.size - pos) large_ = std::make_shared<LargeFile>();  // spans chunks: opened in stage 1b
        break;
      }
    }
  }

  const Archive& a_;
  const manifest::Manifest& m_;
  Progress& progress_;
  ZSTD_DCtx* dctx_;
  std::vector<char> input_;
  ZSTD_inBuffer in_{};
  std::uint64_t in_left_ = 0;
  std::uint64_t in_offset_ = 0;
  std::uint64_t raw_in_frame_ = 0;
  Sha256 frame_hash_;
  std::size_t frame_ = 0;

  Phase phase_ = Phase::header;
  std::string block_;
  std::string pax_;
  std::uint64_t pax_need_ = 0;
  std::uint64_t pax_size_ = 0;
  bool pending_pax_ = false;
  std::uint64_t tar_offset_ = 0;
  std::size_t next_entry_ = 0;
  std::size_t current_ = 0;
  std::uint64_t data_left_ = 0;
  std::uint64_t pad_left_ = 0;
  std::shared_ptr<LargeFile> large_;
  std::vector<std::size_t> symlinks_;
  std::vector<std::size_t> folders_;
};

// The staging root of each component (-1: not restored, only verified), looked up by an entry's path.
class Roots {
 public:
  Roots(const manifest::Manifest& m, const std::vector<StagingTarget>& targets) : m_(m), roots_(m.components.size(), -1) {
    for (const StagingTarget& t : targets) {
      for (std::size_t i = 0; i < m.components.size(); ++i) {
        if (m.components[i].name == t.component) roots_[i] = t.root_fd;
      }
    }
  }

  [[nodiscard]] int of(const Entry& e) const {
    std::string_view comp = manifest::component_of(e.path);
    for (std::size_t i = 0; i < m_.components.size(); ++i) {
      if (m_.components[i].name == comp) return roots_[i];
    }
    return -1;
  }

 private:
  const manifest::Manifest& m_;
  std::vector<int> roots_;
};

// The file count and bytes the manifest lists, before anything is read.
ExtractStats count_files(const manifest::Manifest& m) {
  ExtractStats stats;
  for (const Entry& e : m.entries) {
    if (e.type == EntryType::file) {
      ++stats.files;
      stats.bytes += e.size;
    }
  }
  return stats;
}

// Stages 1b, 2 and 3 of the pipeline (see the top of this file); stage 1 is Decoder::next.
class Writer {
 public:
  Writer(const manifest::Manifest& m, const Roots& roots) : m_(m), roots_(roots), umask_(current_umask()) {}

  // Stage 1b: the chunk's folders, and its files that span chunks opened before any of their pieces is written.
  Chunk* make_folders(Chunk* c) const {
    for (std::uint32_t index : c->folders) {
      const Entry& e = m_.entries[index];
      int root = roots_.of(e);
      if (root < 0 || manifest::relative_of(e.path).empty()) continue;
      create_folder(root, e, needs_final_chmod(e) ? 0700 : e.mode, umask_);
    }
    for (const Piece& p : c->pieces) {
      if (!p.large || p.file_offset != 0) continue;
      const Entry& e = m_.entries[p.entry];
      int root = roots_.of(e);
      if (root >= 0) p.large->fd = create_file(root, e, umask_);
    }
    return c;
  }

  // Stage 2 (parallel): whole small files are hashed, checked and written; pieces of large files are pwritten.
  Chunk* write(Chunk* c) {
    std::uint64_t local_written = 0;
    for (const Piece& p : c->pieces) {
      const Entry& e = m_.entries[p.entry];
      const char* data = c->data() + p.at;
      if (p.large) {
        if (p.large->fd.valid()) pwrite_all(p.large->fd.get(), data, p.length, static_cast<off_t>(p.file_offset), quoted(e));
        continue;
      }
      check_digest(Sha256::of(data, p.length), e, p.entry);
      int root = roots_.of(e);
      if (root < 0) continue;
      UniqueFd fd = create_file(root, e, umask_);
      write_all(fd.get(), data, p.length, quoted(e));
      ++local_written;
    }
    written_ += local_written;
    return c;
  }

  // Stage 3 (serial, in order): large files are hashed in order, checked and closed at their last piece.
  void finish_large(Chunk* c) {
    for (const Piece& p : c->pieces) {
      if (!p.large) continue;
      p.large->hash.update(c->data() + p.at, p.length);
      if (p.last) {
        check_digest(p.large->hash.finish(), m_.entries[p.entry], p.entry);
        if (p.large->fd.valid()) {
          if (::close(p.large->fd.release()) != 0) throw_errno("cannot write " + quoted(m_.entries[p.entry]));
          ++written_;
        }
      }
    }
  }

  [[nodiscard]] std::uint64_t written() const { return written_; }

 private:
  const manifest::Manifest& m_;
  const Roots& roots_;
  mode_t umask_;  // read once, never changed: modes it would take are restored by fchmod
  std::atomic<std::uint64_t> written_{0};
};

// Symlinks last, after every file, so no write can pass through a link.
void create_symlinks(const manifest::Manifest& m, const Roots& roots, const std::vector<std::size_t>& symlinks) {
  for (std::size_t index : symlinks) {
    const Entry& e = m.entries[index];
    int root = roots.of(e);
    std::string rel(manifest::relative_of(e.path));
    if (root >= 0 && ::symlinkat(e.link_target.c_str(), root, rel.c_str()) != 0) throw_errno("cannot create symlink " + quoted(e));
  }
}

// The remaining folder modes last, deepest first, so folders without owner write access could be filled.
void apply_folder_modes(const manifest::Manifest& m, const Roots& roots, const std::vector<std::size_t>& folders) {
  for (auto it = folders.rbegin(); it != folders.rend(); ++it) {
    const Entry& e = m.entries[*it];
    int root = roots.of(e);
    std::string rel(manifest::relative_of(e.path));
    if (root < 0 || (!rel.empty() && !needs_final_chmod(e))) continue;
    int rc = rel.empty() ? ::fchmod(root, e.mode) : ::fchmodat(root, rel.c_str(), e.mode, 0);
    if (rc != 0) throw_errno("cannot set the mode of " + quoted(e));
  }
}

// Runs the pipeline over the whole stream, then the links and folder modes that must come after every file.
void run_pipeline(Decoder& decoder, Writer& writer, const manifest::Manifest& m, const Roots& roots, unsigned jobs) {
  TokenRing<Chunk> ring(2 * static_cast<std::size_t>(jobs) + 2);
  auto read = [&](oneapi::tbb::flow_control& fc) -> Chunk* {
    Chunk* c = &ring.next();
    if (decoder.next(*c)) return c;
    fc.stop();
    return nullptr;
  };
  oneapi::tbb::parallel_pipeline(
      ring.size(),
      oneapi::tbb::make_filter<void, Chunk*>(oneapi::tbb::filter_mode::serial_in_order, read) &
          oneapi::tbb::make_filter<Chunk*, Chunk*>(oneapi::tbb::filter_mode::serial_in_order,
                                                   [&](Chunk* c) { return writer.make_folders(c); }) &
          oneapi::tbb::make_filter<Chunk*, Chunk*>(oneapi::tbb::filter_mode::parallel, [&](Chunk* c) { return writer.write(c); }) &
          oneapi::tbb::make_filter<Chunk*, void>(oneapi::tbb::filter_mode::serial_in_order,
                                                 [&](Chunk* c) { writer.finish_large(c); }));
  decoder.finish();
  create_symlinks(m, roots, decoder.symlinks());
  apply_folder_modes(m, roots, decoder.folders());
}

}  // namespace

ExtractStats extract(const Archive& archive, const std::vector<StagingTarget>& targets, const ExtractOptions& options) {
  const manifest::Manifest& m = archive.manifest;
  Roots roots(m, targets);
  ExtractStats stats = count_files(m);

  unsigned jobs = options.jobs != 0 ? options.jobs : static_cast<unsigned>(oneapi::tbb::info::default_concurrency());
  Progress progress(targets.empty() ? "verify" : "restore", stats.bytes, options.progress);
  Decoder decoder(archive, progress);
  Writer writer(m, roots);

  run_pipeline(decoder, writer, m, roots, jobs);
  progress.finish();
  stats.written_files = writer.written();
  return stats;
}

}  // namespace ccpack::unpack
