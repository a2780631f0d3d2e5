// The build folders a pickle's strs are matched against (unpack/pickle_paths.hpp), as a trie of path elements.
//
// Why: the rewrite learns build folders from the pickle's own strs, one per str at most, and asks of every str
// which folder it begins with. Kept as a list, each question cost a comparison with every folder learned, so a
// pickle whose strs each teach a folder took time quadratic in its size. In a trie, one question walks the
// str's elements once, whatever the number of folders: a pickle is read in time linear in its size.
//
// How: a folder "/a/b" is the path of nodes "" -> "a" -> "b" (split at every '/', empty elements kept, so
// matching is on exact bytes, as a string prefix followed by '/' would be). longest() walks the str's elements
// that a '/' follows and keeps the deepest node that is a folder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ccpack::unpack {

class FolderPrefixes {
 public:
  FolderPrefixes();
  // Adds `folder` (it begins with '/'); false when it was there already.
  bool insert(std::string_view folder);
  // The length of the longest folder F such that `value` begins with F + "/"; 0 when none does.
  [[nodiscard]] std::size_t longest(std::string_view value) const;
  [[nodiscard]] bool contains(std::string_view folder) const;
  [[nodiscard]] std::size_t longest_folder() const { return longest_folder_; }  // the length of the longest folder
  [[nodiscard]] std::size_t size() const { return count_; }
  // The element lookups made so far by insert, longest and contains: the measure of their work that tests bound
  // (a count, so a loaded machine cannot make it pass or fail). Counting makes every call a write: one owner's
  // thread at a time, as PickleStream, its only user, has.
  [[nodiscard]] std::uint64_t lookups() const { return lookups_; }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  struct Node {
    std::unordered_map<std::string, std::uint32_t, Hash, std::equal_to<>> children;
    bool folder = false;
  };
  static constexpr std::uint32_t kNone = UINT32_MAX;
  [[nodiscard]] std::uint32_t child(std::uint32_t node, std::string_view element) const;

  std::vector<Node> nodes_;
  std::size_t longest_folder_ = 0;
  std::size_t count_ = 0;
  mutable std::uint64_t lookups_ = 0;
};

}  // namespace ccpack::unpack
