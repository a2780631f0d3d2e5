// What the cache itself says it was built for, read by `create` and recorded beside the probed fingerprint.
//
// Every Triton kernel folder holds a `<kernel>.json` naming its target ("target": {"backend": "cuda", "arch": 90,
// "warp_size": 32}) and "triton_version". They are read in the triton component (<triton>/<hash>/*.json) and in
// Inductor's own Triton folder (<inductor>/triton/<device>/<hash>/*.json); only those small files are read
// (at most manifest::kMaxKernelJsonBytes each, at most kMaxKernels in all, in parallel), and a file that is not such a JSON is
// ignored.
//
// `reconcile` then makes the fingerprint agree with the cache, so an archive never claims one GPU while its
// kernels were built for another: where the cache's kernels name one target, gpu.vendor / gpu.arch /
// gpu.warp_size / triton.version are taken from them when the probe is absent or says otherwise (and the probed
// device's name, SM count, count and driver, which then describe another machine, become absent); where they
// name several targets, gpu.arch is absent. Every such disagreement is returned as a warning that names both sides.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "manifest/cache_dir.hpp"
#include "manifest/entry_list.hpp"
#include "manifest/fingerprint.hpp"

namespace ccpack::pack {

inline constexpr std::uint64_t kMaxKernels = 1'000'000;

// Kernels counted by target from the text of their .json files, the one tally of create (from the bytes the
// packer reads, pack/create.cpp; or by read_triton_targets' own walk) and import (pack/import_fingerprint.cpp).
// add() may be called from several threads at once; the counts are merged in a map, so targets() does not depend
// on the order.
class KernelTargetTally {
 public:
  // Whether an archive's entry is a kernel's metadata: a file of at most manifest::kMaxKernelJsonBytes at
  // triton/<hash>/<name>.json or inductor/triton/<device>/<hash>/<name>.json, not a group file.
  [[nodiscard]] static bool wants(manifest::EntryType type, std::uint64_t size, std::string_view path);
  [[nodiscard]] static bool wants(const manifest::EntryList& entries, std::size_t i);
  // Counts the kernel whose .json is `text`; a text that is not a kernel's metadata is ignored.
  void add(std::string_view text);
  // The distinct targets with their kernel counts, sorted.
  [[nodiscard]] std::vector<manifest::TritonTarget> targets() const;

 private:
  using Key = std::tuple<std::string, std::string, int, std::string>;  // backend, arch, warp size, triton version
  mutable std::mutex mutex_;
  std::map<Key, std::uint64_t> kernels_;
};

// The distinct targets of the Triton kernel .json files under `dirs`, sorted, with their kernel counts.
[[nodiscard]] std::vector<manifest::TritonTarget> read_triton_targets(const std::vector<manifest::CacheDir>& dirs);

// Records `targets` in `fp` and makes its gpu / triton fields agree with them; returns the warnings.
[[nodiscard]] std::vector<std::string> reconcile(manifest::Fingerprint& fp, const std::vector<manifest::TritonTarget>& targets);

}  // namespace ccpack::pack
