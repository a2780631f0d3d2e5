// A small, bounded reader of an ELF64 shared object's dynamic section: the libraries it needs (DT_NEEDED) and
// where it asks the loader to look for them (DT_RUNPATH, DT_RPATH). `ccpack purge` uses it to tell whether a
// compiled extension in a cache folder can still load here (unpack/purge_rules.hpp).
//
// The files are hostile input (they come from cache folders anyone may have written): only pread of bounded
// ranges, every offset and size checked against the file size before use, at most kMaxProgramHeaders program
// headers, kMaxDynamicEntries dynamic entries and kMaxElfString bytes per string. Anything that is not a
// little-endian ELF64 file with a sane dynamic section gives nullopt and a reason, never a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ccpack {

inline constexpr std::size_t kMaxProgramHeaders = 4096;
inline constexpr std::size_t kMaxDynamicEntries = 65536;
inline constexpr std::size_t kMaxElfString = 4096;

struct ElfDynamic {
  std::vector<std::string> needed;     // DT_NEEDED, in order
  std::optional<std::string> runpath;  // DT_RUNPATH
  std::optional<std::string> rpath;    // DT_RPATH (used by the loader only when there is no RUNPATH)
};

// Parses the bytes of a whole file, or a prefix of it (`read` gives `size` bytes at `offset`; false when it
// cannot). `file_size` bounds every offset. On failure returns nullopt and sets `why`.
using ElfRead = bool (*)(void* ctx, std::uint64_t offset, void* out, std::size_t size);
[[nodiscard]] std::optional<ElfDynamic> parse_elf_dynamic(ElfRead read, void* ctx, std::uint64_t file_size, std::string& why);

// Reads the file at `path` (not following a final link). nullopt and `why` when it is not a readable ELF64 file.
[[nodiscard]] std::optional<ElfDynamic> read_elf_dynamic(const std::string& path, std::string& why);

// The same over bytes in memory (unit tests, fuzzing).
[[nodiscard]] std::optional<ElfDynamic> parse_elf_dynamic(std::string_view bytes, std::string& why);

}  // namespace ccpack
