// Merge's rule, apart from any file: given the base's entries and then each delta's in turn, what each delta entry
// does to the merged tree. The flow (converge/merge.hpp) carries the decisions out on disk; this decides them, so
// the rule is tested on its own.
//
// The rule (docs/CONVERGE.md):
//   - the base wins: a path the base holds is never replaced (the delta's entry is skipped, "in the base");
//   - deltas are offered in the order of their manifest digests; a file or symlink no one holds yet is added;
//   - the same path with the same bytes (or link target) from a second delta: skipped, naming the first;
//   - the same path with other bytes: a conflict, reported; the entry whose identity (a file's SHA-256, a
//     symlink's SHA-256 of its target) is lower wins, whichever delta came first, so the winner does not depend on
//     the order the deltas were given in;
//   - a path below something that is not a folder in the merged tree (a base file or symlink, a delta's file) is
//     skipped with everything below it: a merged write never passes through a symlink;
//   - a folder is made when no one holds its path; a component the base does not have is skipped whole.
// Memory: one small record per path of the merged tree (the base's included), no file contents.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "manifest/manifest.hpp"
#include "util/sha256.hpp"

namespace ccpack::converge {

inline constexpr std::size_t kFromBase = SIZE_MAX;  // a tree entry's owner: the base, else the delta's index

struct Conflict {
  std::string path;
  std::size_t kept = 0;     // delta index whose entry the merged archive holds
  std::size_t dropped = 0;  // delta index whose entry lost
  std::string kept_sha256;  // identity (hex) of each: a file's SHA-256, a symlink's SHA-256 of its target
  std::string dropped_sha256;
};

struct Decision {
  enum class Action : std::uint8_t {
    make_folder,  // create the folder in the tree
    add,          // move the delta's file or symlink into the tree
    replace,      // the same, over the entry an earlier delta added (a conflict this one wins)
    none,         // a folder the tree already has: nothing to do, nothing to report
    skip          // left out, for `reason`
  };
  Action action = Action::none;
  std::string reason;                // skip only
  std::optional<Conflict> conflict;  // replace, and a skip that lost a conflict
};

class MergePlan {
 public:
  // The components the base holds and its entries (a compact list, the manifest's).
  MergePlan(const std::vector<manifest::Component>& components, const manifest::EntryList& base);
  // Starts delta `index`, named `name` in reasons (12 hex of its digest).
  void begin_delta(std::size_t index, std::string name);
  // What entry `e` of the current delta does; the plan records it as done.
  [[nodiscard]] Decision offer(const manifest::Entry& e);

 private:
  struct Node {
    manifest::EntryType type = manifest::EntryType::dir;
    Digest identity{};
    std::size_t owner = kFromBase;
  };
  [[nodiscard]] std::string owner_name(std::size_t owner) const;
  [[nodiscard]] Decision offer_folder(const manifest::Entry& e);
  [[nodiscard]] Decision offer_leaf(const manifest::Entry& e, const Digest& identity);

  std::unordered_set<std::string> components_;
  std::unordered_map<std::string, Node> tree_;  // by archive path
  std::vector<std::string> names_;              // delta index -> name
  std::size_t current_ = 0;
};

// A symlink's identity: SHA-256 of its target's bytes.
[[nodiscard]] Digest link_identity(std::string_view target);

}  // namespace ccpack::converge
