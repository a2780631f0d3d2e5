// Reads a foreign archive (tar, tar.gz, tar.xz, tar.zst, zip) entry by entry, for `ccpack import`.
//
// libarchive does the parsing, restricted to the tar and zip formats and the gzip, xz and zstd filters: its
// CVE history lives mostly in the other formats and filters, which are never registered here. A zstd stream
// whose window is larger than libarchive's zstd filter accepts (2^27: `zstd --long=30` output fails in
// libarchive 3.6.2), or that starts with a skippable frame, is decompressed by ccpack's own decoder instead
// (window up to 2^31, kMaxForeignWindowLog) and handed to libarchive as plain tar.
// Nothing here trusts the archive: ImportSource checks every path, type, mode and size it returns.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace ccpack::pack {

// The largest zstd window the import decoder accepts: 2 GiB of memory at most, what `zstd --long=31` writes.
inline constexpr int kMaxForeignWindowLog = 31;

struct ForeignEntry {
  enum class Kind : std::uint8_t { file, dir, symlink, hardlink, other };
  std::string path;  // as stored, unchecked
  Kind kind = Kind::other;
  std::string kind_name;    // for messages: "file", "character device", ...
  std::uint32_t mode = 0;   // permission bits, with setuid/setgid/sticky
  std::uint64_t size = 0;   // data bytes as the header says (0 when unknown)
  std::string link_target;  // symlink target, or the path a hard link refers to
};

class ForeignReader {
 public:
  // Opens `file`; throws Error when it cannot be read, IntegrityError when it is not a tar or zip archive.
  explicit ForeignReader(const std::filesystem::path& file);
  ~ForeignReader();
  ForeignReader(const ForeignReader&) = delete;
  ForeignReader& operator=(const ForeignReader&) = delete;

  // The next entry's header; false at the end. Throws IntegrityError naming the archive on a corrupt one.
  bool next(ForeignEntry& out);
  // Up to `size` bytes of the current entry's data; 0 at its end.
  std::size_t read(char* buf, std::size_t size);
  // "GNU tar format, xz" and the like, once the first header is read.
  [[nodiscard]] std::string describe() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace ccpack::pack
