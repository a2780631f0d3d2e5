// See frame_lanes.hpp. One mutex and one condition variable for the in-order side and every lane: a handful of
// threads, woken a few times per MiB.
#include "pack/frame_lanes.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>

#include "util/error.hpp"

namespace ccpack::pack {

namespace {

// Copies `size` bytes at `offset` of `from` to the end of `to`: in the kernel where it can, else through a buffer.
void copy_range(int from, std::uint64_t offset, int to, std::uint64_t size, const std::string& what) {
  auto in_off = static_cast<loff_t>(offset);
  while (size > 0) {
    ssize_t n = ::copy_file_range(from, &in_off, to, nullptr, size, 0);
    if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EOPNOTSUPP || errno == EINVAL)) {
      std::vector<char> buf(1 << 20);
      while (size > 0) {
        std::size_t want = std::min<std::uint64_t>(size, buf.size());
        std::size_t got = pread_full(from, buf.data(), want, in_off, "the archive scratch file");
        if (got != want) throw Error("the archive scratch file is shorter than expected");
        write_all(to, buf.data(), got, what);
        in_off += static_cast<loff_t>(got);
        size -= got;
      }
      return;
    }
    if (n < 0) throw_errno("cannot write " + what);
    if (n == 0) throw Error("the archive scratch file is shorter than expected");
    size -= static_cast<std::uint64_t>(n);
  }
}

}  // namespace

std::uint64_t FrameLanes::frame_cost(std::uint64_t raw_bytes, const FrameWriter::Settings& writer) {
  // zstd's input ring holds the window and three jobs; then its long-distance match table; each worker with a
  // job of the frame holds about a job's bytes (its output and sequences).
  std::uint64_t job = static_cast<std::uint64_t>(std::max(writer.job_bytes, 1 << 20));
  std::uint64_t ring = (std::uint64_t{1} << writer.window_log) + 3 * job;
  std::uint64_t workers = std::min<std::uint64_t>(std::max(1U, writer.jobs), (raw_bytes + job - 1) / job + 1);
  return std::min(raw_bytes, ring) + FrameWriter::match_table_bytes(writer) + workers * job;
}

FrameLanes::FrameLanes(const std::filesystem::path& scratch_dir, const Settings& settings)
    : settings_(settings), lanes_(std::max(1u, settings.lanes)) {
  for (Lane& lane : lanes_) lane.scratch = open_scratch_file(scratch_dir, "a scratch file");
  try {
    for (std::size_t i = 0; i < lanes_.size(); ++i) lanes_[i].thread = std::thread([this, i] { run_lane(i); });
  } catch (...) {
    stop();  // joins the lanes started: a joinable std::thread destroyed by the unwinding would terminate
    throw;
  }
}

FrameLanes::~FrameLanes() { stop(); }

void FrameLanes::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (Lane& lane : lanes_) {
    if (lane.thread.joinable()) lane.thread.join();
  }
}

void FrameLanes::drop_queue(Lane& lane) {
  for (const Job& job : lane.queue) lane.queued_bytes -= job.size;  // a job being compressed stays counted
  lane.queue.clear();
}

void FrameLanes::throw_if_failed() const {
  if (error_) std::rethrow_exception(error_);
}

std::uint64_t FrameLanes::memory_in_use() const {
  std::lock_guard lock(mutex_);
  return in_use_;
}

void FrameLanes::begin_frame(std::uint64_t raw_bytes) {
  if (current_ != kNone || finished_) throw Error("internal: a frame begun inside another or after the last");
  std::uint64_t cost = frame_cost(raw_bytes, settings_.writer);
  std::unique_lock lock(mutex_);
  auto free_lane = [this] { return std::find_if(lanes_.begin(), lanes_.end(), [](const Lane& l) { return !l.busy; }); };
  // What the frame holds in that lane: its own cost, or what the lane's kept context already holds.
  auto cost_in = [&](const Lane& lane) { return std::max(cost, lane.held); };
  changed_.wait(lock, [&] {
    auto lane = free_lane();
    return error_ || (lane != lanes_.end() && (in_use_ == 0 || in_use_ + cost_in(*lane) <= settings_.memory));
  });
  throw_if_failed();
  Lane& lane = *free_lane();
  lane.busy = true;
  lane.cost = cost_in(lane);
  in_use_ += lane.cost;
  current_ = static_cast<std::size_t>(&lane - lanes_.data());
  records_.push_back(Record{{}, current_, false});
  raw_in_frame_ = 0;
}

