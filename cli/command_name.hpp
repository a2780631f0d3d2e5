// What the front end says about a command name it does not know: `ccpack creat` gets
//   unknown command 'creat'; did you mean 'create'?
// The closest names are those at the smallest edit distance (insert, delete, substitute, or swap two neighbours:
// the typos hands make), when it is at most 2 and less than the typed name's length, so "x" suggests nothing.
// Several names at the same distance are all offered, in the order given.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ccpack::cli {

// The optimal-string-alignment distance between `a` and `b`.
[[nodiscard]] std::size_t edit_distance(std::string_view a, std::string_view b);

// The names in `names` close enough to `typed` to suggest (empty: none is).
[[nodiscard]] std::vector<std::string> closest_names(std::string_view typed, const std::vector<std::string>& names);

// "unknown command 'TYPED'; did you mean 'A'?" (or "'A' or 'B'"), else "unknown command 'TYPED' (see ccpack --help)".
// TYPED is escaped (a command line can hold anything).
[[nodiscard]] std::string unknown_command_message(std::string_view typed, const std::vector<std::string>& names);

}  // namespace ccpack::cli
