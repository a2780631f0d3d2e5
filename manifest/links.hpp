// The tree of an archive's entries, and the rule that judges its symlinks: every symlink, resolved the way the
// kernel would resolve it inside the restored folder, through the other symlinks of the same tree, must stay
// inside its component. An absolute or empty target is outside by definition.
//
// A lexical check of each target alone is not enough: with `c/l2 -> .` and `c/l1 -> l2/..`, l1 looks inside
// ("l2/.." is "." lexically) but the kernel resolves l2 first, to c itself, and its ".." is the parent of c.
// The same rule runs on create (over the scanned entries, pack/scanner.cpp) and on every read
// (Manifest::validate), so ccpack never writes an archive it would refuse. The tree also answers what
// Manifest::validate needs of each entry (does its folder exist, does it repeat), so the entries are indexed once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "manifest/tar.hpp"
#include "util/child_map.hpp"

namespace ccpack::manifest {

// The kernel's MAXSYMLINKS: more symlinks followed to resolve one link is refused as a loop.
inline constexpr int kMaxLinkHops = 40;

// Memory: one node (32 bytes) and two map slots (24 bytes each) per entry; the paths and targets are not copied,
// so the entries they point into must outlive the tree. Cost: each symlink's target is walked once (results are memoised), each
// step one hash lookup of one name.
class EntryTree {
 public:
  EntryTree() = default;
  explicit EntryTree(std::size_t entries) {
    nodes_.reserve(entries);
    children_.reserve(entries);
  }

  enum class Added : std::uint8_t { ok, duplicate, no_folder };
  struct AddResult {
    Added status = Added::ok;
    std::uint32_t node = 0;  // valid when ok
  };
  // Adds "<component>/<relative path>" (already checked by check_path: no empty, "." or ".." names). Its folder
  // must have been added before, as a folder.
  AddResult add(std::string_view path, EntryType type, std::string_view link_target);
  // Adds `name` (one name, no '/') in the folder node `parent` (kNoParent: a component root): what add() does for
  // a path whose folder is already known, without walking the path (manifest/entry_list.hpp keeps that link).
  AddResult add_child(std::uint32_t parent, std::string_view name, EntryType type, std::string_view link_target);
  static constexpr std::uint32_t kNoParent = UINT32_MAX;

  enum class LinkVerdict : std::uint8_t { inside, escapes, loops };
  // Resolves the symlink `node` through the tree (the rule at the top of this file). Call after every entry is
  // added. The target is walked one component at a time from the folder that holds the link:
  //   - "" and "." stay; ".." goes to the parent, and going above the component root is an escape;
  //   - a name in the tree is entered; a symlink is followed (its own resolution, memoised) and counts as a hop;
  //     more than kMaxLinkHops hops is refused as a loop, so is a link met again while it is being resolved;
  //   - a name not in the tree (a dangling target, or something a program creates later) is taken as a plain
  //     folder: the walk goes on lexically, so "missing/../../x" from the root escapes even though it would only
  //     fail today. A name below a file is taken the same way.
  [[nodiscard]] LinkVerdict resolve_link(std::uint32_t node);

 private:
  enum class State : std::uint8_t { unresolved, resolving, resolved };
  struct Node {
    std::string_view target;  // symlinks only
    std::uint32_t parent = kNoParent;
    EntryType type = EntryType::file;
    State state = State::unresolved;
    std::uint8_t hops = 0;          // symlinks followed to resolve this link (resolved links)
    std::uint32_t resolved = 0;     // the node the link leads to ...
    std::uint32_t extra_depth = 0;  // ... and how many names below it that are not in the tree
  };
  // Where a link's walk is: the node reached, how many names below it are not in the tree, the links followed.
  struct Walk {
    std::uint32_t at;
    std::uint32_t extra = 0;
    int hops = 0;
  };
  LinkVerdict resolve(std::uint32_t link, int depth);
  LinkVerdict walk_target(std::string_view rest, int depth, Walk& walk);

  std::vector<Node> nodes_;
  ChildMap children_;  // (folder node, name) -> node
};

}  // namespace ccpack::manifest
