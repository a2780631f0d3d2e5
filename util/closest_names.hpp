// The names closest to a mistyped one, for "did you mean" hints (a command name, a fingerprint field or value).
// The closest are those at the smallest edit distance (insert, delete, substitute, or swap two neighbours: the
// typos hands make), when it is at most 2 and less than the typed name's length, so "x" suggests nothing. Several
// names at the same distance are all offered, in the order given.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ccpack {

// The optimal-string-alignment distance between `a` and `b`.
[[nodiscard]] std::size_t edit_distance(std::string_view a, std::string_view b);

// The names in `names` close enough to `typed` to suggest (empty: none is).
[[nodiscard]] std::vector<std::string> closest_names(std::string_view typed, const std::vector<std::string>& names);

}  // namespace ccpack
