// See layout.hpp. plan_layout claims each kernel folder for the first bundle that names it, adds the unnamed
// twins of claimed folders, assigns every file below a claimed folder to it (through the entries' parent
// indices, no path is built), then emits folders, groups and the rest, noting where frames begin.
#include "pack/layout.hpp"

#include <oneapi/tbb/enumerable_thread_specific.h>
#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <limits>
#include <memory>
#include <unordered_set>

#include "manifest/manifest.hpp"
#include "util/error.hpp"
#include "util/thread_pool.hpp"

namespace ccpack::pack {
using manifest::EntryList;
using manifest::EntryType;

namespace {

constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
// A pickle that embeds a kernel holds at least its LLVM IR, PTX and cubin (hundreds of KB even for small kernels).
constexpr std::uint64_t kMinBundleBytes = 1ULL << 20;
// Bundles are read in pieces of this size (one per task), each overlapping the next by a name's length minus one,
// so a name across two pieces is found in the second. Each thread reads its pieces into one buffer of its own, so
// a piece is scanned while its bytes are still in the core's cache and no fresh memory is faulted in per piece
// (with a new 8 MiB buffer per piece, the real H200 cache's two pickles cost 133 MB of page faults and zeroing).
constexpr std::uint64_t kScanPieceBytes = 1ULL << 20;

constexpr std::array<bool, 256> base32_table() {
  std::array<bool, 256> t{};
  for (char c = 'A'; c <= 'Z'; ++c) t[static_cast<unsigned char>(c)] = true;
  for (char c = '2'; c <= '7'; ++c) t[static_cast<unsigned char>(c)] = true;
  return t;
}
constexpr std::array<bool, 256> kBase32 = base32_table();

bool is_kernel_name(std::string_view name) {
  return name.size() == KernelFolderIndex::kNameLength &&
         std::all_of(name.begin(), name.end(), [](char c) { return kBase32[static_cast<unsigned char>(c)]; });
}

bool is_kernel_folder(const EntryList& list, std::size_t i) {
  return list.type(i) == EntryType::dir && list.parent(i) != EntryList::kNoParent && is_kernel_name(list.name(i));
}

// Bytes of tar an entry takes, without pax records: enough to decide sizes and cuts.
std::uint64_t tar_estimate(const EntryList& list, std::size_t i) {
  std::uint64_t size = list.type(i) == EntryType::file ? list.file_size(i) : 0;
  return manifest::kTarBlock + size + manifest::tar_padding(size);
}

std::uint64_t tar_estimate(const EntryList& list) {
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < list.size(); ++i) total += tar_estimate(list, i);
  return total;
}

// The groups: per group its bundle and its folders in order (named ones in order of mention, each followed by its
// twins); per claimed folder its slot in `members`, the files below it in the source's order.
struct Claims {
  std::vector<std::vector<std::size_t>> groups;
  std::vector<std::size_t> bundle_of_group;
  std::unordered_map<std::size_t, std::size_t> slot;  // claimed folder entry -> index in `members`
  std::vector<std::vector<std::size_t>> members;
};

Claims claim_named(const std::vector<Bundle>& bundles) {
  Claims c;
  std::unordered_set<std::size_t> taken;
  for (const Bundle& b : bundles) {
    std::vector<std::size_t> mine;
    for (std::size_t f : b.folders) {
      if (taken.insert(f).second) mine.push_back(f);
    }
    if (mine.empty()) continue;
    c.groups.push_back(std::move(mine));
    c.bundle_of_group.push_back(b.file);
  }
  return c;
}

// A kernel folder's likeness: the name and size of its largest file (the LLVM IR of a Triton kernel). Autotuning
// compiles each candidate kernel twice, from two Python files that differ only in name, so the two folders hold
// the same code but for source locations; only one of them is embedded in a pickle.
using Likeness = std::pair<std::string_view, std::uint64_t>;
struct LikenessHash {
  std::size_t operator()(const Likeness& k) const {
    return std::hash<std::string_view>()(k.first) ^ (k.second * 0x9E3779B97F4A7C15ULL);
  }
};

std::unordered_map<std::size_t, Likeness> likeness_of_kernel_folders(const EntryList& list) {
  std::unordered_map<std::size_t, Likeness> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    std::uint32_t p = list.parent(i);
    if (list.type(i) != EntryType::file || p == EntryList::kNoParent || !is_kernel_folder(list, p)) continue;
    Likeness mine{list.name(i), list.file_size(i)};
    auto [at, added] = out.emplace(p, mine);
    if (!added && (mine.second > at->second.second || (mine.second == at->second.second && mine.first < at->second.first))) {
      at->second = mine;
    }
  }
  return out;
}

