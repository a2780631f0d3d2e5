// See folder_prefixes.hpp.
#include "unpack/folder_prefixes.hpp"

#include <algorithm>

namespace ccpack::unpack {

FolderPrefixes::FolderPrefixes() : nodes_(1) {}

std::uint32_t FolderPrefixes::child(std::uint32_t node, std::string_view element) const {
  ++lookups_;
  const auto& children = nodes_[node].children;
  auto it = children.find(element);
  return it == children.end() ? kNone : it->second;
}

bool FolderPrefixes::insert(std::string_view folder) {
  std::uint32_t node = 0;
  for (std::size_t start = 0;;) {
    std::size_t slash = folder.find('/', start);
    std::string_view element = folder.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    std::uint32_t next = child(node, element);
    if (next == kNone) {
      next = static_cast<std::uint32_t>(nodes_.size());
      nodes_[node].children.emplace(std::string(element), next);
      nodes_.emplace_back();  // after the emplace: `nodes_[node]` may move
    }
    node = next;
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  if (nodes_[node].folder) return false;
  nodes_[node].folder = true;
  longest_folder_ = std::max(longest_folder_, folder.size());
  ++count_;
  return true;
}

std::size_t FolderPrefixes::longest(std::string_view value) const {
  std::size_t best = 0;
  std::uint32_t node = 0;
  for (std::size_t start = 0;;) {
    std::size_t slash = value.find('/', start);
    if (slash == std::string_view::npos) break;  // an element no '/' follows ends no folder the value is below
    node = child(node, value.substr(start, slash - start));
    if (node == kNone) break;
    if (nodes_[node].folder) best = slash;
    start = slash + 1;
  }
  return best;
}

bool FolderPrefixes::contains(std::string_view folder) const {
  std::uint32_t node = 0;
  for (std::size_t start = 0;;) {
    std::size_t slash = folder.find('/', start);
    node = child(node, folder.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start));
    if (node == kNone) return false;
    if (slash == std::string_view::npos) return nodes_[node].folder;
    start = slash + 1;
  }
}

}  // namespace ccpack::unpack
