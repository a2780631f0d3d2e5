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

// The target and Triton version (kernels = 1); nullopt when `text` is not such a kernel's metadata. Read by
// scan_plain_kernel_json where the text is in Triton's own form, else by the full parser.
[[nodiscard]] std::optional<TritonTarget> parse_kernel_json(std::string_view text);

// Triton's own form read without the full JSON parser: create reads every kernel's metadata (11,375 files at 100k
// files, 113,750 at a million), and nlohmann's lexer and callbacks were 5% of create's user time at 100k. The form:
// an object whose strings are printable ASCII without a backslash, whose numbers are integers of 64 bits, whose
// only nested object is the root's "target", arrays at most 8 deep, no key twice in an object. Returns the full
// parser's answer (parse_kernel_json_tree's) for a text in that form, including "not a kernel's metadata", and
// nullopt (undecided) for any other text; fuzz_kernel_json checks the two agree.
[[nodiscard]] std::optional<std::optional<TritonTarget>> scan_plain_kernel_json(std::string_view text);
// The full parser's answer alone (manifest/json_guard.hpp: depth bound, repeated keys refused).
[[nodiscard]] std::optional<TritonTarget> parse_kernel_json_tree(std::string_view text);

}  // namespace ccpack::manifest