// Adds to each group, right after each of its folders, the unnamed kernel folders just like it (the twin then lies
// a few MB back, well inside the window: 11.4 MB of payload for the real cache instead of 18.0 MB). Then gives
// every folder of a group its slot.
void add_twins(const EntryList& list, Claims& c) {
  std::unordered_map<std::size_t, Likeness> likeness = likeness_of_kernel_folders(list);
  std::unordered_set<std::size_t> claimed;
  std::unordered_map<Likeness, std::size_t, LikenessHash> first_like;
  for (const std::vector<std::size_t>& g : c.groups) {
    for (std::size_t f : g) {
      claimed.insert(f);
      auto it = likeness.find(f);
      if (it != likeness.end()) first_like.emplace(it->second, f);
    }
  }
  std::unordered_map<std::size_t, std::vector<std::size_t>> twins;
  for (std::size_t i = 0; i < list.size(); ++i) {
    auto it = likeness.find(i);
    if (it == likeness.end() || claimed.count(i) != 0) continue;
    auto twin = first_like.find(it->second);
    if (twin != first_like.end()) twins[twin->second].push_back(i);
  }
  for (std::vector<std::size_t>& g : c.groups) {
    std::vector<std::size_t> with_twins;
    for (std::size_t f : g) {
      with_twins.push_back(f);
      auto it = twins.find(f);
      if (it != twins.end()) with_twins.insert(with_twins.end(), it->second.begin(), it->second.end());
    }
    g = std::move(with_twins);
    for (std::size_t f : g) {
      c.slot.emplace(f, c.members.size());
      c.members.emplace_back();
    }
  }
}

// The slot of the claimed folder entry `i` lies below (its nearest claimed ancestor), or kNone.
std::size_t slot_of(const EntryList& list, const Claims& c, std::size_t i) {
  for (std::uint32_t p = list.parent(i); p != EntryList::kNoParent; p = list.parent(p)) {
    auto it = c.slot.find(p);
    if (it != c.slot.end()) return it->second;
  }
  return kNone;
}

// The size of each of the about equal frames that `bytes` is cut into, near `frame_bytes` each.
std::uint64_t even_frame_bytes(std::uint64_t bytes, std::uint64_t frame_bytes) {
  std::uint64_t frames = std::max<std::uint64_t>(1, (bytes + frame_bytes - 1) / frame_bytes);
  return (bytes + frames - 1) / frames;
}

// Appends entries to the order and cuts frames.
class OrderBuilder {
 public:
  OrderBuilder(const EntryList& list, Layout& out) : list_(list), out_(out) {}
  void add(std::size_t index) {
    out_.order.push_back(index);
    bytes_ += tar_estimate(list_, index);
  }
  // Starts a new frame here when the current one holds at least `min_bytes`.
  void cut_if(std::uint64_t min_bytes) {
    if (bytes_ >= min_bytes && bytes_ > 0 && !out_.order.empty()) {
      out_.frame_starts.push_back(out_.order.size());
      bytes_ = 0;
    }
  }

 private:
  const EntryList& list_;
  Layout& out_;
  std::uint64_t bytes_ = 0;
};

}  // namespace

KernelFolderIndex::KernelFolderIndex(const EntryList& entries) {
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (is_kernel_folder(entries, i)) by_name_.emplace(entries.name(i), i);  // the first folder of a name keeps it
  }
}

// A window of kNameLength bytes can only hold a name when its last byte is in the alphabet, and most bytes of a
// pickle are not (lowercase text, binary): probing that byte first skips most of the input a window at a time
// (measured: reading and searching the real cache's 134 MB of pickles takes 0.055 s of CPU, 0.23 s byte by byte).
void KernelFolderIndex::find(std::string_view bytes, std::vector<std::size_t>& found) const {
  auto in_alphabet = [&](std::size_t i) { return kBase32[static_cast<unsigned char>(bytes[i])]; };
  auto look_up = [&](std::size_t start) {
    auto it = by_name_.find(bytes.substr(start, kNameLength));
    if (it != by_name_.end()) found.push_back(it->second);
  };
  std::size_t start = 0;  // of the next window that may hold a name
  while (start + kNameLength <= bytes.size()) {
    std::size_t last = start + kNameLength - 1;
    if (!in_alphabet(last)) {
      start = last + 1;
      continue;
    }
    std::size_t run = last;  // the first byte of the alphabet run that ends at `last`, no further back than start
    while (run > start && in_alphabet(run - 1)) --run;
    if (run > start) {
      start = run;
      continue;
    }
    look_up(start);  // [start, last] is all alphabet; so is each next window while the byte after it is
    for (; last + 1 < bytes.size() && in_alphabet(last + 1); ++last) look_up(++start);
    start = last + 2;
  }
}

std::vector<std::size_t> bundle_candidates(const EntryList& entries) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (entries.type(i) != EntryType::file || entries.file_size(i) < kMinBundleBytes || entries.component(i) != "inductor") {
      continue;
    }
    if (manifest::relative_of(entries.path(i)).starts_with("fxgraph/")) out.push_back(i);
  }
  return out;
}

