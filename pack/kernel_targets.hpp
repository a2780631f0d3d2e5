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
#include <string>
#include <vector>

#include "manifest/cache_dir.hpp"
#include "manifest/fingerprint.hpp"

namespace ccpack::pack {

inline constexpr std::uint64_t kMaxKernels = 1'000'000;

// The distinct targets of the Triton kernel .json files under `dirs`, sorted, with their kernel counts.
[[nodiscard]] std::vector<manifest::TritonTarget> read_triton_targets(const std::vector<manifest::CacheDir>& dirs);

// Records `targets` in `fp` and makes its gpu / triton fields agree with them; returns the warnings.
[[nodiscard]] std::vector<std::string> reconcile(manifest::Fingerprint& fp, const std::vector<manifest::TritonTarget>& targets);

}  // namespace ccpack::pack
