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

namespace {

// Long-distance matching's table: two entries per bucket and 2^(window_log - 6) entries (16 MiB at the 128 MiB
// window), not zstd's default eight and 2^(window_log - 7): each lookup compares fewer entries, and twice the
// buckets keep more of the long matches. Measured on the 2-core dev VM, create alternating with stock, 3 runs,
// (bucket log, table log): 100k synthetic files (5 frames) (3, 20) 3.83-4.04 s, 74.8 MB; (2, 20) 3.30-3.38 s,
// 76.7 MB; (2, 21) 3.50-3.78 s, 68.0 MB; (1, 21) 3.07-3.36 s, 70.0 MB; stock 3.90-4.31 s. The real fixture: all
// 0.67-0.82 s, 12.81 / 12.77 / 12.81 MB for (3, 20) / (2, 21) / (1, 21). A table of 2^22 entries was slower on
// both (cache misses, and zeroed for each frame).
constexpr int kLdmBucketSizeLog = 1;
constexpr int kLdmHashLogBelowWindow = 6;

int match_table_log(const FrameWriter::Settings& settings) {
  return std::max(ZSTD_LDM_HASHLOG_MIN, settings.window_log - kLdmHashLogBelowWindow);
}

}  // namespace

FrameWriter::FrameWriter(int out_fd, const Settings& settings)
    : out_fd_(out_fd), cctx_(ZSTD_createCCtx_advanced(ZSTD_customMem{big_alloc, big_free, nullptr})) {
  if (cctx_ == nullptr) throw Error("zstd: cannot create a compression context");
  set(ZSTD_c_compressionLevel, settings.level);
  set(ZSTD_c_windowLog, settings.window_log);
  set(ZSTD_c_enableLongDistanceMatching, 1);
  set(ZSTD_c_ldmBucketSizeLog, kLdmBucketSizeLog);
  set(ZSTD_c_ldmHashLog, match_table_log(settings));
  set(ZSTD_c_checksumFlag, 0);  // every frame and file is covered by SHA-256 in the manifest
  // Always at least one worker: zstd's multi-threaded format cuts jobs by size, not by thread count, so the
  // archive is the same bytes whatever -j or the machine's core count (single-threaded mode would differ).
  set(ZSTD_c_nbWorkers, static_cast<int>(std::max(1u, settings.jobs)));
  set(ZSTD_c_jobSize, settings.job_bytes);
  out_.resize(ZSTD_CStreamOutSize());
}

std::uint64_t FrameWriter::match_table_bytes(const Settings& settings) {
  constexpr std::uint64_t kEntryBytes = 8;  // zstd's ldmEntry_t: an offset and a checksum
  return kEntryBytes << match_table_log(settings);
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
