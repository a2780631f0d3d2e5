// One zstd frame of an archive's payload, decoded and parsed as tar into 4 MiB chunks, every byte checked
// against the manifest. Frames end at tar entry boundaries (docs/FORMAT.md), so each frame parses on its own:
// the restore decodes several at once (unpack/extractor.cpp), each through its own FrameStream.
//
// A frame is decoded whole into one buffer when it is small enough (kWholeFrameBytes), else through zstd's
// window into reused chunk buffers (the choice is explained at kWholeFrameBytes).
#pragma once

#include <zstd.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "manifest/manifest.hpp"
#include "unpack/archive.hpp"
#include "unpack/streamed_pickle.hpp"
#include "util/big_buffer.hpp"
#include "util/fs.hpp"
#include "util/progress.hpp"
#include "util/sha256.hpp"

namespace ccpack::unpack {

inline constexpr std::size_t kChunkBytes = 4 << 20;
inline constexpr std::size_t kInputBytes = 1 << 20;
// Frames up to this raw size are decoded into one buffer of their size. pack/layout.hpp makes frames of up to
// about 200 MB from real caches; older archives hold up to 1 GiB per frame.
//
// Decoded whole: straight into one buffer of the frame's raw size (ZSTD_d_stableOutBuffer), the chunks being views
// into it; zstd needs no window of its own and no copy out of it (a sixth of a restore's user time on the real
// fixture). The buffer is the FrameDecoder's, reused frame after frame like a window would be, since fresh memory
// (page zeroing) is what a restore on a busy machine pays for most. A larger frame goes through zstd's window (up
// to 128 MiB) into each chunk's own 4 MiB buffer. docs/PERFORMANCE.md has the figures.
inline constexpr std::uint64_t kWholeFrameBytes = 256ULL << 20;
// From an archive file, a frame whose compressed bytes are at most this size is read and hashed once, into memory,
// and decoded from there (FrameStream::authenticate): the bytes decoded are the bytes hashed, with no second read
// and no second hash. A larger one is read again piece by piece, and hashed again, as it is decoded. Real caches'
// frames compress to 5-15 MB.
inline constexpr std::uint64_t kHeldFrameBytes = 64ULL << 20;

// A file whose data spans chunks: opened before its first piece is written, hashed piece by piece in order.
struct LargeFile {
  UniqueFd fd;
  Sha256 hash;
  // A group file to relocate (unpack/relocate.hpp): its pieces are gathered here, at their offsets, and written
  // once, rewritten, at the last piece. Empty otherwise.
  BigBuffer held;
  // A pickled Inductor entry to relocate: its pieces are fed in order and written rewritten as they come
  // (unpack/streamed_pickle.hpp); null otherwise.
  std::unique_ptr<StreamedPickle> pickle;
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
  // A frame decoded through zstd's window: kChunkBytes, allocated on first use and reused for every chunk this
  // slot carries. A frame decoded whole: unused, the chunk is a view into the frame's buffer.
  BigBuffer buffer;
  char* base = nullptr;  // the chunk's first byte
  std::size_t size = 0;
  std::vector<Piece> pieces;

  [[nodiscard]] char* data() { return base; }
};

// An entry path in a message: quoted and escaped, so a hostile name cannot break the message's one line.
[[nodiscard]] std::string quoted(const manifest::Entry& e);
// "entry 12 'inductor/x.py'"
[[nodiscard]] std::string entry_name(const manifest::Entry& e, std::size_t index);

// A zstd decompression context for the frames one thread decodes one after the other: its window, or its buffer
// for frames decoded whole (each touched once), serves them all.
class FrameDecoder {
 public:
  FrameDecoder();
  ~FrameDecoder();
  FrameDecoder(const FrameDecoder&) = delete;
  FrameDecoder& operator=(const FrameDecoder&) = delete;
  [[nodiscard]] ZSTD_DCtx* get() const { return dctx_; }
  // A buffer of at least `size` bytes for a frame decoded whole: the one the frames before it used, unless it is
  // smaller (then a new one, and the old one is freed).
  [[nodiscard]] char* whole_buffer(std::size_t size);

 private:
  ZSTD_DCtx* dctx_;
  BigBuffer whole_;
};

class FrameStream {
 public:
  // Frame `frame` of the archive's (fully loaded) manifest, decoded with `decoder` (whole when the frame's raw size
  // is at most `whole_limit`, else through zstd's window); `tar_offset`: the raw bytes of the frames before it.
  FrameStream(const Archive& a, FrameDecoder& decoder, std::size_t frame, std::uint64_t tar_offset, Progress& progress,
              std::uint64_t whole_limit = kWholeFrameBytes);
  FrameStream(const FrameStream&) = delete;
  FrameStream& operator=(const FrameStream&) = delete;

