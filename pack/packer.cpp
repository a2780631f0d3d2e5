// The create pipeline: a oneTBB parallel_pipeline that turns an entry source's entries into compressed frames.
// It does not know where the bytes come from (the cache folders, a foreign archive): see pack/entry_source.hpp.
//
//   1. serial, in order:   cut the entry list into batches (small files up to kBatchBytes together; a large file
//                          in kPieceBytes pieces), so memory is bounded by the tokens in flight, not the cache.
//   2. parallel:           the source reads each file into the batch buffer behind its tar header (the
//                          filesystem source proves it did not change while read); SHA-256 of small files.
//   3. serial, in order:   hash large-file pieces in order, end a frame where pack/layout.hpp says (PackPipeline
//                          says why there) and feed the batch to its frame's lane: frames are compressed several
//                          at once, each into a scratch file (pack/frame_lanes.hpp).
//
// Finally the header (manifest, signatures) is written to the output and the payload copied after it, all inside
// an AtomicFile.
#include "pack/packer.hpp"

#include <fcntl.h>
#include <oneapi/tbb/info.h>
#include <oneapi/tbb/parallel_pipeline.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>

#include "manifest/format.hpp"
#include "pack/filesystem_source.hpp"
#include "pack/frame_lanes.hpp"
#include "util/big_buffer.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/progress.hpp"
#include "util/sha256.hpp"
#include "util/thread_pool.hpp"
#include "util/token_ring.hpp"
#include "util/version.hpp"

namespace ccpack::pack {
namespace fs = std::filesystem;
using manifest::EntryType;

namespace {

// Batches, pieces of large files and zstd jobs are small because fresh memory is what create pays for most on a
// VM (page zeroing was 38% of create's CPU on the 2-core dev VM, real fixture): every buffer in flight is memory
// touched once more. Measured together, alternating runs 3 s apart (scripts/bench/bench.py's settle), real fixture:
// 4 MiB batches, 4 MiB pieces, 16 MiB jobs: 1.06-1.37 s, peak 254 MiB, 12,576,741 bytes; 1 MiB, 1 MiB, 4 MiB:
// 0.82-1.11 s, 191 MiB, 12,805,691 bytes (+1.8%); stock 0.83-0.96 s, 149 MiB, 19.7 MB. At 100k files: 4.00 vs
// 3.76 s, 274 vs 205 MiB, 71.36 vs 71.49 MB.
constexpr std::uint64_t kBatchBytes = 1ULL << 20;
// Every batch buffer can hold a piece, so this sets the pool's buffer size (kBatchBytes + kPieceBytes + 1 MiB) and,
// times the batches in flight (batches_in_flight), create's memory besides zstd's.
constexpr std::uint64_t kPieceBytes = 1ULL << 20;
// zstd worker job size: each job in flight holds its input, and zstd's input ring holds the 128 MiB window plus
// three jobs, so it sets most of create's memory past the window. Earlier, with 16 MiB jobs (single frame, real
// fixture: 8 MiB 19.30 MB, 16 MiB 19.16 MB, 32 MiB 18.90 MB) a million files peaked at 482 MiB.
constexpr int kJobBytes = 4 << 20;
// Frames compressed at once, at most, and what they may cost together (FrameLanes::frame_cost).
constexpr unsigned kMaxLanes = 8;
constexpr std::uint64_t kLaneMemory = 256ULL << 20;

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