void FrameLanes::push(Job job) {
  std::unique_lock lock(mutex_);
  Lane& lane = lanes_[current_];
  changed_.wait(lock, [&] { return error_ || lane.queued_bytes == 0 || lane.queued_bytes + job.size <= settings_.queue_bytes; });
  throw_if_failed();
  lane.queued_bytes += job.size;
  lane.queue.push_back(std::move(job));
  lock.unlock();
  changed_.notify_all();
}

void FrameLanes::feed(std::shared_ptr<const void> keep, const char* data, std::size_t size) {
  if (current_ == kNone) throw Error("internal: bytes fed outside a frame");
  if (size == 0) return;
  raw_in_frame_ += size;
  push(Job{std::move(keep), data, size, kNone});
}

void FrameLanes::end_frame(std::uint64_t first_entry, std::uint64_t entry_count) {
  if (current_ == kNone) throw Error("internal: a frame ended that was not begun");
  records_.back().frame.first_entry = first_entry;
  records_.back().frame.entry_count = entry_count;
  push(Job{nullptr, nullptr, 0, records_.size() - 1});
  current_ = kNone;
}

void FrameLanes::run_lane(std::size_t i) {
  Lane& lane = lanes_[i];
  std::unique_ptr<FrameWriter> writer;
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !lane.queue.empty(); });
    if (stopping_) {  // finished, or the in-order side gave up: what is queued is dropped
      drop_queue(lane);
      return;
    }
    Job job = std::move(lane.queue.front());
    lane.queue.pop_front();
    lock.unlock();
    std::optional<manifest::Frame> ended;
    try {
      ended = compress(i, job, writer);
    } catch (...) {
      lock.lock();
      if (!error_) error_ = std::current_exception();
      for (Lane& l : lanes_) drop_queue(l);  // nothing more is compressed: the in-order side throws at its next call
      changed_.notify_all();
      return;
    }
    lock.lock();
    lane.queued_bytes -= job.size;
    if (ended) {
      records_[job.frame].frame.offset = ended->offset;
      records_[job.frame].frame.compressed_size = ended->compressed_size;
      records_[job.frame].frame.raw_size = ended->raw_size;
      records_[job.frame].frame.sha256 = ended->sha256;
      records_[job.frame].done = true;
      lane.busy = false;
      in_use_ -= lane.cost;
      lane.held = i == 0 ? lane.cost : 0;  // the first lane keeps its context (compress)
    }
    changed_.notify_all();
  }
}

std::optional<manifest::Frame> FrameLanes::compress(std::size_t i, Job& job, std::unique_ptr<FrameWriter>& writer) {
  Lane& lane = lanes_[i];
  if (!writer) writer = std::make_unique<FrameWriter>(lane.scratch.get(), settings_.writer);
  if (job.size > 0) writer->feed(job.data, job.size);
  job.keep.reset();
  if (job.frame == kNone) return std::nullopt;
  manifest::Frame f = writer->end_frame();
  if (i != 0) writer.reset();  // its memory goes back before the lane's next frame
  f.offset = lane.written;     // only this lane's thread writes to its scratch file
  lane.written += f.compressed_size;
  return f;
}

CompressedPayload FrameLanes::finish() {
  if (current_ != kNone) throw Error("internal: the last frame was not ended");
  std::unique_lock lock(mutex_);
  changed_.wait(lock,
                [&] { return error_ || std::all_of(records_.begin(), records_.end(), [](const Record& r) { return r.done; }); });
  throw_if_failed();
  CompressedPayload payload;
  payload.frames.reserve(records_.size());
  std::uint64_t offset = 0;
  for (const Record& r : records_) {
    payload.frames.push_back(r.frame);
    payload.frames.back().offset = offset;
    payload.pieces_.push_back(CompressedPayload::Piece{r.lane, r.frame.offset});
    offset += r.frame.compressed_size;
  }
  for (Lane& lane : lanes_) payload.files_.push_back(std::move(lane.scratch));
  finished_ = true;
  lock.unlock();
  stop();  // the lanes end: the first one's kept context goes now, not when the lanes go
  return payload;
}

std::uint64_t CompressedPayload::size() const {
  std::uint64_t n = 0;
  for (const manifest::Frame& f : frames) n += f.compressed_size;
  return n;
}

void CompressedPayload::copy_to(int out_fd, const std::string& what) const {
  for (std::size_t k = 0; k < frames.size(); ++k) {
    copy_range(files_[pieces_[k].file].get(), pieces_[k].offset, out_fd, frames[k].compressed_size, what);
  }
}

}  // namespace ccpack::pack
