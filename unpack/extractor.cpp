// The restore/verify pipeline. Frames end at tar entry boundaries, so each frame is decoded, checked and written
// on its own (unpack/frame_stream.hpp), several at once: decompression, a single thread's work per frame, is the
// critical path of a restore (pack/layout.hpp cuts the payload into frames that can be decoded apart).
//   0. a folder is made when the first entry inside it is about to be, by whichever thread gets there first,
//      parents first (unpack/folder_maker.hpp), beside its files as tar makes them; empty ones at the end;
//   per frame, a oneTBB parallel_pipeline:
//   1. serial, in order:   decode the next 4 MiB chunk of the frame and parse its tar headers, each checked
//                          against the manifest (FrameStream::next);
//   1b. serial, in order:  open the chunk's files that span chunks, off the decoder's thread;
//   2. parallel:           write the pieces: a file that lies whole in one chunk is created, written, hashed and
//                          checked here (most cache files); pieces of larger files are written with pwrite;
//   3. serial, in order:   hash the pieces of large files in order; check and close them at their last piece.
//   Files are hashed only where ExtractOptions::file_digests asks or the frame is a stream's: an archive file's
//   frames are checked whole before they are decoded (FrameStream::authenticates), which covers every byte
//   written (hashing each file cost a restore of the real H200 cache a third of its CPU under one CPU).
//   Last, once every frame is done: symlinks (so no write can pass through a link), then folder modes (so a
//   read-only folder could still be filled). Frames run concurrently: FrameRunner says how many, and whose error wins.
#include "unpack/extractor.hpp"

#include <fcntl.h>
#include <oneapi/tbb/info.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_pipeline.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <string>

#include "unpack/folder_maker.hpp"
#include "unpack/frame_stream.hpp"
#include "unpack/streamed_pickle.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/progress.hpp"
#include "util/sha256.hpp"
#include "util/thread_pool.hpp"
#include "util/token_ring.hpp"

namespace ccpack::unpack {
namespace {

using manifest::Entry;
using manifest::EntryType;

// Memory for the frames decoded at once (FrameStream::memory: a frame of up to 256 MiB takes its raw size, a
// larger one zstd's window and its chunks). The real H200 cache (frames of 183, 150 and 17 MiB) decodes all three
// at once under this bound (verify -j16 measured at 320 MiB peak RSS); a cache of many 1 GiB frames, two at a time.
constexpr std::uint64_t kDecodeBudget = 384ULL << 20;
// Chunks in flight per frame (the pipeline's tokens), at most: enough for the writers of one frame to overlap.
constexpr std::size_t kMaxTokensPerFrame = 8;

// Creates a file of an entry below a staging root: never through a symlink, never over an existing name. The
// process's umask is left alone: where it took bits of the entry's mode (`umask` holds them), fchmod puts them back.
UniqueFd create_file(int root, const Entry& e, mode_t umask) {
  std::string rel(manifest::relative_of(e.path));
  // defence: create-exclusive
  UniqueFd fd(::openat(root, rel.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, e.mode));
  if (!fd.valid()) throw_errno("cannot create " + quoted(e));
  if ((e.mode & umask) != 0 && ::fchmod(fd.get(), e.mode) != 0) throw_errno("cannot set the mode of " + quoted(e));
  return fd;
}

void check_digest(const Digest& got, const Entry& e, std::size_t index) {
  // defence: file-sha256
  if (got != e.sha256) throw IntegrityError(entry_name(e, index) + ": SHA-256 mismatch (corrupt or tampered archive)");
}

// The staging root of each component (-1: not restored, only verified) and its group-file relocator (null: none),
// looked up by an entry's path.
class Roots {
 public:
  Roots(const manifest::Manifest& m, const std::vector<StagingTarget>& targets)
      : m_(m), roots_(m.components.size(), -1), relocators_(m.components.size(), nullptr) {
    for (const StagingTarget& t : targets) {
      for (std::size_t i = 0; i < m.components.size(); ++i) {
        if (m.components[i].name == t.component) {
          roots_[i] = t.root_fd;
          relocators_[i] = t.relocator;
        }
      }
    }
  }

  // Where manifest entry `index` goes: its component's staging root (-1: not restored) and, when it is a group
  // file of a component restored with relocation, the relocator that rewrites it (else null). One lookup.
  struct Target {
    int root = -1;
    PathRelocator* relocator = nullptr;
  };
  [[nodiscard]] Target target(const Entry& e, std::size_t index) const {
    std::size_t i = component_index(e);
    if (i >= roots_.size() || roots_[i] < 0) return {};
    PathRelocator* r = relocators_[i];
    return {roots_[i], r != nullptr && r->handles(index) ? r : nullptr};
  }

