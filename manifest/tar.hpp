// The POSIX pax tar encoding that ccpack writes inside its zstd frames, and the strict decoder restore uses.
//
// Grammar of the stream (POSIX.1-2001 pax interchange format, a subset):
//   stream  := entry* zero-block zero-block
//   entry   := [pax-header pax-records padding] ustar-header data padding
//   padding := NUL bytes up to the next multiple of 512
// A pax 'x' header precedes an entry only when a field does not fit ustar: a path that cannot be split into
// prefix (155) + name (100), a symlink target over 100 bytes, or a size of 8 GiB or more. Metadata is normalised
// for reproducible archives: uid/gid 0, empty user and group names, mtime 0. The decoder accepts exactly the
// entry types ccpack writes (regular file, directory, symbolic link) and rejects everything else by name.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ccpack::manifest {

inline constexpr std::size_t kTarBlock = 512;

enum class EntryType : std::uint8_t { file, dir, symlink };

[[nodiscard]] std::string_view to_string(EntryType type);

// The entry type of a ustar typeflag: '0' and '\0' a regular file, '5' a folder, '2' a symlink; nullopt for every
// other type (ccpack never writes them). The inverse of the typeflag append_tar_header writes.
[[nodiscard]] std::optional<EntryType> entry_type_of(char typeflag);

struct TarHeader {
  std::string path;  // without a trailing '/', also for folders
  EntryType type = EntryType::file;
  std::uint32_t mode = 0;   // permission bits only
  std::uint64_t size = 0;   // data bytes (0 for folders and links)
  std::string link_target;  // symlinks only
};

// Appends the header block(s) for `header` to `out` (a multiple of 512 bytes).
void append_tar_header(std::string& out, const TarHeader& header);

// Bytes of NUL padding after `size` bytes of data.
[[nodiscard]] constexpr std::uint64_t tar_padding(std::uint64_t size) { return (kTarBlock - size % kTarBlock) % kTarBlock; }

// One decoded 512-byte ustar block.
struct UstarBlock {
  char typeflag = 0;
  std::string path;  // prefix + '/' + name, as stored
  std::string link_target;
  std::uint32_t mode = 0;
  std::uint64_t size = 0;
};

// Decodes a ustar block; throws IntegrityError with `where` in the message on a bad checksum, magic or number.
[[nodiscard]] UstarBlock decode_ustar_block(const char* block, const std::string& where);

[[nodiscard]] bool is_zero_block(const char* block);

// Parses pax "len key=value\n" records; applies path, linkpath and size to `block`, ignores other keys.
void apply_pax_records(std::string_view records, UstarBlock& block, const std::string& where);

}  // namespace ccpack::manifest
