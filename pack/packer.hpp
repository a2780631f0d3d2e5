// `ccpack create` and `ccpack import`: stream an entry source (pack/entry_source.hpp) as one pax tar through zstd
// and write the archive atomically.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "manifest/cache_dir.hpp"
#include "manifest/format.hpp"
#include "manifest/manifest.hpp"
#include "manifest/signature.hpp"
#include "pack/entry_source.hpp"
#include "pack/frame_lanes.hpp"
#include "pack/layout.hpp"

namespace ccpack::pack {

// What a run records in the manifest beside the files: set by the flow that packs (create, settle, merge, import),
// never by a setting.
struct PackRecords {
  manifest::Fingerprint fingerprint;  // not recorded(): none given; the source's derived one, if any, is used
  // Set: called once the payload is written, and its fingerprint replaces `fingerprint` (create probes the machine
  // and reads the kernels' targets on a thread of its own while the folders are scanned and packed).
  std::function<manifest::Fingerprint()> fingerprint_when_packed;
  std::optional<manifest::SettleRecord> settle;  // `create --settle`: the manifest's "settle" field
  std::optional<manifest::DeltaRecord> delta;    // `create --since-restore`: the manifest's "delta" field
  std::optional<manifest::MergeRecord> merge;    // `ccpack merge`: the manifest's "merge" field
};

// How to pack (the settings), and what the run records (`records`).
struct PackOptions {
  int level = 1;                             // zstd level
  int window_log = manifest::kMaxWindowLog;  // zstd long-range window: at most what stock `zstd -d` decodes
  unsigned jobs = 0;                         // 0: all cores
  unsigned lanes = 0;                        // frames compressed at once (pack/frame_lanes.hpp); 0: from jobs
  std::uint64_t frame_limit = 1ULL << 30;    // a new frame starts at the first entry boundary past this many raw bytes
  LayoutLimits layout;                       // where else frames end (pack/layout.hpp)
  bool progress = false;
  // Called from the reading threads with each file read whole (one over kPieceBytes is read in pieces and not
  // seen here) and its bytes as packed, once the source proved them: create counts the kernels' targets with it
  // (pack/create.cpp), so their .json files are not walked and read a second time.
  std::function<void(const manifest::EntryList& entries, std::size_t entry, std::string_view bytes)> on_file;
  // Returns the signatures over the exact manifest bytes (set by the CLI when a signing key is given); the
  // packer writes their block. Unset: the archive is unsigned ("[]").
  std::function<std::vector<manifest::Signature>(std::string_view manifest)> sign;
  PackRecords records;
};

struct PackResult {
  manifest::Manifest manifest;
  std::uint64_t archive_size = 0;
  std::vector<std::string> skipped;
};

// How much of create's pipeline `jobs` threads get: the batches in flight (batches_in_flight, each a pooled buffer of
// about 3 MiB) and the zstd workers of each frame (each holding about a job's bytes) follow the threads up to
// kMaxPipelineWidth, then stop growing, so create's peak memory does not grow with the machine's core count. More
// would add memory, not speed: a frame's long-distance search runs one job after another, keeping about two of its
// workers busy (pack/frame_lanes.hpp), and 34 batches of 1 MiB in flight keep 16 threads reading and hashing. On the
// 2-core VM at 100k files, peak RSS with -j 16 / 32 / 64 before the bound: 313 / 364 / 499 MiB.
inline constexpr unsigned kMaxPipelineWidth = 16;
[[nodiscard]] constexpr unsigned pipeline_width(unsigned jobs) { return std::clamp(jobs, 1U, kMaxPipelineWidth); }
// The batches create keeps in flight with `jobs` threads: two per pipeline thread, and two more.
[[nodiscard]] constexpr std::size_t batches_in_flight(unsigned jobs) { return 2 * std::size_t{pipeline_width(jobs)} + 2; }
// How many frames create compresses at once with `jobs` threads, with how many zstd workers each, in what memory
// (packer.cpp says why).
[[nodiscard]] FrameLanes::Settings lane_settings(const PackOptions& options, unsigned jobs);

// Packs the entries of `source` into `output`. On any error the output path is untouched. Throws Error.
[[nodiscard]] PackResult create_archive(EntrySource& source, const std::filesystem::path& output, const PackOptions& options);

// Packs the cache folders `dirs` (a FilesystemSource) into `output`.
[[nodiscard]] PackResult create_archive(const std::vector<manifest::CacheDir>& dirs, const std::filesystem::path& output,
                                        const PackOptions& options);

}  // namespace ccpack::pack
