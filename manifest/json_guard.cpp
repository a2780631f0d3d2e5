#include "manifest/json_guard.hpp"

#include <string>
#include <unordered_set>
#include <vector>

#include "util/error.hpp"
#include "util/escape.hpp"

namespace ccpack::manifest {
namespace {

using Event = nlohmann::detail::parse_event_t;

// One open container. An object remembers its keys (to refuse a repeat) and the key being parsed; an array
// counts the elements begun, so the path can name "[index]".
struct OpenContainer {
  bool is_object = false;
  std::unordered_set<std::string> keys;
  std::string key;
  std::uint64_t elements = 0;
};

// "entries[3].path": where the parser is, through every open container (an object's current key, an array's
// current element).
std::string json_path(const std::vector<OpenContainer>& open) {
  std::string path;
  for (const OpenContainer& c : open) {
    if (c.is_object) {
      if (!path.empty()) path += '.';
      path += escaped(c.key);
    } else if (c.elements > 0) {
      path += "[" + std::to_string(c.elements - 1) + "]";
    }
  }
  constexpr std::size_t kShown = 200;  // a path 64 levels deep of long keys would drown the message
  if (path.size() > kShown) path = path.substr(0, kShown) + "...";
  return path.empty() ? "(root)" : path;
}

}  // namespace

template <class Json>
Json parse_untrusted(std::string_view text, std::string_view what, const JsonFilter<Json>& filter, int max_depth) {
  std::vector<OpenContainer> open;
  auto guard = [&](int depth, Event event, Json& parsed) -> bool {
    bool starts = event == Event::object_start || event == Event::array_start || event == Event::value;
    if (starts && !open.empty() && !open.back().is_object) ++open.back().elements;
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        if (depth + 1 > max_depth) {
          throw IntegrityError(std::string(what) + " field '" + json_path(open) + "' nests deeper than " +
                               std::to_string(max_depth) + " levels");
        }
        open.push_back(OpenContainer{event == Event::object_start, {}, {}, 0});
        break;
      case Event::key: {
        OpenContainer& obj = open.back();
        obj.key = parsed.template get<std::string>();
        if (!obj.keys.insert(obj.key).second) {
          throw IntegrityError(std::string(what) + " field '" + json_path(open) +
                               "' is repeated (a JSON key appears twice in one object)");
        }
        break;
      }
      case Event::object_end:
      case Event::array_end:
        open.pop_back();
        break;
      case Event::value:
        break;
    }
    return filter ? filter(depth, event, parsed) : true;
  };
  try {
    return Json::parse(text, guard);
  } catch (const typename Json::exception& e) {
    // parse_error, and out_of_range for a number too large for a double (406), which the parser throws too.
    throw IntegrityError(std::string(what) + " is not valid JSON: " + escaped(e.what()));
  }
}

template nlohmann::json parse_untrusted<nlohmann::json>(std::string_view, std::string_view, const JsonFilter<nlohmann::json>&,
                                                        int);
template nlohmann::ordered_json parse_untrusted<nlohmann::ordered_json>(std::string_view, std::string_view,
                                                                        const JsonFilter<nlohmann::ordered_json>&, int);

}  // namespace ccpack::manifest
