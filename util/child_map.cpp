// See child_map.hpp.
#include "util/child_map.hpp"

#include <algorithm>
#include <bit>
#include <functional>

namespace ccpack {

std::size_t ChildMap::home(std::uint32_t folder, std::string_view name) const noexcept {
  std::uint64_t h = std::hash<std::string_view>{}(name) ^ (std::uint64_t{folder} * 0x9e3779b97f4a7c15ULL);
  return static_cast<std::size_t>((h * 0x9e3779b97f4a7c15ULL) >> shift_);
}

void ChildMap::reserve(std::size_t count) {
  std::size_t want = std::bit_ceil(std::max<std::size_t>(16, 2 * count));
  if (want > slots_.size()) rehash(want);
}

void ChildMap::rehash(std::size_t slots) {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(slots, Slot{});
  shift_ = 64 - static_cast<unsigned>(std::countr_zero(slots));
  const std::size_t mask = slots - 1;
  for (const Slot& s : old) {
    if (s.value == kNone) continue;
    std::size_t i = home(s.folder, s.name);
    while (slots_[i].value != kNone) i = (i + 1) & mask;
    slots_[i] = s;
  }
}

std::uint32_t ChildMap::emplace(std::uint32_t folder, std::string_view name, std::uint32_t value) {
  if (2 * (size_ + 1) > slots_.size()) rehash(std::max<std::size_t>(16, 2 * slots_.size()));
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = home(folder, name);; i = (i + 1) & mask) {
    Slot& s = slots_[i];
    if (s.value == kNone) {
      s = Slot{name, folder, value};
      ++size_;
      return kNone;
    }
    if (s.folder == folder && s.name == name) return s.value;
  }
}

std::uint32_t ChildMap::find(std::uint32_t folder, std::string_view name) const {
  if (slots_.empty()) return kNone;
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = home(folder, name);; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.value == kNone) return kNone;
    if (s.folder == folder && s.name == name) return s.value;
  }
}

}  // namespace ccpack