  [[nodiscard]] int of(const Entry& e) const {
    std::size_t i = component_index(e);
    return i < roots_.size() ? roots_[i] : -1;
  }

 private:
  [[nodiscard]] std::size_t component_index(const Entry& e) const {
    std::string_view comp = manifest::component_of(e.path);
    for (std::size_t i = 0; i < m_.components.size(); ++i) {
      if (m_.components[i].name == comp) return i;
    }
    return m_.components.size();
  }

  const manifest::Manifest& m_;
  std::vector<int> roots_;
  std::vector<PathRelocator*> relocators_;
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

// Stages 0, 1b, 2 and 3 of the pipeline (see the top of this file); stage 1 is FrameStream::next.
class Writer {
 public:
  Writer(const manifest::Manifest& m, const Roots& roots, bool file_digests)
      : m_(m),
        roots_(roots),
        file_digests_(file_digests),
        umask_(current_umask()),
        folders_(
            m.entries, [&roots](const Entry& e) { return roots.of(e); }, umask_) {}
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Stage 0's folders: extract() makes the empty ones and sets the modes once every frame is done.
  FolderMaker& folders() { return folders_; }

  // Stage 1b: the chunk's files that span chunks, created (their folders first) before any piece is written.
  Chunk* open_large(Chunk* c) {
    for (const Piece& p : c->pieces) {
      if (!p.large || p.file_offset != 0) continue;
      const Entry& e = m_.entries[p.entry];
      Roots::Target t = roots_.target(e, p.entry);
      if (t.root < 0) continue;
      folders_.ensure_folder_of(p.entry);
      p.large->fd = create_file(t.root, e, umask_);
      if (t.relocator != nullptr && t.relocator->streams(p.entry)) {
        PathRelocator* r = t.relocator;
        auto make = [r](PickleStream::Write w) { return r->stream(std::move(w)); };
        p.large->pickle = std::make_unique<StreamedPickle>(make, p.large->fd.get(), t.root,
                                                           std::string(manifest::relative_of(e.path)), quoted(e));
      } else if (t.relocator != nullptr && !t.relocator->skips(p.entry)) {
        p.large->held = BigBuffer(e.size);  // a group file, gathered whole to be rewritten
      }
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
        if (p.large->pickle) {
          continue;  // written in order, in stage 3
        } else if (p.large->held.size() != 0) {
          std::memcpy(p.large->held.data() + p.file_offset, data, p.length);  // pieces of one file never overlap
        } else if (p.large->fd.valid()) {
          if (int err = pwrite_fully(p.large->fd.get(), data, p.length, static_cast<off_t>(p.file_offset)); err != 0) {
            throw Error(errno_message("cannot write " + quoted(e), err));
          }
        }
        continue;
      }
      if (file_digests_) check_digest(Sha256::of(data, p.length), e, p.entry);
      Roots::Target t = roots_.target(e, p.entry);
      if (t.root < 0) continue;
      folders_.ensure_folder_of(p.entry);
      UniqueFd fd = create_file(t.root, e, umask_);
      write_content(fd, e, p.entry, std::string_view(data, p.length), t.relocator);
      ++local_written;
    }
    written_ += local_written;
    return c;
  }

  // Stage 3 (serial, in order): large files are hashed in order, checked and closed at their last piece.
  void finish_large(Chunk* c) {
    for (const Piece& p : c->pieces) {
      if (!p.large) continue;
      if (file_digests_) p.large->hash.update(c->data() + p.at, p.length);
      if (p.large->pickle) p.large->pickle->piece(p.file_offset, std::string_view(c->data() + p.at, p.length));
      if (p.last) {
        const Entry& e = m_.entries[p.entry];
        if (file_digests_) check_digest(p.large->hash.finish(), e, p.entry);
        if (p.large->pickle) {
          bool rewritten = p.large->pickle->finish(e.size);
          // (A pickle is streamed only where a relocator is, open_large.)
          if (PathRelocator* r = roots_.target(e, p.entry).relocator) r->streamed(p.large->pickle->stream(), rewritten);
          p.large->pickle.reset();
        }
        if (p.large->held.size() != 0) {
          write_content(p.large->fd, e, p.entry, std::string_view(p.large->held.data(), p.large->held.size()),
                        roots_.target(e, p.entry).relocator);
          p.large->held = BigBuffer();
        }
        if (p.large->fd.valid()) {
          if (::close(p.large->fd.release()) != 0) throw_errno("cannot write " + quoted(m_.entries[p.entry]));
          ++written_;
        }
      }
    }
  }

