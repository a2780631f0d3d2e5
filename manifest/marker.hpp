// The restore marker: the small JSON file (manifest/reserved_names.hpp: kMarkerName) that restore writes at the root of
// every folder it fills. It says which archive the folder holds (the SHA-256 of the archive's exact manifest
// bytes), which component, which ccpack wrote it, and the fingerprint the archive was built for, so a later
// restore of the same archive is a no-op and `purge` can judge the folder without the archive.
//
//   {"marker": 1, "archive_manifest_sha256": "<64 hex>", "component": "inductor",
//    "restored_by": "ccpack 0.1.0", "restored_at": "2026-12-01T09:30:00Z", "signed_by": "<key id>" | null,
//    "origin": "/abs/model.ccpack" | "oci://host/repo:tag" | null, "settle": {...} | null, "fingerprint": {...},
//    "archive_file": {...} (ArchiveFile below; only when restored from a local file)}
//
// Beside the marker, restore keeps the folder's entry list (manifest/restored_entries.hpp). A marker that cannot
// be read or parsed is treated as absent: the folder is restored again, never trusted. Which keys came later in
// version 1, and how a marker without them reads: at Marker's fields.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "manifest/fingerprint.hpp"
#include "manifest/settle_record.hpp"

struct stat;

namespace ccpack::manifest {

inline constexpr int kMarkerVersion = 1;

// The archive file a restore read, as fstat saw it. A file with the same device, inode, size, modification and
// change times is the same bytes: any write changes the change time, which only the kernel sets. A restore that
// finds every folder's marker naming the file it opens (and the digest its header records) is a no-op that
// needs neither the manifest's bytes nor its hash (unpack/archive.hpp, ManifestText::recorded).
struct ArchiveFile {
  std::uint64_t dev = 0;
  std::uint64_t ino = 0;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  // The manifest's top-level fields as Manifest::top_level_json writes them (what parse_top_level reads).
  std::string manifest_top_level;

  [[nodiscard]] static ArchiveFile of(const struct ::stat& st);
  // The same file, unchanged (the top-level copy is not compared).
  [[nodiscard]] bool same_file(const ArchiveFile& o) const {
    return dev == o.dev && ino == o.ino && size == o.size && mtime_ns == o.mtime_ns && ctime_ns == o.ctime_ns;
  }
};
inline constexpr std::size_t kMaxMarkerBytes = 1u << 20;
inline constexpr std::size_t kMaxMarkerOrigin = 4096;
// A larger top-level copy is not recorded (the marker stays far under kMaxMarkerBytes; the restore reads the manifest).
inline constexpr std::size_t kMaxMarkerTopLevel = 256u << 10;

// Markers written before the "marker" version key existed have the same other keys and read as version 1.
// "restored_at", "signed_by", "origin", "settle" and "archive_file" came later in version 1: a marker without them
// reads with them empty (settle: not recorded, archive_file: nullopt), and an older ccpack ignores them. The
// fingerprint is written with its keys sorted (as markers always had it) and parsed once, by parse().
struct Marker {
  int version = kMarkerVersion;
  std::string archive_manifest_sha256;  // lower-case hex
  std::string component;
  std::string restored_by;
  std::string restored_at;  // UTC, RFC 3339; empty in older markers
  // The trusted key whose signature the restore verified; empty: restored with --allow-unsigned and no trusted
  // signature, or an older marker.
  std::string signed_by;
  // Where the archive came from, for `status`: the file's absolute path or oci://REFERENCE, at most
  // kMaxMarkerOrigin bytes (longer is cut); empty: not recorded.
  std::string origin;
  bool settle_recorded = false;  // whether the marker says how the archive was settled (older ones do not)
  // The archive's own "settle" field (manifest/settle_record.hpp), so `status` can tell a pod's settled archive
  // from one never settled; nullopt: not settled (not tried), not recorded, or a record that does not read.
  std::optional<SettleRecord> settle;
  Fingerprint fingerprint;  // as recorded in the archive
  // Why the recorded fingerprint could not be read (empty: it was). The marker still names its archive, so a
  // restore of that archive stays a no-op; purge and status report the folder as unjudged.
  std::string fingerprint_error;
  std::optional<ArchiveFile> archive_file;  // nullopt: not recorded (restored from a registry, or an older marker)

  [[nodiscard]] std::string to_json() const;
  // nullopt when `text` is not a marker this ccpack understands.
  [[nodiscard]] static std::optional<Marker> parse(std::string_view text);
  // Reads `<dir>/<kMarkerName>`; nullopt when absent, unreadable, oversized or invalid.
  [[nodiscard]] static std::optional<Marker> read(const std::filesystem::path& dir);
};

// Now, UTC, RFC 3339 ("2026-12-01T09:30:00Z"): a marker's restored_at.
[[nodiscard]] std::string utc_now();

}  // namespace ccpack::manifest
