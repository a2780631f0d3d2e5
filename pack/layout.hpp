// Where the payload's zstd frames end, so restore can decode them in parallel without losing the long-range
// redundancy that halves the archive.
//
// Inductor's FX-graph pickles embed verbatim copies of Triton kernel files (about 131 MB of the 363 MB real H200
// cache), and each pickle names the kernel folders it embeds: the folder's 52-character base32 name appears as a
// string in the pickle's bytes. So a pickle and the folders it names form a group that compresses like one file;
// cut between groups, the frames lose next to nothing. The order and the cuts: at plan_layout. Below
// split_threshold of tar the entries keep the scanner's order in one frame: small caches keep the exact bytes they
// always had (tests/data/golden-v1.ccpack).
//
// plan_layout is a pure function of the entry list and what each bundle names; lay_out is the driver that finds
// the names by one linear pass over the bundles' bytes, read through the entry source (so create and import,
// which go through it alike, give the same tar stream), and puts the source's entries in the planned order.
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "manifest/entry_list.hpp"
#include "pack/entry_source.hpp"

namespace ccpack::pack {

struct LayoutLimits {
  // Measured on the real H200 cache (363 MB of tar) on 2 cores, decoding alone: one frame takes 0.215 s of CPU;
  // laid out, its largest frame takes 0.072 s (decoded into one buffer, unpack/frame_stream.hpp). Below 64 MiB a
  // whole frame decodes in about 40 ms, so splitting would win little and would change every small archive.
  std::uint64_t split_threshold = 64ULL << 20;
  // Frames of the rest. Real cache, level 1, before twins were placed (99 MB of rest): one frame 8.5 MB, two
  // 9.2 MB, three 10.0 MB, six 10.4 MB (the autotuning candidates repeat each other). With twins placed its
  // rest is 18 MB: one frame.
  std::uint64_t rest_frame_bytes = 48ULL << 20;
  // Groups smaller than this share a frame with the group before (many small pickles: one frame, not hundreds).
  std::uint64_t min_group_frame_bytes = 16ULL << 20;
  // Frames of a cache above split_threshold whose bundles name no kernel folder (so no twins to keep together):
  // its entries in the scanner's order, cut into frames of about this size (at most zstd's window, 128 MiB), so
  // restore decodes them and create compresses them in parallel. 100k synthetic files (545 MiB of tar): one frame
  // 46.8 MB, cut at 128 MiB 49.8 MB (+6%), at 96 MiB 50.9 MB, at 48 MiB 54.8 MB.
  std::uint64_t plain_frame_bytes = 128ULL << 20;
};

struct Layout {
  // Archive position -> index in the source's entry list. Empty: the source's order as it is, one frame (up to
  // PackOptions::frame_limit).
  std::vector<std::size_t> order;
  // Archive positions, ascending and > 0, where a new frame begins.
  std::vector<std::size_t> frame_starts;
};

// A bundle file (an FX-graph pickle) and the kernel folders it names, as indices of the entry list, in order of
// first mention, each once.
struct Bundle {
  std::size_t file = 0;
  std::vector<std::size_t> folders;
};

// Triton's kernel folders by name (a folder named by 52 characters of A-Z2-7), for the search in bundle bytes.
class KernelFolderIndex {
 public:
  static constexpr std::size_t kNameLength = 52;

  // `entries` compact (manifest/entry_list.hpp); the index views its names, so it must outlive the index.
  explicit KernelFolderIndex(const manifest::EntryList& entries);
  [[nodiscard]] bool empty() const { return by_name_.empty(); }
  // Appends to `found` every kernel folder named in `bytes`, in order of appearance (repeats included). A name
  // may touch other alphabet characters (a pickle's length byte '4' precedes every 52-character string).
  void find(std::string_view bytes, std::vector<std::size_t>& found) const;

 private:
  std::unordered_map<std::string_view, std::size_t> by_name_;  // views into the entry list's names
};

// The files worth searching for kernel names: files of at least 1 MiB below an Inductor cache's fxgraph/ folder.
[[nodiscard]] std::vector<std::size_t> bundle_candidates(const manifest::EntryList& entries);

// The layout of `entries` (compact, in the scanner's order) given what each bundle names. Pure and
// deterministic:
//   frame(s) of groups:  every folder first (parents before children), then each group: the bundle file (a
//                        pickle), then the files of the kernel folders it names, in order of first mention (each
//                        copy then lies about one pickle-length back, inside the 128 MiB window), each folder
//                        followed by the unnamed kernel folders just like it (autotuning's second compile of the
//                        same kernel: same name and size of the largest file);
//   frame(s) of the rest: the other files in the scanner's order (large, then small), then symlinks, cut into
//                        frames of about LayoutLimits::rest_frame_bytes.
// A group opens a new frame unless the frame before holds less than min_group_frame_bytes. A kernel folder named
// by several bundles goes with the first.
[[nodiscard]] Layout plan_layout(const manifest::EntryList& entries, const std::vector<Bundle>& bundles,
                                 const LayoutLimits& limits = {});

// `entries` (compact) in the order `order` gives (entry k is the old entry order[k]; every folder still before
// what is inside it), compact.
[[nodiscard]] manifest::EntryList reordered(const manifest::EntryList& entries, const std::vector<std::size_t>& order);

// Where frames begin for `entries` kept in the scanner's order: every LayoutLimits::plain_frame_bytes or so, none
// below split_threshold.
[[nodiscard]] std::vector<std::size_t> even_frames(const manifest::EntryList& entries, const LayoutLimits& limits = {});

// Finds the bundles of an opened source (reading them in parallel), plans, and puts the source's entries in the
// planned order (EntrySource::reorder). Returns where frames begin (Layout::frame_starts), for the packer; a cache
// whose bundles name no kernel folder keeps its order, in even frames.
[[nodiscard]] std::vector<std::size_t> lay_out(EntrySource& source, const LayoutLimits& limits = {});

}  // namespace ccpack::pack
