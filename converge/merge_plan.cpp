// Merge's rule (merge_plan.hpp): one record per path of the merged tree, each delta entry decided against it.
#include "converge/merge_plan.hpp"

#include "util/escape.hpp"

namespace ccpack::converge {
namespace {

using manifest::EntryType;

std::string_view parent_of(std::string_view path) {
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string_view{} : path.substr(0, slash);
}

Decision skip(std::string reason, std::optional<Conflict> conflict = std::nullopt) {
  return Decision{Decision::Action::skip, std::move(reason), std::move(conflict)};
}

}  // namespace

Digest link_identity(std::string_view target) { return Sha256::of(target); }

MergePlan::MergePlan(const std::vector<manifest::Component>& components, const manifest::EntryList& base) {
  for (const manifest::Component& c : components) components_.insert(c.name);
  tree_.reserve(base.size());
  for (std::size_t i = 0; i < base.size(); ++i) {
    EntryType type = base.type(i);
    Digest id = type == EntryType::file      ? base.sha256(i)
                : type == EntryType::symlink ? link_identity(base.link_target(i))
                                             : Digest{};
    tree_.emplace(base.path(i), Node{type, id, kFromBase});
  }
}

void MergePlan::begin_delta(std::size_t index, std::string name) {
  if (names_.size() <= index) names_.resize(index + 1);
  names_[index] = std::move(name);
  current_ = index;
}

std::string MergePlan::owner_name(std::size_t owner) const { return owner == kFromBase ? "the base" : "delta " + names_[owner]; }

Decision MergePlan::offer(const manifest::Entry& e) {
  std::string_view component = manifest::component_of(e.path);
  if (!components_.contains(std::string(component))) return skip("component '" + escaped(component) + "' is not in the base");
  std::string parent(parent_of(e.path));
  if (!parent.empty()) {
    // Only below a folder of the merged tree: never below a file or symlink, nor below a folder left out.
    auto above = tree_.find(parent);
    // defence: merge-below-folder
    if (above == tree_.end() || above->second.type != EntryType::dir)
      return skip("a folder above it is not a folder in the merged cache");
  }
  if (e.type == EntryType::dir) return offer_folder(e);
  return offer_leaf(e, e.type == EntryType::file ? e.sha256 : link_identity(e.link_target));
}

Decision MergePlan::offer_folder(const manifest::Entry& e) {
  auto it = tree_.find(e.path);
  if (it == tree_.end()) {
    tree_.emplace(e.path, Node{EntryType::dir, {}, current_});
    return Decision{Decision::Action::make_folder, {}, std::nullopt};
  }
  if (it->second.type == EntryType::dir) return Decision{};
  return skip("a file or symlink of " + owner_name(it->second.owner) + " has its path");
}

Decision MergePlan::offer_leaf(const manifest::Entry& e, const Digest& identity) {
  auto it = tree_.find(e.path);
  if (it == tree_.end()) {
    tree_.emplace(e.path, Node{e.type, identity, current_});
    return Decision{Decision::Action::add, {}, std::nullopt};
  }
  Node& held = it->second;
  // defence: merge-base-wins
  if (held.owner == kFromBase)
    return skip(held.type == EntryType::dir ? "a folder of the base has its path" : "in the base (the base's entry is kept)");
  if (held.type == EntryType::dir) return skip("a folder of " + owner_name(held.owner) + " has its path");
  if (held.type == e.type && held.identity == identity)
    return skip("the same " + std::string(e.type == EntryType::file ? "bytes" : "link") + " as " + owner_name(held.owner));
  Conflict c{e.path, held.owner, current_, to_hex(held.identity), to_hex(identity)};
  if (identity < held.identity) {  // the lower identity wins, whichever delta came first
    std::swap(c.kept, c.dropped);
    std::swap(c.kept_sha256, c.dropped_sha256);
    held = Node{e.type, identity, current_};
    return Decision{Decision::Action::replace, {}, std::move(c)};
  }
  return skip("conflict: " + owner_name(held.owner) + " adds other bytes with a lower SHA-256, which are kept", std::move(c));
}

}  // namespace ccpack::converge