  // `source` and `entry` name the file in the error (a file larger than the scan saw).
  char* grow(std::size_t n, const EntrySource& source, std::size_t entry) {
    if (used + n > buffer->size()) throw_grew(source.source_of(entry));
    char* at = buffer->data() + used;
    used += n;
    return at;
  }
  void append(const std::string& bytes, const EntrySource& source, std::size_t entry) {
    std::memcpy(grow(bytes.size(), source, entry), bytes.data(), bytes.size());
  }
};

// Upper bound of the tar bytes of one entry: pax header and records, ustar header, data, padding.
std::size_t tar_bytes_bound(const manifest::EntryList& list, std::size_t i) {
  std::size_t pax = list.path_size(i) + list.link_target(i).size() + 128;
  return 3 * manifest::kTarBlock + pax + list.file_size(i);
}

manifest::TarHeader header_of(const manifest::EntryList& list, std::size_t i, std::uint64_t size) {
  return manifest::TarHeader{list.path(i), list.type(i), list.mode(i), size, std::string(list.link_target(i))};
}

// The slot the source fills for one small file: its tar header, then its data and padding, in the batch.
class BatchSlot final : public FileSlot {
 public:
  BatchSlot(Batch& batch, const EntrySource& source, const manifest::EntryList& list, std::size_t entry)
      : batch_(batch), source_(source), list_(list), entry_(entry), start_(batch.used) {}
  char* data(std::uint64_t size) override {
    std::string header;
    manifest::append_tar_header(header, header_of(list_, entry_, size));
    batch_.append(header, source_, entry_);
    char* at = batch_.grow(size + manifest::tar_padding(size), source_, entry_);
    std::memset(at + size, 0, manifest::tar_padding(size));
    bytes_ = {at, size};
    return at;
  }
  void discard() override {
    batch_.used = start_;
    bytes_ = {};
  }
  // Where data() last laid out the file's bytes.
  [[nodiscard]] std::string_view bytes() const { return bytes_; }

 private:
  Batch& batch_;
  const EntrySource& source_;
  const manifest::EntryList& list_;
  std::size_t entry_;
  std::size_t start_;
  std::string_view bytes_;
};

// The manifest's fields known before the payload. Its entries are the source's list (moved in at the end), in
// which the pipeline fills in sizes, hashes and frames as files are read. Returns the bytes the source listed,
// for the progress total.
std::uint64_t plan_manifest(manifest::Manifest& m, const manifest::EntryList& src, const PackOptions& options) {
  m.created_by = std::string("ccpack ") + kVersion;
  m.compression = {"zstd", options.level, options.window_log};
  m.fingerprint = options.records.fingerprint;
  m.settle = options.records.settle;
  m.delta = options.records.delta;
  m.merge = options.records.merge;
  std::uint64_t total_bytes = 0;
  for (std::size_t i = 0; i < src.size(); ++i) total_bytes += src.file_size(i);
  return total_bytes;
}

// The three pipeline stages (see the top of this file) and the state they share; one member function per stage.
// Compression ratio vs parallelism: frames end where pack/layout.hpp says (each FX-graph pickle with the Triton
// kernels it embeds, so restore can decode frames in parallel), or past PackOptions::frame_limit; each is
// compressed with long-distance matching over a 128 MiB window by zstd's own worker threads (pipeline_width),
// which keep long-range matches across their jobs. Frames cut anywhere else would lose the cross-file redundancy
// that dominates these caches (about twice the archive on the real fixture); 128 MiB is the largest window stock
// `zstd -d` accepts without flags.
// Members are destroyed ring, lanes, pool: the batch buffers go back to the pool before it goes.
class PackPipeline {
 public:
  PackPipeline(EntrySource& source, manifest::Manifest& m, Progress& progress, const FrameLanes::Settings& lanes,
               const std::filesystem::path& scratch_dir, const PackOptions& options, unsigned jobs,
               std::vector<std::size_t> frame_starts)
      : source_(source),
        src_(source.entries()),
        m_(m),
        progress_(progress),
        options_(options),
        pool_(kBatchBytes + kPieceBytes + (1 << 20)),
        lanes_(scratch_dir, lanes),
        ring_(batches_in_flight(jobs)),
        frame_starts_(std::move(frame_starts)) {}

