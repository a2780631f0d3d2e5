// The verdicts of `ccpack purge` and `restore --on-mismatch=purge`, one pure function per rule (no I/O except
// what the caller passes in), so unit tests drive each case without a disk. unpack/purge.hpp walks the folders,
// applies them and removes what they call stale. docs/PURGE.md gives the rules and their evidence.
//
//   marker   a folder restored by ccpack carries the fingerprint it was built for: manifest::compare against
//            this machine's, for that component; stale or refused -> the folder's contents are stale
//   kernel   a Triton kernel folder's <kernel>.json names "target" {backend, arch, warp_size} and
//            "triton_version": one that differs from this machine's gpu.arch / gpu.warp_size / triton.version
//   library  a compiled .so whose DT_NEEDED does not resolve here, or resolves first through another CUDA
//            major's wheel (a path with .../nvidia/...cu13... where torch.cuda says 12)
//   debris   *.lock files, Triton's tmp.pid_* folders, ccpack staging folders (their writer gone)
// A fact that is absent on this machine (no GPU probed) never makes anything stale: the entry is "unjudged" and
// kept, unless another, known fact already differs.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "manifest/fingerprint.hpp"
#include "manifest/kernel_json.hpp"
#include "manifest/policy.hpp"
#include "util/elf.hpp"

namespace ccpack::unpack {

enum class PurgeRule : std::uint8_t { marker, kernel, library, debris };
[[nodiscard]] const char* to_string(PurgeRule rule);

struct Judgement {
  enum State : std::uint8_t { fits, stale, unjudged } state = fits;
  std::string reason;  // why stale / why it cannot be judged
};

[[nodiscard]] Judgement judge_kernel(const manifest::TritonTarget& target, const manifest::Fingerprint& local);

// `built_for` is the marker's fingerprint; the component is the folder's.
[[nodiscard]] Judgement judge_marker(const manifest::Fingerprint& built_for, const manifest::Fingerprint& local,
                                     const manifest::ComponentRef& component);

// The CUDA major of a wheel path ("/site-packages/nvidia/cu13/lib/libcudart.so.13" -> 13,
// ".../nvidia/cublas_cu12/lib" -> 12); nullopt when the path is no nvidia wheel's.
[[nodiscard]] std::optional<int> wheel_cuda_major(std::string_view path);
// "12.6" -> 12; nullopt when absent or not a version.
[[nodiscard]] std::optional<int> cuda_major(const manifest::Fingerprint& local);

// Where needed libraries are looked for, in order, after the library's own RUNPATH (or RPATH).
struct LibrarySearch {
  std::vector<std::string> dirs;                   // LD_LIBRARY_PATH, then the standard and site folders (see purge.hpp)
  std::optional<int> cuda_major;                   // this machine's torch.cuda major
  std::function<bool(const std::string&)> exists;  // whether a file exists (a test seam)
};

// `lib` is the .so's path (for $ORIGIN). Stale when a needed library resolves nowhere, or first through another
// CUDA major's wheel.
[[nodiscard]] Judgement judge_library(const ElfDynamic& dyn, const std::string& lib, const LibrarySearch& search);

// Splits "a:b:$ORIGIN/../c" expanding $ORIGIN / ${ORIGIN} to `origin`; empty items are dropped.
[[nodiscard]] std::vector<std::string> split_search_path(std::string_view path, std::string_view origin);

// Transient debris by name: "*.lock" files, "tmp.pid_<pid>_*" folders, ccpack staging folders. `alive` says
// whether a process id still runs (a live writer's folder is kept).
[[nodiscard]] Judgement judge_debris(std::string_view name, bool is_dir, const std::function<bool(long)>& alive);

}  // namespace ccpack::unpack
