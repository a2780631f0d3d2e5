// Set-valued fingerprint fields: which fields hold a list of entries, how the entries are joined into the field's
// one string value, and the set difference that `check`, `restore` and `status` show instead of two values that
// look alike (two 34-byte prefixes of a wheel list that differ only in its 9th entry).
//
// One owner: the probes join with join_entries, the comparison splits with split_entries, both by the field's
// ListSyntax here. A field not listed here is a single value.
//   comma     "a, b, c": wheels.cuda ("name==version", sorted by name), python.site_packages (folders, sorted)
//   settings  "K=V;K=V": env.inductor, env.triton (sorted by name); a value may itself hold ';', so the split is
//             only before "NAME=" (NAME of [A-Za-z0-9_], not starting with a digit)
// cache.targets (policy.hpp: the archive's triton_targets against the local gpu.arch) is a set too: its entries
// are GPU archs, built by the comparison from both sides (targets_diff).
//
// An entry has a name: the part before "==" (comma entries that have one) or "=" (settings); a path is its own
// name. Entries of one name on both sides with other text are `changed` ("name: archive -> here"); the others
// are `removed` (only in the archive) or `added` (only here). The difference holds no entry both sides share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ccpack::manifest {

enum class ListSyntax : std::uint8_t { comma, settings };

// The list syntax of a fingerprint field; nullopt for a single-valued field.
[[nodiscard]] std::optional<ListSyntax> list_syntax(std::string_view field);

// The entries of a value ("" has none), and the value of entries (the inverse, for entries that hold no separator).
[[nodiscard]] std::vector<std::string> split_entries(ListSyntax syntax, std::string_view value);
[[nodiscard]] std::string join_entries(ListSyntax syntax, const std::vector<std::string>& entries);

// The name of an entry ("nvidia-cudnn-cu13==9.13.0.50" -> "nvidia-cudnn-cu13", "K=V" -> "K"; a path: itself) and
// the rest after the name's separator ("9.13.0.50", "V"; empty for a path).
struct EntryParts {
  std::string_view name;
  std::string_view rest;
};
[[nodiscard]] EntryParts entry_parts(ListSyntax syntax, std::string_view entry);

struct ChangedEntry {
  std::string name;
  std::string archive;  // the rest of the archive's entry ("9.13.0.50")
  std::string local;    // the rest of this machine's entry
  bool operator==(const ChangedEntry&) const = default;
};

struct SetDiff {
  std::vector<std::string> added;     // whole entries, only here
  std::vector<std::string> removed;   // whole entries, only in the archive
  std::vector<ChangedEntry> changed;  // one name on both sides, other text
  // The separator its entries were joined with (for showing a side as the field spells it).
  ListSyntax syntax = ListSyntax::comma;

  [[nodiscard]] bool empty() const { return added.empty() && removed.empty() && changed.empty(); }
  [[nodiscard]] std::size_t size() const { return added.size() + removed.size() + changed.size(); }
  // Each difference in one phrase, ordered by entry name: "X==1 only in the archive", "Y==2 only here",
  // "Z: 1 -> 2".
  [[nodiscard]] std::vector<std::string> phrases() const;
  // The archive's side and this machine's side of the difference, as entries: removed plus the archive's
  // changed entries; added plus this machine's changed entries (ordered by name).
  [[nodiscard]] std::vector<std::string> archive_side() const;
  [[nodiscard]] std::vector<std::string> local_side() const;
  bool operator==(const SetDiff&) const = default;
};

// The difference of two values of a field with this syntax (entries compared as sets).
[[nodiscard]] SetDiff diff_entries(ListSyntax syntax, std::string_view archive, std::string_view local);
// The same for entries already split. A name that appears twice on one side is compared by whole entry.
[[nodiscard]] SetDiff diff_entries(ListSyntax syntax, const std::vector<std::string>& archive,
                                   const std::vector<std::string>& local);

}  // namespace ccpack::manifest
