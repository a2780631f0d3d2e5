// Walks the cache folders to be packed and decides what goes into the archive and in which order.
//
// Skipped, and reported: transient state that must never be shipped (Inductor's `locks/` folder, Triton's
// `tmp.pid_*` staging folders, `*.lock` files) and ccpack's own restore marker and staging debris.
// Refused with an error naming the path: devices, sockets, FIFOs, names (and link targets) that are not valid
// UTF-8 (the manifest is JSON), and symlinks that are absolute or lead outside their cache folder, judged by the
// rule restore applies (manifest/links.hpp: resolved through the other links of the tree). Relative symlinks
// that stay inside are packed as symlinks; empty folders are packed.
//
// Order (it decides the compression ratio, measured on the real H200 cache): every folder first (so restore can
// create the whole tree before writing files in parallel), then files of 4 MiB or more, then the other files,
// each group in byte order of path, then symlinks. Inductor's FX-graph pickles embed verbatim copies of many
// Triton kernel files; putting those large bundles first puts the small files that repeat them within the
// 128 MiB zstd long-range window (18.7 MB vs 19.2 MB for plain path order at level 1).
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "manifest/cache_dir.hpp"
#include "manifest/entry_list.hpp"
#include "manifest/tar.hpp"
#include "manifest/transient_names.hpp"

namespace ccpack::pack {

// One entry as an entry source lists it before it goes into an EntryList (pack/import_source.cpp); the
// filesystem scan builds the compact list directly.
struct SourceEntry {
  std::string path;              // archive path: "<component>/<relative>"
  std::filesystem::path source;  // where it comes from, for messages
  manifest::EntryType type = manifest::EntryType::file;
  std::uint32_t mode = 0;
  std::uint64_t size = 0;
  std::string link_target;
};

// A file's identity at scan time, to detect a file that changes before or while it is read (28 bytes). Times are
// nanoseconds since the epoch, modulo 2^64: two times 584 years apart would compare equal.
#pragma pack(push, 4)
struct FileStamp {
  std::uint64_t ino = 0;
  std::uint64_t mtime_ns = 0;
  std::uint64_t ctime_ns = 0;
  std::uint32_t dev = 0;  // an index into ScanResult::devices

  [[nodiscard]] bool matches(const struct stat& st, std::uint32_t device) const;
};
#pragma pack(pop)
static_assert(sizeof(FileStamp) == 28);

// The stamp of `st` with its device numbered in `devices` (appended when new); null: dev is st_dev's low bits.
[[nodiscard]] FileStamp stamp_of(const struct stat& st, std::vector<std::uint64_t>* devices);

struct ScanResult {
  manifest::EntryList entries;         // in archive order: paths, types, modes, sizes, link targets
  std::vector<FileStamp> stamps;       // one per entry
  std::vector<std::uint64_t> devices;  // st_dev of the stamps' dev numbers
  std::vector<std::string> skipped;    // archive paths of what was left out, with the reason
};

// The order rule's groups: folders (kept in walk order), large files, small files, symlinks.
[[nodiscard]] int archive_group(manifest::EntryType type, std::uint64_t size);

// Transient names that must not be shipped (see above): manifest/transient_names.hpp's rule.
using manifest::transient_reason;

// Puts entries listed in walk order (each folder before its children, names in byte order) in archive order.
void sort_in_archive_order(std::vector<SourceEntry>& entries);

// Where archive path `path` of a scan of `dirs` is on disk.
[[nodiscard]] std::string source_path(const std::vector<manifest::CacheDir>& dirs, std::string_view path);

// What `keep` keeps of `scanned` (in archive order): the files and symlinks whose archive path it accepts, the
// folders above them and each component root; the order, stamps, devices and skipped list go with them.
[[nodiscard]] ScanResult keep_only(ScanResult& scanned, const std::function<bool(const std::string& path)>& keep);

// Scans `dirs` (each must exist). Throws Error naming the offending path. Memory: the compact list and stamps
// (about 135 bytes an entry), after a walk that holds about twice that for a moment and gives it back.
[[nodiscard]] ScanResult scan(const std::vector<manifest::CacheDir>& dirs);

}  // namespace ccpack::pack