Layout plan_layout(const EntryList& entries, const std::vector<Bundle>& bundles, const LayoutLimits& limits) {
  Layout out;
  if (tar_estimate(entries) < limits.split_threshold) return out;
  Claims c = claim_named(bundles);
  if (c.groups.empty()) return out;
  add_twins(entries, c);
  std::vector<bool> placed(entries.size(), false);
  for (std::size_t b : c.bundle_of_group) placed[b] = true;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (entries.type(i) != EntryType::file || placed[i]) continue;
    std::size_t s = slot_of(entries, c, i);
    if (s == kNone) continue;
    c.members[s].push_back(i);
    placed[i] = true;
  }

  OrderBuilder order(entries, out);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (entries.type(i) == EntryType::dir) order.add(i);
  }
  for (std::size_t g = 0; g < c.groups.size(); ++g) {
    order.cut_if(limits.min_group_frame_bytes);
    order.add(c.bundle_of_group[g]);
    for (std::size_t folder : c.groups[g]) {
      for (std::size_t i : c.members[c.slot.at(folder)]) order.add(i);
    }
  }
  // The rest, in frames of about equal size near rest_frame_bytes.
  std::uint64_t rest = 0;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (entries.type(i) != EntryType::dir && !placed[i]) rest += tar_estimate(entries, i);
  }
  std::uint64_t target = even_frame_bytes(rest, limits.rest_frame_bytes);
  order.cut_if(limits.min_group_frame_bytes);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (entries.type(i) == EntryType::dir || placed[i]) continue;
    order.cut_if(target);
    order.add(i);
  }
  return out;
}

EntryList reordered(const EntryList& entries, const std::vector<std::size_t>& order) {
  EntryList out;
  std::vector<std::uint32_t> moved_to(entries.size(), EntryList::kNoParent);
  for (std::size_t i : order) {
    std::uint32_t p = entries.parent(i);
    if (p != EntryList::kNoParent && moved_to[p] == EntryList::kNoParent) {
      throw Error("internal error: layout put '" + entries.path(i) + "' before its folder");
    }
    moved_to[i] = out.append_from(entries, i, p == EntryList::kNoParent ? p : moved_to[p]);
  }
  return out;
}

namespace {

// What each candidate names, read in overlapping pieces in parallel, merged in order: first mention, once each.
std::vector<Bundle> find_bundles(EntrySource& source, const KernelFolderIndex& index,
                                 const std::vector<std::size_t>& candidates) {
  const EntryList& entries = source.entries();
  struct Piece {
    std::size_t candidate;
    std::uint64_t offset;
    std::uint64_t length;
    std::vector<std::size_t> found;
  };
  std::vector<Piece> pieces;
  constexpr std::uint64_t kOverlap = KernelFolderIndex::kNameLength - 1;
  for (std::size_t c = 0; c < candidates.size(); ++c) {
    std::uint64_t size = entries.file_size(candidates[c]);
    for (std::uint64_t at = 0; at < size; at += kScanPieceBytes) {
      pieces.push_back({c, at, std::min(size - at, kScanPieceBytes + kOverlap), {}});
    }
  }
  oneapi::tbb::enumerable_thread_specific<std::unique_ptr<char[]>> buffers(
      [] { return std::make_unique_for_overwrite<char[]>(kScanPieceBytes + kOverlap); });
  use_thread_pool();
  oneapi::tbb::parallel_for(std::size_t{0}, pieces.size(), [&](std::size_t k) {
    Piece& p = pieces[k];
    char* buf = buffers.local().get();
    source.read_piece(candidates[p.candidate], p.offset, p.length, buf);
    index.find(std::string_view(buf, p.length), p.found);
  });
  std::vector<Bundle> bundles(candidates.size());
  std::vector<std::unordered_set<std::size_t>> seen(candidates.size());
  for (std::size_t c = 0; c < candidates.size(); ++c) bundles[c].file = candidates[c];
  for (const Piece& p : pieces) {
    for (std::size_t f : p.found) {
      if (seen[p.candidate].insert(f).second) bundles[p.candidate].folders.push_back(f);
    }
  }
  return bundles;
}

}  // namespace

std::vector<std::size_t> even_frames(const EntryList& entries, const LayoutLimits& limits) {
  std::uint64_t total = tar_estimate(entries);
  if (total < limits.split_threshold) return {};
  Layout out;  // its order is the scanner's: only the cuts are kept
  OrderBuilder order(entries, out);
  std::uint64_t target = even_frame_bytes(total, limits.plain_frame_bytes);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    order.cut_if(target);
    order.add(i);
  }
  return out.frame_starts;
}

std::vector<std::size_t> lay_out(EntrySource& source, const LayoutLimits& limits) {
  const EntryList& entries = source.entries();
  if (entries.editable() || tar_estimate(entries) < limits.split_threshold) return {};  // no reading for small caches
  std::vector<std::size_t> candidates = bundle_candidates(entries);
  if (candidates.empty()) return even_frames(entries, limits);
  KernelFolderIndex index(entries);
  if (index.empty()) return even_frames(entries, limits);
  Layout layout = plan_layout(entries, find_bundles(source, index, candidates), limits);
  if (layout.order.empty()) return even_frames(entries, limits);  // no bundle names a kernel folder
  source.reorder(layout.order);
  return layout.frame_starts;
}

}  // namespace ccpack::pack
