// A Triton kernel's metadata file (<triton cache>/<hash>/<kernel>.json) names what the kernel was built for:
//   {"target": {"backend": "cuda", "arch": 90, "warp_size": 32}, "triton_version": "3.6.0", ...}
// One reader for `create` (pack/kernel_targets: the archive's triton_targets), `import` (pack/import_fingerprint:
// the derived fingerprint) and `purge` (unpack/purge_rules: is this kernel stale here). The text is untrusted: bounded size,
// depth and lengths; anything else gives nullopt.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "manifest/fingerprint.hpp"
#include "manifest/manifest.hpp"

namespace ccpack::manifest {

inline constexpr std::size_t kMaxKernelJsonBytes = 256 << 10;

// Where Triton's kernel folders lie, the one statement of it (create, status and purge all ask here): a kernel
// folder <hash> sits in a Triton cache folder, which is the triton component's own folder or a <device> folder in
// inductor's kInductorTritonFolder: "triton/<hash>" and "inductor/triton/<device>/<hash>" in an archive.
inline constexpr std::string_view kInductorTritonFolder = "triton";
// What the folders directly inside a component-relative folder are ("" is the component's own folder).
enum class TritonLevel : std::uint8_t { other, devices, kernels };
[[nodiscard]] TritonLevel folders_inside(ComponentKind kind, std::string_view relative_folder);
// The kernel folder ("<hash>", "triton/<device>/<hash>") that holds the file at `relative_path`; empty if none.
[[nodiscard]] std::string_view kernel_folder_of(ComponentKind kind, std::string_view relative_path);

// Triton's group files: "__grp__<name>.json" in a kernel folder, a list of the kernel's files by absolute path
// (unpack/relocate.hpp rewrites them on restore).
inline constexpr std::string_view kGroupFilePrefix = "__grp__";
[[nodiscard]] inline bool is_group_file_name(std::string_view file_name) {
  return file_name.starts_with(kGroupFilePrefix) && file_name.ends_with(".json");
}
// A kernel's metadata is <name>.json in its kernel folder; a group file is not a kernel's metadata.
[[nodiscard]] bool is_kernel_json_name(std::string_view file_name);
// Whether an archive path is one: "triton/<hash>/<name>.json" or "inductor/triton/<device>/<hash>/<name>.json".
[[nodiscard]] bool is_kernel_json_path(std::string_view path);

// The target and Triton version (kernels = 1); nullopt when `text` is not such a kernel's metadata.
[[nodiscard]] std::optional<TritonTarget> parse_kernel_json(std::string_view text);

}  // namespace ccpack::manifest
