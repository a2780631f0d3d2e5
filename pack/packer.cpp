// The create pipeline: a oneTBB parallel_pipeline that turns an entry source's entries into compressed frames.
// It does not know where the bytes come from (the cache folders, a foreign archive): see pack/entry_source.hpp.
//
//   1. serial, in order:   cut the entry list into batches (small files up to 4 MiB together; a large file in
//                          16 MiB pieces), so memory is bounded by the tokens in flight, not by the cache size.
//   2. parallel:           the source reads each file into the batch buffer behind its tar header (the
//                          filesystem source proves it did not change while read); SHA-256 of small files.
//   3. serial, in order:   hash large-file pieces in order, feed the batch to zstd, write compressed bytes to a
//                          scratch file, and end a frame at an entry boundary once it passes the frame limit.
//
// Compression ratio vs parallelism: the payload is a few large frames (1 GiB of tar each by default), each
// compressed with long-distance matching over a 128 MiB window by zstd's own worker threads (nbWorkers = jobs),
// which keep long-range matches across their jobs. Independent small frames would lose the cross-file
// redundancy that dominates these caches (39.6 MB vs 19.7 MB on the real fixture); 128 MiB is the largest window
// stock `zstd -d` accepts without flags. Finally the header (manifest, signatures) is written to the output
// and the payload copied after it, all inside an AtomicFile.
#include "pack/packer.hpp"

#include <fcntl.h>
#include <unistd.h>
#define ZSTD_STATIC_LINKING_ONLY
#include <oneapi/tbb/info.h>
#include <oneapi/tbb/parallel_pipeline.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>

#include "manifest/format.hpp"
#include "pack/filesystem_source.hpp"
#include "util/big_buffer.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/progress.hpp"
#include "util/sha256.hpp"
#include "util/token_ring.hpp"
#include "util/version.hpp"

namespace ccpack::pack {
namespace fs = std::filesystem;
using manifest::EntryType;

namespace {

constexpr std::uint64_t kBatchBytes = 4ULL << 20;
constexpr std::uint64_t kPieceBytes = 16ULL << 20;
// zstd worker job size. Measured on the real fixture at level 1 (2 workers): 8 MiB 19.30 MB, 16 MiB 19.16 MB,
// 32 MiB 18.90 MB, zstd's default 19.52 MB; peak RSS 294, 321, 370 and 261 MiB; time the same within noise.
constexpr int kJobBytes = 32 << 20;

[[noreturn]] void throw_grew(const fs::path& source) {
  throw Error("file " + quoted_path(source) + " grew while being packed; stop the writer (torch.compile) and run create again");
}

struct Batch {
  std::size_t first = 0;  // entries [first, first + count)
  std::size_t count = 0;
  // A piece of one large file (count == 1): bytes [offset, offset + length) of entries[first].
  bool piece = false;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  std::shared_ptr<BigBuffer> buffer;  // tar stream bytes of this batch: [0, used)
  std::size_t used = 0;
  std::size_t data_at = 0;  // piece: where its file data starts in the buffer

  char* grow(std::size_t n, const fs::path& source) {
    if (used + n > buffer->size()) throw_grew(source);
    char* at = buffer->data() + used;
    used += n;
    return at;
  }
  void append(const std::string& bytes, const fs::path& source) {
    std::memcpy(grow(bytes.size(), source), bytes.data(), bytes.size());
  }
};

// Upper bound of the tar bytes of one entry: pax header and records, ustar header, data, padding.
std::size_t tar_bytes_bound(const SourceEntry& e) {
  std::size_t pax = e.path.size() + e.link_target.size() + 128;
  return 3 * manifest::kTarBlock + pax + e.size;
}

manifest::TarHeader header_of(const SourceEntry& e, std::uint64_t size) {
  return manifest::TarHeader{e.path, e.type, e.mode, size, e.link_target};
}

// The slot the source fills for one small file: its tar header, then its data and padding, in the batch.
class BatchSlot final : public FileSlot {
 public:
  BatchSlot(Batch& batch, const SourceEntry& entry) : batch_(batch), entry_(entry), start_(batch.used) {}
  char* data(std::uint64_t size) override {
    std::string header;
    manifest::append_tar_header(header, header_of(entry_, size));
    batch_.append(header, entry_.source);
    char* at = batch_.grow(size + manifest::tar_padding(size), entry_.source);
    std::memset(at + size, 0, manifest::tar_padding(size));
    return at;
  }
  void discard() override { batch_.used = start_; }

