// The environment fingerprint: what a cache was built for, recorded in the manifest by `create` and compared with
// the local machine by `check` and `restore` (manifest/policy.hpp says what a difference means).
//
// A fingerprint is a set of named fields, each a value or absent (null), always with the source it came from
// ("nvml", "python:dist-info", "env", ...). Absent means the probe could not tell, never a guess; the source then
// says why ("nvml: libnvidia-ml.so.1 not found"). `triton_targets` is what the cache itself says (the targets
// named by its Triton kernel .json files), set by `create`.
//
// JSON (the shared contract, docs/FINGERPRINT.md):
//   {"schema": 1, "fields": {"<name>": {"value": "<string>" | null, "source": "<string>"}, ...},
//    "triton_targets": [{"backend": "cuda", "arch": "90", "warp_size": 32, "triton_version": "3.6.0", "kernels": 437}]}
// The empty object {} (archives made before fingerprints) parses as a fingerprint that records nothing.
// `from_json` is the gate for untrusted bytes: bounded size, depth, counts and lengths, no duplicate keys, no
// unknown keys; it throws IntegrityError naming the field. It runs once, where an archive's manifest or a marker is
// read (manifest.hpp, marker.hpp), so what crosses the layers is this type, never JSON text.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ccpack::manifest {

inline constexpr int kFingerprintSchema = 1;

// Field names: the one list of them (the policy table in policy.cpp gives each its meaning).
namespace field {
inline constexpr std::string_view cpu_arch = "cpu.arch";
inline constexpr std::string_view os = "os";
inline constexpr std::string_view glibc = "glibc";
inline constexpr std::string_view python_version = "python.version";
inline constexpr std::string_view python_abi = "python.abi";
inline constexpr std::string_view python_site_packages = "python.site_packages";
inline constexpr std::string_view torch_version = "torch.version";
inline constexpr std::string_view torch_cuda = "torch.cuda";
inline constexpr std::string_view torch_hip = "torch.hip";
inline constexpr std::string_view triton_version = "triton.version";
inline constexpr std::string_view ptxas_version = "ptxas.version";
inline constexpr std::string_view ck4inductor_version = "ck4inductor.version";
inline constexpr std::string_view wheels_cuda = "wheels.cuda";
inline constexpr std::string_view gpu_vendor = "gpu.vendor";
inline constexpr std::string_view gpu_count = "gpu.count";
inline constexpr std::string_view gpu_name = "gpu.name";
inline constexpr std::string_view gpu_arch = "gpu.arch";
inline constexpr std::string_view gpu_sm_count = "gpu.sm_count";
inline constexpr std::string_view gpu_warp_size = "gpu.warp_size";
inline constexpr std::string_view gpu_driver = "gpu.driver";
inline constexpr std::string_view env_inductor = "env.inductor";
inline constexpr std::string_view env_triton = "env.triton";
inline constexpr std::string_view env_torch_cuda_arch_list = "env.torch_cuda_arch_list";
inline constexpr std::string_view env_cuda_visible_devices = "env.cuda_visible_devices";
inline constexpr std::string_view env_compile_threads = "env.compile_threads";
inline constexpr std::string_view world_size = "world_size";
inline constexpr std::string_view paths_inductor = "paths.inductor";
inline constexpr std::string_view paths_triton = "paths.triton";
}  // namespace field

struct FieldValue {
  std::optional<std::string> value;  // nullopt: absent
  std::string source;
  bool operator==(const FieldValue&) const = default;
};

// A target named by Triton kernel .json files of the cache ("target": {"backend", "arch", "warp_size"}).
struct TritonTarget {
  std::string backend;  // "cuda", "hip"
  std::string arch;     // "90", "gfx942"
  int warp_size = 0;
  std::string triton_version;
  std::uint64_t kernels = 0;
  bool operator==(const TritonTarget&) const = default;
};

// The GPU arch name a target stands for, as gpu.arch spells it: cuda 90 -> "sm_90", hip gfx942 -> "gfx942".
[[nodiscard]] std::string arch_name(const TritonTarget& target);
// The gpu.vendor a target's backend stands for, as the probes spell it: cuda -> "nvidia", hip -> "amd"; nullopt for
// a backend that names no vendor this contract knows.
[[nodiscard]] std::optional<std::string> gpu_vendor_of(const TritonTarget& target);

struct Fingerprint {
  std::map<std::string, FieldValue, std::less<>> fields;
  std::vector<TritonTarget> triton_targets;

  void set(std::string_view name, std::string value, std::string source);
  void absent(std::string_view name, std::string why);
  [[nodiscard]] const FieldValue* get(std::string_view name) const;
  // Whether anything was recorded (false for the {} of archives made before fingerprints).
  [[nodiscard]] bool recorded() const { return !fields.empty() || !triton_targets.empty(); }

  bool operator==(const Fingerprint&) const = default;

  // Compact JSON with a fixed key order: the same fingerprint gives the same bytes (to_tree().dump()).
  [[nodiscard]] std::string to_json() const;
  // The same document as a tree, for a writer that embeds it (the manifest, the marker, --json reports).
  [[nodiscard]] nlohmann::ordered_json to_tree() const;
  // Parses untrusted JSON text; throws IntegrityError naming the field.
  [[nodiscard]] static Fingerprint from_json(std::string_view text);
  // A two-column table (field, value, source) for `ccpack fingerprint`.
  [[nodiscard]] std::string to_table() const;
};

}  // namespace ccpack::manifest
