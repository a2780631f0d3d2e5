// The names ccpack itself writes inside and beside a restored cache folder. One owner: the scanner skips them on
// create, the manifest check refuses archive entries that would collide with them, and restore writes them.
//
//   T/.ccpack-marker.json            the restore marker of target folder T (see manifest/marker.hpp)
//   T/.ccpack-entries                the entries the restore put into T (see manifest/restored_entries.hpp)
//   P/.T.ccpack-staging.<pid>        staging folder for T, beside it in T's parent P; also the old content after
//                                    the swap, until it is removed
//   D/.ccpack-merge-XXXXXX           merge's scratch folder beside its output in D (converge/scratch.hpp)
//   D/.ccpack-settle-XXXXXX          create --settle's scratch folder beside its output in D (settle/settle.hpp)
#pragma once

#include <string>
#include <string_view>

namespace ccpack::manifest {

inline constexpr std::string_view kMarkerName = ".ccpack-marker.json";
inline constexpr std::string_view kEntriesName = ".ccpack-entries";
inline constexpr std::string_view kStagingInfix = ".ccpack-staging.";
// Every name ccpack reserves starts with this prefix or contains kStagingInfix.
inline constexpr std::string_view kReservedPrefix = ".ccpack-";
// The scratch folders' prefixes (util/scratch_folder.hpp adds six random characters).
inline constexpr std::string_view kMergeScratchPrefix = ".ccpack-merge-";
inline constexpr std::string_view kSettleScratchPrefix = ".ccpack-settle-";

// The staging name for a target whose base name is `base`: ".<base>.ccpack-staging.<tag>".
[[nodiscard]] inline std::string staging_name(std::string_view base, std::string_view tag) {
  std::string name = ".";
  name += base;
  name += kStagingInfix;
  name += tag;
  return name;
}

// The prefix every staging name for `base` starts with, whatever its tag.
[[nodiscard]] inline std::string staging_prefix(std::string_view base) { return staging_name(base, ""); }

// Whether a file or folder name is one ccpack reserves (the marker, staging folders).
[[nodiscard]] inline bool is_reserved_name(std::string_view name) {
  return name.starts_with(kReservedPrefix) || name.find(kStagingInfix) != std::string_view::npos;
}

}  // namespace ccpack::manifest
