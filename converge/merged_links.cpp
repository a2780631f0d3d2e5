// Links across deltas (merged_links.hpp): the merged set built by the plan's rule, its symlinks resolved.
#include "converge/merged_links.hpp"

#include <algorithm>
#include <map>

#include "converge/merge_plan.hpp"

namespace ccpack::converge {
namespace {

using manifest::EntryTree;
using manifest::EntryType;

struct Held {
  EntryType type = EntryType::dir;
  std::string target;  // symlinks
  std::size_t owner = kLinkOfBase;
};

// path -> what the merged tree holds there; a map, so paths come sorted and a folder before what it holds.
using MergedSet = std::map<std::string, Held, std::less<>>;

// Every symlink of `merged` resolved through the others; the first that fails.
std::optional<MergedLinkFailure> first_failure(const MergedSet& merged, const std::vector<manifest::Component>& components) {
  EntryTree tree(merged.size() + components.size());
  for (const manifest::Component& c : components) {
    if (!merged.contains(c.name)) (void)tree.add(c.name, EntryType::dir, {});
  }
  std::vector<std::pair<std::uint32_t, MergedSet::const_iterator>> links;
  for (auto it = merged.begin(); it != merged.end(); ++it) {
    EntryTree::AddResult r = tree.add(it->first, it->second.type, it->second.target);
    if (r.status == EntryTree::Added::ok && it->second.type == EntryType::symlink) links.emplace_back(r.node, it);
  }
  for (const auto& [node, it] : links) {
    EntryTree::LinkVerdict v = tree.resolve_link(node);
    if (v != EntryTree::LinkVerdict::inside) return MergedLinkFailure{0, it->first, it->second.owner, v};
  }
  return std::nullopt;
}

}  // namespace

std::optional<MergedLinkFailure> first_merged_link_failure(const std::vector<manifest::Component>& components,
                                                           const manifest::EntryList& base,
                                                           const std::vector<const manifest::EntryList*>& deltas) {
  MergedSet merged;
  for (std::size_t i = 0; i < base.size(); ++i) {
    EntryType type = base.type(i);
    merged.emplace(base.path(i),
                   Held{type, type == EntryType::symlink ? std::string(base.link_target(i)) : std::string(), kLinkOfBase});
  }
  MergePlan plan(components, base);
  for (std::size_t d = 0; d < deltas.size(); ++d) {
    plan.begin_delta(d, std::to_string(d));
    bool links_changed = false;
    for (const manifest::Entry& e : *deltas[d]) {
      Decision decision = plan.offer(e);
      if (decision.action == Decision::Action::make_folder) merged.insert_or_assign(e.path, Held{EntryType::dir, {}, d});
      if (decision.action != Decision::Action::add && decision.action != Decision::Action::replace) continue;
      auto held = merged.find(e.path);
      bool was_link = held != merged.end() && held->second.type == EntryType::symlink;  // a conflict's loser goes
      links_changed = links_changed || was_link || e.type == EntryType::symlink;
      merged.insert_or_assign(e.path, Held{e.type, e.type == EntryType::symlink ? e.link_target : std::string(), d});
    }
    // defence: merge-links-across-deltas
    if (!links_changed) continue;
    if (std::optional<MergedLinkFailure> f = first_failure(merged, components)) {
      f->delta = d;
      return f;
    }
  }
  return std::nullopt;
}

}  // namespace ccpack::converge