  [[nodiscard]] std::uint64_t written() const { return written_; }

 private:
  // Writes a checked file's content: as packed, or rewritten by `relocator` (null: none).
  void write_content(const UniqueFd& fd, const Entry& e, std::size_t index, std::string_view packed,
                     PathRelocator* relocator) const {
    std::optional<std::string> rewritten = relocator != nullptr ? relocator->rewrite(index, packed) : std::nullopt;
    std::string_view out = rewritten ? std::string_view(*rewritten) : packed;
    // The name is made only on failure: a restore writes a hundred thousand files.
    if (int err = write_fully(fd.get(), out.data(), out.size()); err != 0)
      throw Error(errno_message("cannot write " + quoted(e), err));
  }

  const manifest::Manifest& m_;
  const Roots& roots_;
  bool file_digests_;  // each file's SHA-256 checked (ExtractOptions::file_digests)
  mode_t umask_;       // read once, never changed: modes it would take are restored by fchmod
  std::atomic<std::uint64_t> written_{0};
  FolderMaker folders_;
};

// Symlinks last, after every file, so no write can pass through a link.
void create_symlinks(const manifest::Manifest& m, const Roots& roots) {
  for (std::size_t i = 0; i < m.entries.size(); ++i) {
    if (m.entries.type(i) != EntryType::symlink) continue;
    Entry e = m.entries[i];
    int root = roots.of(e);
    std::string rel(manifest::relative_of(e.path));
    if (root >= 0 && ::symlinkat(e.link_target.c_str(), root, rel.c_str()) != 0) {
      throw_errno("cannot create symlink " + quoted(e));
    }
  }
}

// Runs the frames, several at once, and keeps the error of the lowest failing frame: frames run concurrently, one
// per thread and within kDecodeBudget of memory (each decoder holds the raw bytes of the largest frame it has
// decoded, and once it has met a frame over 256 MiB the zstd window, 128 MiB, and its chunks). With one thread,
// or a payload read from a stream (restore oci://, read in order), frames run one after the other through one
// decoder. A frame that fails stops the frames after it, the ones before it run to their end, and the error of the
// lowest failing frame is the one reported.
class FrameRunner {
 public:
  FrameRunner(const Archive& a, Writer& writer, Progress& progress, unsigned jobs)
      : a_(a), m_(a.manifest), writer_(writer), progress_(progress), errors_(m_.frames.size()), first_failed_(m_.frames.size()) {
    // One thread runs each chunk through every stage before it decodes the next: for a frame through zstd's window,
    // one chunk buffer is all it uses, and each more would be fresh memory to fault in (4 MiB each).
    tokens_ = jobs <= 1 ? 1 : std::min(kMaxTokensPerFrame, 2 * static_cast<std::size_t>(jobs) + 2);
    std::uint64_t offset = 0;
    for (const manifest::Frame& f : m_.frames) {
      tar_offsets_.push_back(offset);
      offset += f.raw_size;
    }
    // Streams are read in order: one frame at a time.
    lanes_ = a.payload ? 1 : concurrent_frames(jobs);
  }

  void run() {
    if (m_.frames.empty()) throw IntegrityError(quoted_path(a_.path) + ": tar stream ends early (missing end-of-archive blocks)");
    std::atomic<std::size_t> next{0};
    auto lane = [&](std::size_t) {
      FrameDecoder decoder;
      TokenRing<Chunk> ring(tokens_);  // its chunk buffers, like the decoder's window, serve every frame of the lane
      for (std::size_t k; (k = next++) < m_.frames.size();) {
        if (k > first_failed_.load()) break;
        // A thread waiting inside frame k's pipeline may help other frames' pipelines, or run another lane on
        // top of it; each lane holds one frame at a time, so no more than lanes_ decoders are alive at once.
        run_guarded(k, decoder, ring);
      }
    };
    use_thread_pool();
    oneapi::tbb::parallel_for(std::size_t{0}, lanes_, lane, oneapi::tbb::simple_partitioner());
    for (const std::exception_ptr& e : errors_) {
      if (e) std::rethrow_exception(e);
    }
  }

