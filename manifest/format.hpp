// Archive format v1: the header frame that opens every .ccpack file. docs/FORMAT.md is the reference.
//
// An archive is a header frame, a zstd skippable frame (so stock `zstd -d` skips it) holding the manifest and
// the signature block, followed by the payload: zstd frames whose concatenated content is one POSIX pax tar
// stream (the byte layout is drawn above HeaderLayout). The header is read without touching the payload, so
// restore can refuse an archive before decompressing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "util/sha256.hpp"

namespace ccpack::manifest {

inline constexpr std::uint32_t kSkippableMagic = 0x184D2A5E;
inline constexpr char kMagic[8] = {'\x89', 'C', 'C', 'P', 'A', 'C', 'K', '\n'};
inline constexpr std::uint32_t kFormatVersion = 1;
inline constexpr std::uint32_t kMaxManifestBytes = 512u << 20;
inline constexpr std::uint32_t kMaxSignatureBytes = 1u << 20;
// Frames are decoded with at most this window (zstd's default decoder limit, so stock `zstd -d` works).
inline constexpr int kMaxWindowLog = 27;

//   archive := header-frame payload
//   header-frame (a zstd skippable frame, so stock `zstd -d` skips it):
//     u32le 0x184D2A5E            skippable-frame magic
//     u32le N                     bytes that follow in this frame
//     8     "\x89CCPACK\n"        ccpack magic
//     u32le 1                     format version
//     u32le 0                     flags (reserved, must be 0)
//     u64le P                     payload bytes (the zstd frames after this header)
//     32    SHA-256(manifest)
//     u32le M, M bytes            manifest (UTF-8 JSON, see manifest.hpp)
//     u32le S, S bytes            signature block (UTF-8 JSON array; "[]" when unsigned)
//   payload := zstd-frame+        their concatenated content is one POSIX pax tar stream
//
// Byte offsets of the header frame's fixed fields, from the start of the file (the grammar above, laid out).
// encode_header, read_header and the fuzz target all use this one table.
struct HeaderLayout {
  static constexpr std::size_t skippable_magic = 0;
  static constexpr std::size_t frame_size = 4;
  static constexpr std::size_t magic = 8;
  static constexpr std::size_t version = 16;
  static constexpr std::size_t flags = 20;
  static constexpr std::size_t payload_size = 24;
  static constexpr std::size_t manifest_sha256 = 32;
  static constexpr std::size_t manifest_size = 64;
  static constexpr std::size_t manifest = 68;  // the manifest bytes; everything before them is fixed
};
static_assert(HeaderLayout::magic - HeaderLayout::frame_size == 4 && HeaderLayout::version - HeaderLayout::magic == 8 &&
              HeaderLayout::flags - HeaderLayout::version == 4 && HeaderLayout::payload_size - HeaderLayout::flags == 4 &&
              HeaderLayout::manifest_sha256 - HeaderLayout::payload_size == 8 &&
              HeaderLayout::manifest_size - HeaderLayout::manifest_sha256 == 32 &&
              HeaderLayout::manifest - HeaderLayout::manifest_size == 4);

struct ArchiveHeader {
  std::uint32_t version = kFormatVersion;
  std::uint64_t payload_size = 0;
  std::string manifest;  // exact bytes, as signed (empty when read_header sent them to a sink)
  // SHA-256 of `manifest`: the archive's identity (restore markers), what signatures sign and what the header
  // records. read_header computes it once, checks it against the recorded one, and every reader reuses it.
  Digest manifest_sha256{};
  std::string signatures = "[]";
  std::uint64_t header_size = 0;  // bytes of the whole header frame (= payload offset in the file)
};

[[nodiscard]] std::string encode_header(const ArchiveHeader& header);

// The header frame in two parts, the bytes before the manifest and those after it (before + manifest + after ==
// encode_header(header)), so a writer sends a large manifest from where it is instead of copying it (create
// at a million files holds a manifest of ~200 MB).
struct HeaderAround {
  std::string before;
  std::string after;
};
[[nodiscard]] HeaderAround encode_header_around(const ArchiveHeader& header);

// Where read_header sends the manifest instead of keeping it: its bytes in order, in pieces of kManifestPiece
// (the last shorter), each one hashed before it is sent. What the sink keeps is its own affair; the header's
// `manifest` stays empty, and the digest is computed and checked as when the text is kept.
using ManifestSink = std::function<void(std::string_view piece)>;
inline constexpr std::size_t kManifestPiece = 256 << 10;

// Reads and checks the header frame of `fd` (named `path` in errors); throws IntegrityError on any mismatch,
// including a file size that does not match the recorded payload size (truncation, appended bytes). With a
// `sink`, the manifest goes to it instead of into the header (a no-op restore at a million files reads 250 MB of
// manifest for its top-level fields and its digest: manifest/top_level.hpp).
[[nodiscard]] ArchiveHeader read_header(int fd, const std::filesystem::path& path, const ManifestSink& sink = {});
// The same checks without reading the manifest: `manifest` stays empty and `manifest_sha256` is the digest the
// header records, unchecked. Only for a file a restore already read whole and checked, unchanged since
// (manifest/marker.hpp: ArchiveFile); the signatures still verify against that digest.
[[nodiscard]] ArchiveHeader read_header_recorded_digest(int fd, const std::filesystem::path& path);

}  // namespace ccpack::manifest
