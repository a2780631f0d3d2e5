#include "manifest/links.hpp"

namespace ccpack::manifest {

EntryTree::AddResult EntryTree::add(std::string_view path, EntryType type, std::string_view link_target) {
  std::uint32_t parent = kNoParent;
  while (true) {
    auto slash = path.find('/');
    std::string_view name = path.substr(0, slash);
    std::uint32_t found = children_.find(parent, name);
    if (slash == std::string_view::npos) {
      if (found != ChildMap::kNone) return {Added::duplicate, 0};
      auto node = static_cast<std::uint32_t>(nodes_.size());
      Node n;
      n.target = link_target;
      n.parent = parent;
      n.type = type;
      nodes_.push_back(n);
      (void)children_.emplace(parent, name, node);
      return {Added::ok, node};
    }
    if (found == ChildMap::kNone || nodes_[found].type != EntryType::dir) return {Added::no_folder, 0};
    parent = found;
    path.remove_prefix(slash + 1);
  }
}

EntryTree::AddResult EntryTree::add_child(std::uint32_t parent, std::string_view name, EntryType type,
                                          std::string_view link_target) {
  if (parent != kNoParent && (parent >= nodes_.size() || nodes_[parent].type != EntryType::dir)) return {Added::no_folder, 0};
  auto node = static_cast<std::uint32_t>(nodes_.size());
  if (children_.emplace(parent, name, node) != ChildMap::kNone) return {Added::duplicate, 0};
  Node n;
  n.target = link_target;
  n.parent = parent;
  n.type = type;
  nodes_.push_back(n);
  return {Added::ok, node};
}

EntryTree::LinkVerdict EntryTree::resolve_link(std::uint32_t node) {
  LinkVerdict v = resolve(node, 0);
  // defence: link-hop-bound
  if (v == LinkVerdict::inside && nodes_[node].hops + 1 > kMaxLinkHops) return LinkVerdict::loops;
  return v;
}

// Resolves one link. `depth` counts the links being resolved around this one; each adds at least one hop, so
// past kMaxLinkHops the outer link is refused anyway, and the recursion stays shallow.
EntryTree::LinkVerdict EntryTree::resolve(std::uint32_t link, int depth) {
  Node& self = nodes_[link];
  if (self.state == State::resolved) return LinkVerdict::inside;
  if (self.state == State::resolving || depth > kMaxLinkHops) return LinkVerdict::loops;  // defence: link-loop
  if (self.target.empty() || self.target.front() == '/') return LinkVerdict::escapes;     // absolute: outside by definition
  self.state = State::resolving;
  Walk walk{self.parent};  // from the folder holding the link
  LinkVerdict v = walk_target(self.target, depth, walk);
  // `self` is still valid: nothing is added to nodes_ during resolution.
  if (v != LinkVerdict::inside) {
    // A failure is not memoised (the first one ends validation and create); the mark goes, so that a later walk
    // through this link fails the same way rather than as a loop.
    self.state = State::unresolved;  // defence: link-failure-unmarks
    return v;
  }
  self.state = State::resolved;
  self.hops = static_cast<std::uint8_t>(walk.hops);
  self.resolved = walk.at;
  self.extra_depth = walk.extra;
  return LinkVerdict::inside;
}

// Follows `rest` name by name from walk.at, through the links it meets (each resolved first, at depth + 1).
EntryTree::LinkVerdict EntryTree::walk_target(std::string_view rest, int depth, Walk& walk) {
  while (!rest.empty()) {
    auto slash = rest.find('/');
    std::string_view name = rest.substr(0, slash);
    rest = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
    if (name.empty() || name == ".") continue;
    if (name == "..") {
      if (walk.extra > 0) {
        --walk.extra;
      } else if (nodes_[walk.at].parent == kNoParent) {
        return LinkVerdict::escapes;  // above the component root
      } else {
        walk.at = nodes_[walk.at].parent;
      }
      continue;
    }
    if (walk.extra > 0) {
      ++walk.extra;
      continue;
    }
    std::uint32_t child = children_.find(walk.at, name);
    if (child == ChildMap::kNone) {
      walk.extra = 1;  // defence: link-dangling-lexical
      continue;
    }
    if (nodes_[child].type != EntryType::symlink) {
      walk.at = child;
      continue;
    }
    LinkVerdict v = resolve(child, depth + 1);
    if (v != LinkVerdict::inside) return v;
    const Node& through = nodes_[child];
    walk.hops += 1 + through.hops;
    if (walk.hops >= kMaxLinkHops) return LinkVerdict::loops;  // defence: link-hop-bound
    walk.at = through.resolved;
    walk.extra = through.extra_depth;
  }
  return LinkVerdict::inside;
}

}  // namespace ccpack::manifest