  // Runs the pipeline over every entry and ends the last frame; returns the payload (the frames are also the
  // manifest's).
  CompressedPayload run() {
    use_thread_pool();
    oneapi::tbb::parallel_pipeline(
        ring_.size(), oneapi::tbb::make_filter<void, Batch*>(oneapi::tbb::filter_mode::serial_in_order,
                                                             [this](oneapi::tbb::flow_control& fc) { return plan_batch(fc); }) &
                          oneapi::tbb::make_filter<Batch*, Batch*>(oneapi::tbb::filter_mode::parallel,
                                                                   [this](Batch* b) { return read_batch(b); }) &
                          oneapi::tbb::make_filter<Batch*, void>(oneapi::tbb::filter_mode::serial_in_order,
                                                                 [this](Batch* b) { compress_batch(b); }));
    return finish_frames();
  }

 private:
  // Stage 1: the next batch, a piece of a large file or small entries up to kBatchBytes; null at the end.
  Batch* plan_batch(oneapi::tbb::flow_control& fc) {
    if (next_ >= src_.size()) {
      fc.stop();
      return nullptr;
    }
    Batch* b = &ring_.next();
    *b = Batch{};
    b->first = next_;
    std::uint64_t size = src_.file_size(next_);
    if (src_.type(next_) == EntryType::file && size > kPieceBytes) {
      b->piece = true;
      b->count = 1;
      b->offset = next_offset_;
      b->length = std::min(kPieceBytes, size - next_offset_);
      b->buffer = pool_.take(tar_bytes_bound(src_, next_) - size + b->length);
      next_offset_ += b->length;
      if (next_offset_ == size) {
        next_offset_ = 0;
        ++next_;
      }
      return b;
    }
    std::uint64_t bytes = 0;
    std::size_t bound = 0;
    while (next_ < src_.size() && bytes < kBatchBytes) {
      std::uint64_t x_size = src_.file_size(next_);
      if (src_.type(next_) == EntryType::file && x_size > kPieceBytes) break;
      if (b->count > 0 && starts_frame(next_)) break;  // a batch never spans a frame boundary
      bytes += x_size + manifest::kTarBlock;
      bound += tar_bytes_bound(src_, next_);
      ++next_;
      ++b->count;
    }
    b->buffer = pool_.take(bound);
    return b;
  }

  // Stage 2 (parallel): the batch's tar bytes, read by the source: its small files together where it can
  // (read_listed), the rest one by one.
  Batch* read_batch(Batch* b) {
    if (b->piece) {
      read_piece(*b);
      return b;
    }
    std::size_t from = source_.reads_listed() ? read_listed(*b) : b->first;
    std::string header;
    for (std::size_t i = from; i < b->first + b->count; ++i) {
      if (src_.type(i) == EntryType::file) {
        BatchSlot slot(*b, source_, src_, i);
        // The source sets the entry's size in the list when it found the file changed since it listed it.
        src_.set_sha256(i, source_.read_file(i, slot));
        if (options_.on_file) options_.on_file(src_, i, slot.bytes());
      } else {
        header.clear();
        manifest::append_tar_header(header, header_of(src_, i, 0));
        b->append(header, source_, i);
      }
    }
    return b;
  }

  // Lays the batch out at the listed sizes (each entry's tar header, then a file's data and padding) and has the
  // source read its files into place. Returns the first entry the source did not prove, with the batch cut back
  // to where that entry starts (the rest is read one by one: its size may differ from the listing); the end of
  // the batch when it proved them all.
  std::size_t read_listed(Batch& b) {
    std::vector<std::size_t> starts(b.count);
    std::vector<ListedFile> files;
    std::string header;
    for (std::size_t i = b.first; i < b.first + b.count; ++i) {
      starts[i - b.first] = b.used;
      if (src_.type(i) == EntryType::file) {
        files.push_back(ListedFile{i, BatchSlot(b, source_, src_, i).data(src_.file_size(i)), std::nullopt});
        continue;
      }
      header.clear();
      manifest::append_tar_header(header, header_of(src_, i, 0));
      b.append(header, source_, i);
    }
    source_.read_listed(files);
    for (const ListedFile& f : files) {
      if (!f.digest) {
        b.used = starts[f.entry - b.first];
        return f.entry;
      }
      src_.set_sha256(f.entry, *f.digest);
      if (options_.on_file) options_.on_file(src_, f.entry, {f.data, src_.file_size(f.entry)});
    }
    return b.first + b.count;
  }