 private:
  Batch& batch_;
  const SourceEntry& entry_;
  std::size_t start_;
};

class FrameWriter {
 public:
  FrameWriter(int out_fd, const PackOptions& options, unsigned jobs)
      : out_fd_(out_fd), cctx_(ZSTD_createCCtx_advanced(ZSTD_customMem{huge_alloc, huge_free, nullptr})) {
    if (cctx_ == nullptr) throw Error("zstd: cannot create a compression context");
    set(ZSTD_c_compressionLevel, options.level);
    set(ZSTD_c_windowLog, options.window_log);
    set(ZSTD_c_enableLongDistanceMatching, 1);
    set(ZSTD_c_checksumFlag, 0);  // every frame and file is covered by SHA-256 in the manifest
    // Always at least one worker: zstd's multi-threaded format cuts jobs by size, not by thread count, so the
    // archive is the same bytes whatever -j or the machine's core count (single-threaded mode would differ).
    set(ZSTD_c_nbWorkers, static_cast<int>(std::max(1u, jobs)));
    set(ZSTD_c_jobSize, kJobBytes);
    out_.resize(ZSTD_CStreamOutSize());
  }
  ~FrameWriter() { ZSTD_freeCCtx(cctx_); }
  FrameWriter(const FrameWriter&) = delete;
  FrameWriter& operator=(const FrameWriter&) = delete;

  void feed(const char* data, std::size_t size) {
    raw_in_frame_ += size;
    ZSTD_inBuffer in{data, size, 0};
    while (in.pos < in.size) pump(in, ZSTD_e_continue);
  }

  // Ends the current frame; returns it (offset, sizes, hash) for the manifest.
  manifest::Frame end_frame() {
    ZSTD_inBuffer in{nullptr, 0, 0};
    while (pump(in, ZSTD_e_end) != 0) {
    }
    manifest::Frame f;
    f.offset = frame_start_;
    f.compressed_size = written_ - frame_start_;
    f.raw_size = raw_in_frame_;
    f.sha256 = frame_hash_.finish();
    frame_start_ = written_;
    raw_in_frame_ = 0;
    return f;
  }

  [[nodiscard]] std::uint64_t raw_in_frame() const { return raw_in_frame_; }
  [[nodiscard]] std::uint64_t written() const { return written_; }

 private:
  void set(ZSTD_cParameter p, int v) {
    std::size_t rc = ZSTD_CCtx_setParameter(cctx_, p, v);
    if (ZSTD_isError(rc)) throw Error(std::string("zstd: cannot set a compression parameter: ") + ZSTD_getErrorName(rc));
  }

  std::size_t pump(ZSTD_inBuffer& in, ZSTD_EndDirective mode) {
    ZSTD_outBuffer out{out_.data(), out_.size(), 0};
    std::size_t rc = ZSTD_compressStream2(cctx_, &out, &in, mode);
    if (ZSTD_isError(rc)) throw Error(std::string("zstd compression failed: ") + ZSTD_getErrorName(rc));
    if (out.pos > 0) {
      write_all(out_fd_, out_.data(), out.pos, "the archive scratch file");
      frame_hash_.update(out_.data(), out.pos);
      written_ += out.pos;
    }
    return rc;
  }

  int out_fd_;
  ZSTD_CCtx* cctx_;
  std::vector<char> out_;
  Sha256 frame_hash_;
  std::uint64_t frame_start_ = 0;
  std::uint64_t written_ = 0;
  std::uint64_t raw_in_frame_ = 0;
};

void copy_range(int from, int to, std::uint64_t size, const fs::path& output) {
  loff_t in_off = 0;
  while (size > 0) {
    ssize_t n = ::copy_file_range(from, &in_off, to, nullptr, size, 0);
    if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EOPNOTSUPP || errno == EINVAL)) {
      std::vector<char> buf(1 << 20);
      while (size > 0) {
        std::size_t want = std::min<std::uint64_t>(size, buf.size());
        std::size_t got = pread_full(from, buf.data(), want, in_off, "the archive scratch file");
        if (got != want) throw Error("the archive scratch file is shorter than expected");
        write_all(to, buf.data(), got, quoted_path(output));
        in_off += static_cast<loff_t>(got);
        size -= got;
      }
      return;
    }
    if (n < 0) throw_errno("cannot write " + quoted_path(output));
    if (n == 0) throw Error("the archive scratch file is shorter than expected");
    size -= static_cast<std::uint64_t>(n);
  }
}

}  // namespace