  // Fills `chunk` with the next part of the frame (at least kChunkBytes but at its end); false once the frame is
  // over and checked. Throws IntegrityError naming the frame or entry. A chunk of a frame decoded whole stays
  // valid as long as the FrameStream.
  //
  // Reads the frame's compressed bytes (only the range the manifest gives it), hashes them, decompresses and
  // parses the tar stream: every header is checked against the next manifest entry of this frame (path, type,
  // mode, size, link), and the chunk carries the pieces of file data that lie in it, for the writer. At the
  // frame's end it checks the SHA-256 of the compressed bytes, the raw size, and that the frame ends where the
  // manifest says: after its last entry, or, for the last frame, after the end-of-archive blocks.
  //
  // From an archive file (not a stream), the first call also reads and hashes the frame's compressed bytes whole
  // before decoding any of them: zstd, the tar parser and the writer only see bytes whose SHA-256 is the one the
  // (signed) manifest gives the frame, so each file's content is exactly what create compressed (authenticates()).
  // Up to kHeldFrameBytes those bytes stay in memory and are decoded from there; a larger frame is read again and
  // hashed again at its end, as the file could change between the two reads.
  bool next(Chunk& chunk);

  // Whether next() checks each frame of `a` before decoding it: for an archive file, not for a stream (read once,
  // in order), whose bytes are checked only at each frame's end: its files' own SHA-256 vouch for them as written.
  [[nodiscard]] static bool authenticates(const Archive& a) { return !a.payload; }

  // The memory a FrameStream of frame `f` and its decoder's part for it take at most, with `tokens` chunks in
  // flight: its raw bytes when decoded whole, else the window and the chunks; and its compressed bytes.
  [[nodiscard]] static std::uint64_t memory(const manifest::Frame& f, int window_log, std::size_t tokens);

 private:
  enum class Phase { header, pax, data, padding, end, done };

  [[nodiscard]] std::string frame_name() const;
  void authenticate();
  void read_input();
  void fill(Chunk& c);
  void fill_whole(Chunk& c);
  void end_of_frame(std::size_t rc, std::size_t produced);
  void parse(Chunk& c);
  void finish() const;
  std::size_t take_data(Chunk& c, std::size_t pos, std::size_t avail);
  void on_block(Chunk& c, std::size_t pos);
  bool on_end_block(const std::string& where);
  void start_pax(const manifest::UstarBlock& b, const std::string& where);
  std::size_t match_entry(const manifest::UstarBlock& b, const std::string& where);
  void start_entry(Chunk& c, std::size_t pos, std::size_t index);

  const Archive& a_;
  const manifest::Manifest& m_;
  const manifest::Frame& f_;
  std::size_t frame_;
  bool last_frame_;
  Progress& progress_;
  ZSTD_DCtx* dctx_;  // the decoder's
  std::vector<char> input_;
  ZSTD_inBuffer in_{};
  std::uint64_t in_left_ = 0;
  std::uint64_t in_offset_ = 0;
  std::uint64_t raw_in_frame_ = 0;
  Sha256 frame_hash_;
  bool authenticated_ = false;
  bool frame_done_ = false;
  // The frame's compressed bytes, hashed and checked (kHeldFrameBytes); empty when they are read in pieces.
  BigBuffer held_;
  char* whole_ = nullptr;       // the frame's raw bytes, when decoded whole: the decoder's buffer ...
  std::size_t whole_size_ = 0;  // ... of which the raw size plus one block are used (see fill_whole)

  Phase phase_ = Phase::header;
  std::string block_;
  std::string pax_;
  std::uint64_t pax_need_ = 0;
  std::uint64_t pax_size_ = 0;
  bool pending_pax_ = false;
  std::uint64_t tar_offset_ = 0;
  std::size_t next_entry_ = 0;
  std::size_t end_entry_ = 0;  // one past this frame's last entry
  std::size_t current_ = 0;
  std::uint64_t data_left_ = 0;
  std::uint64_t pad_left_ = 0;
  std::shared_ptr<LargeFile> large_;
  std::string archive_name_;  // the archive's path, quoted, for messages
  std::string where_;         // the current header's place, for messages (on_block)
  std::string path_;          // the manifest path of the entry a header is checked against (match_entry)
};

}  // namespace ccpack::unpack