 private:
  // How many frames may be decoded at once: one per thread, and the largest count whose most costly frames fit
  // kDecodeBudget. A decoder keeps the buffer of the largest frame it decoded whole, each lane's from a frame of its
  // own, so the lanes hold at most the largest frames' buffers; and a decoder that met a frame too large to decode
  // whole keeps its window too.
  // One per thread, not fewer: every frame of up to 256 MiB is decoded whole into its decoder's buffer, with no
  // window to share, and where creating files is cheap decoding is the critical path. The real H200 cache's restore
  // under two CPUs took 0.29-0.30 s against 0.31-0.34 s with one frame at a time (2-core dev VM, `taskset -c 0,1`,
  // alternating, 4 runs each; peak RSS 356 against 204 MiB), 100k files 2.01-2.14 s against 2.20-2.36 s (3 each;
  // 318 against 206 MiB). (When frames were decoded through one 128 MiB window, two lanes on two cores were slower
  // than one: 0.72 s against 0.61 s.)
  [[nodiscard]] std::size_t concurrent_frames(unsigned jobs) const {
    std::size_t most = std::max<std::size_t>(1, jobs);
    std::vector<std::uint64_t> costs;
    std::uint64_t window = 0;
    for (const manifest::Frame& f : m_.frames) {
      std::uint64_t cost = FrameStream::memory(f, m_.compression.window_log, tokens_);
      if (f.raw_size > kWholeFrameBytes) window = std::max(window, cost);
      costs.push_back(cost);
    }
    std::sort(costs.begin(), costs.end(), std::greater<>());
    std::size_t n = 1;
    std::uint64_t sum = costs.empty() ? 0 : costs[0] + window;
    while (n < costs.size() && n < most && sum + costs[n] + window <= kDecodeBudget) sum += costs[n++] + window;
    return n;
  }

  void run_guarded(std::size_t k, FrameDecoder& decoder, TokenRing<Chunk>& ring) {
    try {
      run_frame(k, decoder, ring);
    } catch (...) {
      errors_[k] = std::current_exception();
      std::size_t seen = first_failed_.load();
      while (k < seen && !first_failed_.compare_exchange_weak(seen, k)) {
      }
    }
  }

  void run_frame(std::size_t k, FrameDecoder& decoder, TokenRing<Chunk>& ring) {
    FrameStream stream(a_, decoder, k, tar_offsets_[k], progress_);
    auto read = [&](oneapi::tbb::flow_control& fc) -> Chunk* {
      Chunk* c = &ring.next();
      if (k <= first_failed_.load() && stream.next(*c)) return c;
      fc.stop();  // done, or a frame before this one failed: its error is the one reported
      return nullptr;
    };
    use_thread_pool();
    using oneapi::tbb::filter_mode;
    using oneapi::tbb::make_filter;
    oneapi::tbb::parallel_pipeline(
        ring.size(),
        make_filter<void, Chunk*>(filter_mode::serial_in_order, read) &
            make_filter<Chunk*, Chunk*>(filter_mode::serial_in_order, [&](Chunk* c) { return writer_.open_large(c); }) &
            make_filter<Chunk*, Chunk*>(filter_mode::parallel, [&](Chunk* c) { return writer_.write(c); }) &
            make_filter<Chunk*, void>(filter_mode::serial_in_order, [&](Chunk* c) { writer_.finish_large(c); }));
  }

  const Archive& a_;
  const manifest::Manifest& m_;
  Writer& writer_;
  Progress& progress_;
  std::vector<std::uint64_t> tar_offsets_;  // per frame: the raw bytes of the frames before it
  std::vector<std::exception_ptr> errors_;  // per frame
  std::atomic<std::size_t> first_failed_;   // the lowest failed frame; frames.size() while none
  std::size_t tokens_ = 0;
  std::size_t lanes_ = 1;
};

}  // namespace

ExtractStats extract(const Archive& archive, const std::vector<StagingTarget>& targets, const ExtractOptions& options) {
  const manifest::Manifest& m = archive.manifest;
  Roots roots(m, targets);
  ExtractStats stats = count_files(m);

  unsigned jobs = options.jobs != 0 ? options.jobs : static_cast<unsigned>(oneapi::tbb::info::default_concurrency());
  Progress progress(targets.empty() ? "verify" : "restore", stats.bytes, options.progress);
  Writer writer(m, roots, options.file_digests || !FrameStream::authenticates(archive));
  FrameRunner(archive, writer, progress, jobs).run();
  writer.folders().finish();
  create_symlinks(m, roots);
  writer.folders().apply_modes();
  progress.finish();
  stats.written_files = writer.written();
  return stats;
}

}  // namespace ccpack::unpack
