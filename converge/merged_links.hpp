// Links across deltas. Each delta passes the link rule alone (manifest/links.hpp, over its own entries), but in the
// merged tree a link of one delta may walk through a link of another, or of the base: delta A's `d1/d2/y -> ../..`
// makes delta B's `d1/d2/x -> y/../../..` leave its component, though B alone resolves `y` as a plain folder. So
// before anything is extracted, the merge's rule (merge_plan.hpp) runs dry over the base and the deltas in merge
// order, and after each delta that adds or replaces a symlink, every symlink of the merged set is resolved through
// all the others (manifest::EntryTree, restore's rule). The first delta after which one leaves its component or
// loops is refused, naming that delta and the link. Only symlinks can change a verdict: a name the tree lacks, or
// one below a file, is walked as a plain folder anyway. Cost: one tree of the merged set per such delta.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "manifest/links.hpp"
#include "manifest/manifest.hpp"

namespace ccpack::converge {

inline constexpr std::size_t kLinkOfBase = static_cast<std::size_t>(-1);

struct MergedLinkFailure {
  std::size_t delta = 0;            // index in `deltas`: the delta after which the link fails
  std::string link;                 // the archive path of the link that fails
  std::size_t owner = kLinkOfBase;  // whose link it is: kLinkOfBase or an index in `deltas`
  manifest::EntryTree::LinkVerdict verdict = manifest::EntryTree::LinkVerdict::escapes;
};

// The first link of the merged set that leaves its component or loops, or nullopt when all stay inside. `deltas`
// in merge order (by manifest digest), duplicates left out.
[[nodiscard]] std::optional<MergedLinkFailure> first_merged_link_failure(const std::vector<manifest::Component>& components,
                                                                         const manifest::EntryList& base,
                                                                         const std::vector<const manifest::EntryList*>& deltas);

}  // namespace ccpack::converge
