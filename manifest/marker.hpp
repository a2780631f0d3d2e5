// The restore marker: the small JSON file (manifest/names.hpp: kMarkerName) that restore writes at the root of
// every folder it fills. It says which archive the folder holds (the SHA-256 of the archive's exact manifest
// bytes), which component, which ccpack wrote it, and the fingerprint the archive was built for, so a later
// restore of the same archive is a no-op and `purge` can judge the folder without the archive.
//
//   {"marker": 1, "archive_manifest_sha256": "<64 hex>", "component": "inductor",
//    "restored_by": "ccpack 0.1.0", "fingerprint": {...}}
//
// Markers written before the "marker" version key existed have the same other keys and read as version 1.
// A marker that cannot be read or parsed is treated as absent: the folder is restored again, never trusted.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace ccpack::manifest {

inline constexpr int kMarkerVersion = 1;
inline constexpr std::size_t kMaxMarkerBytes = 1u << 20;

struct Marker {
  int version = kMarkerVersion;
  std::string archive_manifest_sha256;  // lower-case hex
  std::string component;
  std::string restored_by;
  std::string fingerprint_json = "{}";  // a JSON object, as recorded in the archive

  [[nodiscard]] std::string to_json() const;
  // nullopt when `text` is not a marker this ccpack understands.
  [[nodiscard]] static std::optional<Marker> parse(std::string_view text);
  // Reads `<dir>/<kMarkerName>`; nullopt when absent, unreadable, oversized or invalid.
  [[nodiscard]] static std::optional<Marker> read(const std::filesystem::path& dir);
};

}  // namespace ccpack::manifest
