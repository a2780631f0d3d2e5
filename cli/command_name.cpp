// The message for a command name the front end does not know (command_name.hpp).
#include "cli/command_name.hpp"

#include "util/closest_names.hpp"
#include "util/escape.hpp"

namespace ccpack::cli {

std::string unknown_command_message(std::string_view typed, const std::vector<std::string>& names) {
  std::string message = "unknown command '" + escaped(typed, 80) + "'";
  std::vector<std::string> closest = closest_names(typed, names);
  if (closest.empty()) return message + " (see ccpack --help)";
  message += "; did you mean ";
  for (std::size_t i = 0; i < closest.size(); ++i) {
    if (i > 0) message += i + 1 == closest.size() ? " or " : ", ";
    message += "'" + closest[i] + "'";
  }
  return message + "?";
}

}  // namespace ccpack::cli
