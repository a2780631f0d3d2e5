// Several of the archive's frames compressed at once, each by a zstd context of its own (pack/frame_writer.hpp).
//
// Why: create compresses with long-distance matching, and zstd finds long-distance matches for one job after
// another within a frame, so one frame is compressed at the pace of that serial search however many CPUs there
// are (at 100k files on 16 CPUs, 2.3 s of create's 2.9 s). Frames are independent (restore decodes them in
// parallel), so compressing several at once is the same bytes, sooner: each frame is a whole zstd frame that a
// fresh context makes exactly as the context that made the frame before it would (zstd's multi-threaded format
// cuts jobs by size, not by thread count).
//
// How: the packer's in-order stage calls begin_frame, feed and end_frame as before; each frame goes to a free lane
// (a thread that feeds one FrameWriter into the lane's scratch file: the first lane keeps its FrameWriter from
// frame to frame, the others make one per frame and free it after; see compress).
// begin_frame waits while every lane is busy or the frames in flight would hold more than Settings::memory (a
// frame counts its raw bytes up to zstd's window and job ring, plus its long-distance tables: what its context
// touches); feed waits while the lane holds Settings::queue_bytes not yet compressed. finish hands over the payload:
// the frames in archive order with their offsets in it, and their bytes in the lanes' scratch files. An error in a lane is thrown
// by the next call on the in-order side.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "manifest/manifest.hpp"
#include "pack/frame_writer.hpp"
#include "util/fs.hpp"

namespace ccpack::pack {

// The compressed payload, in the lanes' scratch files: what FrameLanes::finish hands over (it outlives the lanes).
class CompressedPayload {
 public:
  std::vector<manifest::Frame> frames;  // in archive order, offsets in the payload

  [[nodiscard]] std::uint64_t size() const;
  // Writes the payload, frame after frame, to the end of `out_fd`; `what` names it in errors.
  void copy_to(int out_fd, const std::string& what) const;

 private:
  friend class FrameLanes;
  struct Piece {
    std::size_t file = 0;
    std::uint64_t offset = 0;  // in that scratch file
  };
  std::vector<UniqueFd> files_;
  std::vector<Piece> pieces_;  // one per frame
};

class FrameLanes {
 public:
  struct Settings {
    FrameWriter::Settings writer;       // `jobs`: zstd workers of each frame
    unsigned lanes = 1;                 // frames compressed at once, at most (0 counts as 1)
    std::uint64_t memory = 0;           // what the frames in flight may cost together; a frame alone always goes
    std::size_t queue_bytes = 8 << 20;  // bytes fed to a lane and not yet taken by zstd, at most
  };

  // One scratch file per lane, in `scratch_dir` (open_scratch_file). Throws Error.
  FrameLanes(const std::filesystem::path& scratch_dir, const Settings& settings);
  ~FrameLanes();  // stops the lanes (also after an error or an exception on the in-order side)
  FrameLanes(const FrameLanes&) = delete;
  FrameLanes& operator=(const FrameLanes&) = delete;

  // What a frame of `raw_bytes` costs against Settings::memory: its raw bytes up to the window and the job ring
  // zstd keeps, and its long-distance tables.
  [[nodiscard]] static std::uint64_t frame_cost(std::uint64_t raw_bytes, const FrameWriter::Settings& writer);

  // Starts the next frame, of about `raw_bytes`: waits for a lane.
  void begin_frame(std::uint64_t raw_bytes);
  // Queues bytes of the current frame; `keep` holds them until zstd has taken them.
  void feed(std::shared_ptr<const void> keep, const char* data, std::size_t size);
  // Ends the current frame, which holds entries [first_entry, first_entry + entry_count).
  void end_frame(std::uint64_t first_entry, std::uint64_t entry_count);
  [[nodiscard]] bool in_frame() const { return current_ != kNone; }
  [[nodiscard]] std::uint64_t raw_in_frame() const { return raw_in_frame_; }
  [[nodiscard]] std::size_t frames_begun() const { return records_.size(); }
  // What the frames in flight count against Settings::memory now (a frame in the first lane: at least what its kept
  // context holds).
  [[nodiscard]] std::uint64_t memory_in_use() const;

  // Waits for every frame and hands over the payload; the lanes take no more frames.
  [[nodiscard]] CompressedPayload finish();

 private:
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

  struct Job {
    std::shared_ptr<const void> keep;
    const char* data = nullptr;
    std::size_t size = 0;
    std::size_t frame = kNone;  // set on the job that ends frame `frame`
  };
  struct Lane {
    std::thread thread;
    UniqueFd scratch;
    std::uint64_t written = 0;  // bytes in the scratch file
    std::deque<Job> queue;
    std::size_t queued_bytes = 0;
    bool busy = false;       // from begin_frame until its frame is compressed
    std::uint64_t cost = 0;  // what its frame holds, counted in in_use_ while busy
    std::uint64_t held = 0;  // what its kept FrameWriter holds between frames (the first lane only)
  };
  struct Record {
    manifest::Frame frame;  // offset: in the lane's scratch file until finish
    std::size_t lane = 0;
    bool done = false;
  };

  void run_lane(std::size_t lane);
  // Compresses one job into the lane's frame; `writer` is made at a frame's first job and freed at its end, when
  // the frame is returned (its offset in the lane's scratch file), except in the first lane, which keeps it for
  // its next frame: zstd then reuses its input ring, job buffers and workers' contexts (same parameters) instead
  // of faulting in fresh memory for every frame. The count stays exact: begin_frame gives a frame the first free
  // lane, so another lane is used only while the first is busy (its cost counted), and a frame in the first lane
  // counts what the kept context already holds, if more than the frame's own cost. With one lane (up to three
  // CPUs) or large frames (which go one at a time) every frame runs in the first lane.
  std::optional<manifest::Frame> compress(std::size_t lane, Job& job, std::unique_ptr<FrameWriter>& writer);
  void stop();
  void push(Job job);
  void throw_if_failed() const;        // with the mutex held
  static void drop_queue(Lane& lane);  // likewise

  Settings settings_;
  std::vector<Lane> lanes_;
  std::vector<Record> records_;
  std::uint64_t in_use_ = 0;  // cost of the frames in flight
  std::size_t current_ = kNone;
  std::uint64_t raw_in_frame_ = 0;
  bool finished_ = false;  // the payload was handed over
  bool stopping_ = false;
  std::exception_ptr error_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
};

}  // namespace ccpack::pack