PackResult create_archive(const std::vector<manifest::CacheDir>& dirs, const fs::path& output, const PackOptions& options) {
  FilesystemSource source(dirs);
  return create_archive(source, output, options);
}

PackResult create_archive(EntrySource& source, const fs::path& output, const PackOptions& options) {
  if (options.window_log > manifest::kMaxWindowLog || options.window_log < 10) {
    throw UsageError("window log must be between 10 and " + std::to_string(manifest::kMaxWindowLog));
  }
  // Open the output first: a bad output path is reported before any work is done.
  AtomicFile out_file(output);
  fs::path out_dir = output.parent_path().empty() ? fs::path(".") : output.parent_path();
  UniqueFd scratch(::open(out_dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
  if (!scratch.valid()) {
    char tmpl[] = "/tmp/ccpack-payload.XXXXXX";
    scratch.reset(::mkstemp(tmpl));
    if (!scratch.valid()) throw_errno("cannot create a scratch file");
    ::unlink(tmpl);
  }

  source.open();
  std::vector<SourceEntry>& src = source.entries();

  PackResult result;
  manifest::Manifest& m = result.manifest;
  m.created_by = std::string("ccpack ") + kVersion;
  m.compression = {"zstd", options.level, options.window_log};
  m.fingerprint_json = options.fingerprint_json;
  m.entries.resize(src.size());
  std::uint64_t total_bytes = 0;
  for (std::size_t i = 0; i < src.size(); ++i) {
    m.entries[i].path = src[i].path;
    m.entries[i].type = src[i].type;
    m.entries[i].mode = src[i].mode;
    m.entries[i].link_target = src[i].link_target;
    total_bytes += src[i].size;
  }

  unsigned jobs = options.jobs != 0 ? options.jobs : static_cast<unsigned>(oneapi::tbb::info::default_concurrency());
  Progress progress("create", total_bytes, options.progress);
  std::uint64_t payload_size = 0;
  {  // The compressor and the batch buffers are freed before the manifest is serialised: peaks do not add up.
    FrameWriter writer(scratch.get(), options, jobs);

    BufferPool pool(kBatchBytes + kPieceBytes + (1 << 20));
    std::size_t next = 0;
    std::uint64_t next_offset = 0;  // within a large file being cut into pieces
    Sha256 piece_hash;
    std::uint64_t frame_first_entry = 0;

    TokenRing<Batch> ring(2 * static_cast<std::size_t>(jobs) + 2);  // after the pool: buffers go back to it

    auto input = [&](oneapi::tbb::flow_control& fc) -> Batch* {
      if (next >= src.size()) {
        fc.stop();
        return nullptr;
      }
      Batch* b = &ring.next();
      *b = Batch{};
      b->first = next;
      const SourceEntry& e = src[next];
      if (e.type == EntryType::file && e.size > kPieceBytes) {
        b->piece = true;
        b->count = 1;
        b->offset = next_offset;
        b->length = std::min(kPieceBytes, e.size - next_offset);
        next_offset += b->length;
        if (next_offset == e.size) {
          next_offset = 0;
          ++next;
        }
        b->buffer = pool.take(tar_bytes_bound(e) - e.size + b->length);
        return b;
      }
      std::uint64_t bytes = 0;
      std::size_t bound = 0;
      while (next < src.size() && bytes < kBatchBytes) {
        const SourceEntry& x = src[next];
        if (x.type == EntryType::file && x.size > kPieceBytes) break;
        bytes += x.size + manifest::kTarBlock;
        bound += tar_bytes_bound(x);
        ++next;
        ++b->count;
      }
      b->buffer = pool.take(bound);
      return b;
    };

    auto read = [&](Batch* b) -> Batch* {
      if (b->piece) {
        const SourceEntry& e = src[b->first];
        if (b->offset == 0) {
          std::string header;
          manifest::append_tar_header(header, header_of(e, e.size));
          b->append(header, e.source);
        }
        b->data_at = b->used;
        bool last = b->offset + b->length == e.size;
        std::size_t padding = last ? manifest::tar_padding(e.size) : 0;
        char* data = b->grow(b->length + padding, e.source);
        std::memset(data + b->length, 0, padding);
        source.read_piece(b->first, b->offset, b->length, data);
        return b;
      }
      std::string header;
      for (std::size_t i = b->first; i < b->first + b->count; ++i) {
        const SourceEntry& e = src[i];
        if (e.type == EntryType::file) {
          BatchSlot slot(*b, e);
          m.entries[i].sha256 = source.read_file(i, slot);
          m.entries[i].size = e.size;  // the source may have found it changed since it listed it
        } else {
          header.clear();
          manifest::append_tar_header(header, header_of(e, 0));
          b->append(header, e.source);
        }
      }
      return b;
    };

    auto compress = [&](Batch* b) {
      bool starts_entry = !b->piece || b->offset == 0;
      if (starts_entry && writer.raw_in_frame() >= options.frame_limit) {
        manifest::Frame f = writer.end_frame();
        f.first_entry = frame_first_entry;
        f.entry_count = b->first - frame_first_entry;
        frame_first_entry = b->first;
        m.frames.push_back(f);
      }
      auto frame_index = static_cast<std::uint32_t>(m.frames.size());
      for (std::size_t i = b->first; i < b->first + b->count; ++i) m.entries[i].frame = frame_index;
      if (b->piece) {
        piece_hash.update(b->buffer->data() + b->data_at, b->length);
        const SourceEntry& e = src[b->first];
        if (b->offset + b->length == e.size) {
          Digest digest = piece_hash.finish();
          source.check_pieces(b->first, digest);
          m.entries[b->first].size = e.size;
          m.entries[b->first].sha256 = digest;
        }
        progress.advance(b->length);
      } else {
        std::uint64_t n = 0;
        for (std::size_t i = b->first; i < b->first + b->count; ++i) n += src[i].size;
        progress.advance(n);
      }
      writer.feed(b->buffer->data(), b->used);
    };

    oneapi::tbb::parallel_pipeline(
        ring.size(), oneapi::tbb::make_filter<void, Batch*>(oneapi::tbb::filter_mode::serial_in_order, input) &
                         oneapi::tbb::make_filter<Batch*, Batch*>(oneapi::tbb::filter_mode::parallel, read) &
                         oneapi::tbb::make_filter<Batch*, void>(oneapi::tbb::filter_mode::serial_in_order, compress));

    // End of archive: two zero blocks, in the last frame.
    static const char zeros[2 * manifest::kTarBlock] = {};
    writer.feed(zeros, sizeof zeros);
    manifest::Frame last = writer.end_frame();
    last.first_entry = frame_first_entry;
    last.entry_count = src.size() - frame_first_entry;
    m.frames.push_back(last);
    payload_size = writer.written();
  }
  progress.finish();

  if (options.fingerprint_json == "{}") {
    if (std::optional<std::string> derived = source.derived_fingerprint()) m.fingerprint_json = *derived;
  }
  for (const manifest::Frame& f : m.frames) m.tar_size += f.raw_size;
  for (manifest::Component c : source.components()) {
    for (const SourceEntry& e : src) {
      if (manifest::component_of(e.path) == c.name && e.type == EntryType::file) {
        ++c.files;
        c.bytes += e.size;
      }
    }
    m.components.push_back(std::move(c));
  }
  m.validate();

  manifest::ArchiveHeader header;
  header.manifest = m.to_json();
  header.payload_size = payload_size;
  if (options.sign) header.signatures = options.sign(header.manifest);
  std::string head = manifest::encode_header(header);
  out_file.write(head.data(), head.size());
  copy_range(scratch.get(), out_file.fd(), payload_size, output);
  out_file.commit(true);

  result.archive_size = head.size() + payload_size;
  result.skipped = source.skipped();
  return result;
}

}  // namespace ccpack::pack
