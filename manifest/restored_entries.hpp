// The restored entry list: what a restore put into one cache folder, kept beside its marker so `ccpack status`
// can tell the files the archive brought from those the pod compiled since, without the archive.
//
// Restore writes it into the staging folder, next to the marker, before the swap (manifest/reserved_names.hpp:
// kEntriesName), so it appears with the folder's new content in the same rename and never half-written. It is a
// text file, one line per file or symlink of the component (grammar above kEntriesVersion). A list that cannot
// be trusted reads as absent: status then says the folder's entry list is missing, never guesses.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "manifest/manifest.hpp"

namespace ccpack::manifest {

// The list holds the component's files and symlinks (not folders: a folder made since shows through the files in
// it), paths relative to the folder, in manifest order. Text, version 1:
//
//   list    = header *entry end
//   header  = "ccpack-entries 1 " manifest-sha256-hex " " count LF     ; count: the entry lines that follow
//   entry   = "f " size " " sha256-hex " " path LF                      ; a file: its size and SHA-256
//           / "g " size " " sha256-hex " " path LF                      ; a file the restore may have rewritten
//                                                                       ; for its folder (relocation: Triton group
//                                                                       ; files, Inductor's pickled entries)
//           / "l " path LF                                              ; a symlink
//   end     = "end" LF
//   path    = the relative path with "\" written "\\" and LF written "\n" (nothing else escaped)
inline constexpr int kEntriesVersion = 1;
// The most a list may hold on disk: about 2 million files (the manifest's bound) of 60-byte paths; a real one is
// ~130 MB at a million files.
inline constexpr std::uint64_t kMaxEntriesBytes = 256ULL << 20;

struct RestoredEntry {
  EntryType type = EntryType::file;
  std::uint64_t size = 0;   // files: as packed
  Digest sha256{};          // files: as packed
  bool rewritable = false;  // the restore may have rewritten it (relocation): its bytes need not be the packed ones
};

struct RestoredEntries {
  std::string manifest_sha256;                             // lower-case hex, as the marker names it
  std::unordered_map<std::string, RestoredEntry> entries;  // by path relative to the folder

  // Reads `<dir>/<kEntriesName>`; nullopt when absent, not a regular file, unreadable, malformed, over the bounds
  // (over `max_bytes` on disk: not read at all), truncated (count or "end" wrong) or not for `manifest_sha256`.
  // Bounded as the manifest is (`limits`: at most max_entries entries, paths of at most max_path_length bytes):
  // about 80 bytes plus the path per entry. The file's size is checked before its first byte, and it is read
  // through a 1 MiB buffer, a line at a time: what is held is the entries, never a copy of the file.
  [[nodiscard]] static std::optional<RestoredEntries> read(const std::filesystem::path& dir, std::string_view manifest_sha256,
                                                           const Limits& limits = {}, std::uint64_t max_bytes = kMaxEntriesBytes);
};

// Writes the list of component `component` of `m` into the folder open as `dir_fd` (a staging folder), created
// exclusively; `rewritable(i)` says whether the restore may have rewritten file entry i (null: none). Throws Error.
void write_restored_entries(int dir_fd, const Manifest& m, std::string_view component, std::string_view manifest_sha256,
                            const std::function<bool(std::size_t)>& rewritable = nullptr);

}  // namespace ccpack::manifest