  // A piece of a large file: its tar header before the first piece, its padding after the last.
  void read_piece(Batch& b) {
    std::uint64_t size = src_.file_size(b.first);
    if (b.offset == 0) {
      std::string header;
      manifest::append_tar_header(header, header_of(src_, b.first, size));
      b.append(header, source_, b.first);
    }
    b.data_at = b.used;
    bool last = b.offset + b.length == size;
    std::size_t padding = last ? manifest::tar_padding(size) : 0;
    char* data = b.grow(b.length + padding, source_, b.first);
    std::memset(data + b.length, 0, padding);
    source_.read_piece(b.first, b.offset, b.length, data);
  }

  // Stage 3 (serial, in order): frame boundaries, large-file hashes, progress, and the bytes into zstd.
  void compress_batch(Batch* b) {
    bool starts_entry = !b->piece || b->offset == 0;
    if (starts_entry && lanes_.raw_in_frame() > 0 && (lanes_.raw_in_frame() >= options_.frame_limit || starts_frame(b->first))) {
      end_frame(b->first);
    }
    if (!lanes_.in_frame()) lanes_.begin_frame(frame_bytes_from(b->first));
    auto frame_index = static_cast<std::uint32_t>(lanes_.frames_begun() - 1);
    for (std::size_t i = b->first; i < b->first + b->count; ++i) src_.set_frame(i, frame_index);
    if (b->piece) {
      piece_hash_.update(b->buffer->data() + b->data_at, b->length);
      if (b->offset + b->length == src_.file_size(b->first)) {
        Digest digest = piece_hash_.finish();
        source_.check_pieces(b->first, digest);
        src_.set_sha256(b->first, digest);
      }
      progress_.advance(b->length);
    } else {
      std::uint64_t n = 0;
      for (std::size_t i = b->first; i < b->first + b->count; ++i) n += src_.file_size(i);
      progress_.advance(n);
    }
    lanes_.feed(b->buffer, b->buffer->data(), b->used);
  }

  // About how many raw bytes the frame that starts at entry `first` holds (where the layout or frame_limit ends
  // it), for what its compression may cost (FrameLanes::begin_frame).
  [[nodiscard]] std::uint64_t frame_bytes_from(std::size_t first) const {
    std::uint64_t bytes = 0;
    for (std::size_t i = first; i < src_.size() && bytes < options_.frame_limit; ++i) {
      if (i > first && starts_frame(i)) break;
      bytes += src_.file_size(i) + manifest::kTarBlock;
    }
    return bytes;
  }

  // Whether the layout starts a frame at entry `i`.
  [[nodiscard]] bool starts_frame(std::size_t i) const {
    return std::binary_search(frame_starts_.begin(), frame_starts_.end(), i);
  }

  // Ends the current frame before entry `next_first` and records it in the manifest.
  void end_frame(std::size_t next_first) {
    lanes_.end_frame(frame_first_entry_, next_first - frame_first_entry_);
    frame_first_entry_ = next_first;
  }

  // End of archive: two zero blocks, in the last frame.
  CompressedPayload finish_frames() {
    static const char zeros[2 * manifest::kTarBlock] = {};
    if (!lanes_.in_frame()) lanes_.begin_frame(sizeof zeros);
    lanes_.feed(nullptr, zeros, sizeof zeros);
    end_frame(src_.size());
    CompressedPayload payload = lanes_.finish();
    m_.frames = payload.frames;
    return payload;
  }

