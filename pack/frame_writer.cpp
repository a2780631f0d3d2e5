// See frame_writer.hpp. zstd's streaming API (ZSTD_compressStream2): continue while fed, end to close a frame;
// every compressed byte is written out and hashed as it leaves the compressor.
#include "pack/frame_writer.hpp"

#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include <algorithm>
#include <string>

#include "manifest/format.hpp"
#include "util/big_buffer.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

// The archive's window bound is zstd's own default decoder limit, so stock `zstd -d` reads every archive.
static_assert(ccpack::manifest::kMaxWindowLog == ZSTD_WINDOWLOG_LIMIT_DEFAULT);

namespace ccpack::pack {

FrameWriter::FrameWriter(int out_fd, const Settings& settings)
    : out_fd_(out_fd), cctx_(ZSTD_createCCtx_advanced(ZSTD_customMem{huge_alloc, huge_free, nullptr})) {
  if (cctx_ == nullptr) throw Error("zstd: cannot create a compression context");
  set(ZSTD_c_compressionLevel, settings.level);
  set(ZSTD_c_windowLog, settings.window_log);
  set(ZSTD_c_enableLongDistanceMatching, 1);
  set(ZSTD_c_checksumFlag, 0);  // every frame and file is covered by SHA-256 in the manifest
  // Always at least one worker: zstd's multi-threaded format cuts jobs by size, not by thread count, so the
  // archive is the same bytes whatever -j or the machine's core count (single-threaded mode would differ).
  set(ZSTD_c_nbWorkers, static_cast<int>(std::max(1u, settings.jobs)));
  set(ZSTD_c_jobSize, settings.job_bytes);
  out_.resize(ZSTD_CStreamOutSize());
}

void FrameWriter::FreeContext::operator()(ZSTD_CCtx_s* cctx) const { ZSTD_freeCCtx(cctx); }

FrameWriter::~FrameWriter() = default;

void FrameWriter::feed(const char* data, std::size_t size) {
  raw_in_frame_ += size;
  std::size_t pos = 0;
  while (pos < size) pump(data, size, pos, false);
}

manifest::Frame FrameWriter::end_frame() {
  std::size_t pos = 0;
  while (pump(nullptr, 0, pos, true) != 0) {
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

void FrameWriter::set(int parameter, int value) {
  std::size_t rc = ZSTD_CCtx_setParameter(cctx_.get(), static_cast<ZSTD_cParameter>(parameter), value);
  if (ZSTD_isError(rc)) throw Error(std::string("zstd: cannot set a compression parameter: ") + ZSTD_getErrorName(rc));
}

std::size_t FrameWriter::pump(const char* data, std::size_t size, std::size_t& pos, bool end) {
  ZSTD_inBuffer in{data, size, pos};
  ZSTD_outBuffer out{out_.data(), out_.size(), 0};
  std::size_t rc = ZSTD_compressStream2(cctx_.get(), &out, &in, end ? ZSTD_e_end : ZSTD_e_continue);
  if (ZSTD_isError(rc)) throw Error(std::string("zstd compression failed: ") + ZSTD_getErrorName(rc));
  pos = in.pos;
  if (out.pos > 0) {
    write_all(out_fd_, out_.data(), out.pos, "the archive scratch file");
    frame_hash_.update(out_.data(), out.pos);
    written_ += out.pos;
  }
  return rc;
}

}  // namespace ccpack::pack
