// The names closest to a mistyped one (closest_names.hpp).
#include "util/closest_names.hpp"

#include <algorithm>
#include <numeric>

namespace ccpack {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the dynamic programme: two back for the transposition.
  std::vector<std::size_t> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
  std::iota(previous.begin(), previous.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) current[j] = std::min(current[j], before[j - 2] + 1);
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::vector<std::string> closest_names(std::string_view typed, const std::vector<std::string>& names) {
  std::size_t best = std::min<std::size_t>(2, typed.size() == 0 ? 0 : typed.size() - 1);
  std::vector<std::string> closest;
  for (const std::string& name : names) {
    std::size_t d = edit_distance(typed, name);
    if (d > best) continue;
    if (d < best) closest.clear();
    best = d;
    closest.push_back(name);
  }
  return closest;
}

}  // namespace ccpack
