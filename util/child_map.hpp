// A map from (folder number, name) to a number: the index of a tree of names, kept by the manifest's validation
// (every entry, manifest/links.hpp) and by the restore's relocation (the files a group file may name).
//
// Why not std::unordered_map: with a hundred thousand entries its node per insert (a malloc), its modulo by a
// prime per lookup and its pointer chase were 4-6% of a restore's user time each time such an index was built.
// How: open addressing with linear probing in one flat array whose size is a power of two, kept at most half full;
// a slot holds the name's view (never a copy: the names must outlive the map), the folder and the value. The slot
// is chosen by the name's std::hash mixed with the folder (Fibonacci hashing of the top bits).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace ccpack {

class ChildMap {
 public:
  static constexpr std::uint32_t kNone = UINT32_MAX;  // "absent"; never a value

  ChildMap() = default;
  explicit ChildMap(std::size_t expected) { reserve(expected); }

  // Room for `count` keys without growing.
  void reserve(std::size_t count);
  // Maps (folder, name) to `value` (not kNone) unless the key is there: returns the value it already had, or
  // kNone when it was added.
  std::uint32_t emplace(std::uint32_t folder, std::string_view name, std::uint32_t value);
  // The value of (folder, name); kNone when absent.
  [[nodiscard]] std::uint32_t find(std::uint32_t folder, std::string_view name) const;
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  struct Slot {
    std::string_view name;
    std::uint32_t folder = 0;
    std::uint32_t value = kNone;  // kNone: an empty slot
  };
  [[nodiscard]] std::size_t home(std::uint32_t folder, std::string_view name) const noexcept;
  void rehash(std::size_t slots);

  std::vector<Slot> slots_;
  unsigned shift_ = 64;  // 64 - log2(slots_.size())
  std::size_t size_ = 0;
};

}  // namespace ccpack
