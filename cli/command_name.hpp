// What the front end says about a command name it does not know: `ccpack creat` gets
//   unknown command 'creat'; did you mean 'create'?
// The closest names are util/closest_names.hpp's.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ccpack::cli {

// "unknown command 'TYPED'; did you mean 'A'?" (or "'A' or 'B'"), else "unknown command 'TYPED' (see ccpack --help)".
// TYPED is escaped (a command line can hold anything).
[[nodiscard]] std::string unknown_command_message(std::string_view typed, const std::vector<std::string>& names);

}  // namespace ccpack::cli