  EntrySource& source_;
  manifest::EntryList& src_;  // the source's list, which becomes the manifest's entries
  manifest::Manifest& m_;
  Progress& progress_;
  const PackOptions& options_;
  BufferPool pool_;
  FrameLanes lanes_;  // after the pool: the lanes hold batch buffers until zstd has taken them
  std::size_t next_ = 0;
  std::uint64_t next_offset_ = 0;  // within a large file being cut into pieces
  Sha256 piece_hash_;
  std::uint64_t frame_first_entry_ = 0;
  TokenRing<Batch> ring_;
  std::vector<std::size_t> frame_starts_;  // from the layout
};

// What is known only after the payload: the derived fingerprint, the tar size and the per-component totals.
void complete_manifest(manifest::Manifest& m, EntrySource& source, const PackOptions& options) {
  if (options.records.fingerprint_when_packed) m.fingerprint = options.records.fingerprint_when_packed();
  if (!m.fingerprint.recorded()) {
    if (std::optional<manifest::Fingerprint> derived = source.derived_fingerprint()) m.fingerprint = std::move(*derived);
  }
  for (const manifest::Frame& f : m.frames) m.tar_size += f.raw_size;
  m.entries = std::move(source.entries());
  const manifest::EntryList& entries = m.entries;
  for (manifest::Component c : source.components()) {
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (entries.type(i) == EntryType::file && entries.component(i) == c.name) {
        ++c.files;
        c.bytes += entries.file_size(i);
      }
    }
    m.components.push_back(std::move(c));
  }
  m.validate();
}

// The header (manifest, signatures) then the payload copied from the scratch files; returns the archive size.
std::uint64_t write_archive(AtomicFile& out_file, const CompressedPayload& payload, const manifest::Manifest& m,
                            const PackOptions& options, const fs::path& output) {
  manifest::ArchiveHeader header;
  header.manifest = m.to_json();
  header.payload_size = payload.size();
  if (options.sign) header.signatures = manifest::encode_signature_block(options.sign(header.manifest));
  manifest::HeaderAround around = manifest::encode_header_around(header);
  for (const std::string* part : {&around.before, &header.manifest, &around.after}) out_file.write(part->data(), part->size());
  payload.copy_to(out_file.fd(), quoted_path(output));
  out_file.commit(true);
  return around.before.size() + header.manifest.size() + around.after.size() + header.payload_size;
}

}  // namespace

// How many frames are compressed at once, in what memory (pack/frame_lanes.hpp). Each frame gets every worker
// (zstd runs only as many as the frame has jobs), so a frame alone goes as fast as when frames went one at a time;
// within a frame zstd's long-distance search runs one job after another, so a frame keeps about two workers busy
// and others go beside it while the memory lets them: kLaneMemory is the peak one frame of zstd's whole window
// cost before (its input ring, 16 workers' jobs), and a frame larger than that still goes, alone. The payload is
// compressed into scratch files first, since the header (which records the payload size and the frames) comes
// before it: next to the output when the filesystem allows an unnamed file there, else in $TMPDIR.
FrameLanes::Settings lane_settings(const PackOptions& options, unsigned jobs) {
  unsigned lanes = options.lanes != 0 ? options.lanes : std::clamp(jobs / 2, 1U, kMaxLanes);
  FrameWriter::Settings writer{options.level, options.window_log, pipeline_width(jobs), kJobBytes};
  return FrameLanes::Settings{writer, lanes, kLaneMemory, 2 * static_cast<std::size_t>(kJobBytes)};
}

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

  source.open();
  std::vector<std::size_t> frame_starts = lay_out(source, options.layout);
  PackResult result;
  manifest::Manifest& m = result.manifest;
  std::uint64_t total_bytes = plan_manifest(m, source.entries(), options);

  unsigned jobs = options.jobs != 0 ? options.jobs : static_cast<unsigned>(oneapi::tbb::info::default_concurrency());
  Progress progress("create", total_bytes, options.progress);
  CompressedPayload payload;
  {  // The compressors and the batch buffers are freed before the manifest is serialised: peaks do not add up.
    PackPipeline pipeline(source, m, progress, lane_settings(options, jobs), output.parent_path(), options, jobs,
                          std::move(frame_starts));
    payload = pipeline.run();
  }
  progress.finish();

  complete_manifest(m, source, options);
  result.archive_size = write_archive(out_file, payload, m, options, output);
  result.skipped = source.skipped();
  return result;
}

}  // namespace ccpack::pack
