#include "manifest/json_guard.hpp"

#include <algorithm>
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
  // An object's first keys are searched in order (a manifest entry has six); past this many, through a set.
  static constexpr std::size_t kListedKeys = 16;
  bool is_object = false;
  std::vector<std::string> keys;
  std::unordered_set<std::string> more_keys;  // all the keys, once there are more than kListedKeys
  std::string key;
  std::uint64_t elements = 0;

  // False when the object already has `k`.
  bool add_key(const std::string& k) {
    if (keys.size() < kListedKeys) {
      if (std::find(keys.begin(), keys.end(), k) != keys.end()) return false;
      keys.push_back(k);
      return true;
    }
    if (more_keys.empty()) more_keys.insert(keys.begin(), keys.end());
    return more_keys.insert(k).second;
  }
};

// The open containers, outermost first. Slots are reused, not freed: a manifest opens one object per entry, and
// each would otherwise allocate its key list anew.
class OpenStack {
 public:
  void push(bool is_object) {
    if (size_ == slots_.size()) slots_.emplace_back();
    OpenContainer& c = slots_[size_++];
    c.is_object = is_object;
    c.keys.clear();
    if (!c.more_keys.empty()) c.more_keys.clear();
    c.key.clear();
    c.elements = 0;
  }
  void pop() { --size_; }
  [[nodiscard]] bool empty() const { return size_ == 0; }
  [[nodiscard]] OpenContainer& back() { return slots_[size_ - 1]; }
  [[nodiscard]] const OpenContainer* begin() const { return slots_.data(); }
  [[nodiscard]] const OpenContainer* end() const { return slots_.data() + size_; }

 private:
  std::vector<OpenContainer> slots_;
  std::size_t size_ = 0;
};

// "entries[3].path": where the parser is, through every open container (an object's current key, an array's
// current element).
std::string json_path(const OpenStack& open) {
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
  OpenStack open;
  auto guard = [&](int depth, Event event, Json& parsed) -> bool {
    bool starts = event == Event::object_start || event == Event::array_start || event == Event::value;
    if (starts && !open.empty() && !open.back().is_object) ++open.back().elements;
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        // defence: json-depth
        if (depth + 1 > max_depth) {
          throw IntegrityError(std::string(what) + " field '" + json_path(open) + "' nests deeper than " +
                               std::to_string(max_depth) + " levels");
        }
        open.push(event == Event::object_start);
        break;
      case Event::key: {
        OpenContainer& obj = open.back();
        obj.key = parsed.template get_ref<const std::string&>();
        // defence: json-duplicate-keys
        if (!obj.add_key(obj.key)) {
          throw IntegrityError(std::string(what) + " field '" + json_path(open) +
                               "' is repeated (a JSON key appears twice in one object)");
        }
        break;
      }
      case Event::object_end:
      case Event::array_end:
        open.pop();
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
