// The zstd side of create: one compression stream, cut into the archive's frames, written to the payload's scratch
// file as it goes. The packer (packer.cpp) feeds it tar bytes in archive order and ends a frame where the layout
// says; each frame comes back with its offset, sizes and the SHA-256 of its compressed bytes, for the manifest.
//
// Settings that make the bytes: the level, the long-distance window (at most manifest::kMaxWindowLog, what stock
// `zstd -d` decodes) and its match table (frame_writer.cpp says why its size), no zstd checksum (SHA-256 covers every frame and
// file), and always at least one worker thread with a fixed job size, so the output is the same bytes whatever -j or the
// machine's core count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "manifest/manifest.hpp"
#include "util/sha256.hpp"

struct ZSTD_CCtx_s;

namespace ccpack::pack {

class FrameWriter {
 public:
  struct Settings {
    int level = 1;
    int window_log = 0;
    unsigned jobs = 1;  // zstd worker threads (0 counts as 1)
    int job_bytes = 0;  // zstd's job size: with the window, what sets the compressor's memory
  };

  // Throws Error when zstd refuses a setting.
  FrameWriter(int out_fd, const Settings& settings);
  ~FrameWriter();
  FrameWriter(const FrameWriter&) = delete;
  FrameWriter& operator=(const FrameWriter&) = delete;

  // The bytes of the long-distance match table a context with these settings holds (zeroed for each frame).
  [[nodiscard]] static std::uint64_t match_table_bytes(const Settings& settings);

  void feed(const char* data, std::size_t size);
  // Ends the current frame; returns it (offset, sizes, hash) for the manifest.
  [[nodiscard]] manifest::Frame end_frame();

  [[nodiscard]] std::uint64_t raw_in_frame() const { return raw_in_frame_; }
  [[nodiscard]] std::uint64_t written() const { return written_; }

 private:
  void set(int parameter, int value);
  // Compresses from `data` (advancing `pos`), ending the frame when `end`; returns zstd's "bytes left to flush".
  std::size_t pump(const char* data, std::size_t size, std::size_t& pos, bool end);

  struct FreeContext {
    void operator()(ZSTD_CCtx_s* cctx) const;
  };

  int out_fd_;
  std::unique_ptr<ZSTD_CCtx_s, FreeContext> cctx_;  // freed also when the constructor throws on a setting
  std::vector<char> out_;
  Sha256 frame_hash_;
  std::uint64_t frame_start_ = 0;
  std::uint64_t written_ = 0;
  std::uint64_t raw_in_frame_ = 0;
};

}  // namespace ccpack::pack
