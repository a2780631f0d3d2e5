// Manifest::parse_top_level: stage 1 of reading an archive's manifest, the part a no-op restore needs.
//
// Why: a restore whose folders already hold this archive writes nothing, and needs only the components and the
// fingerprint to decide so; parsing and validating every entry (Manifest::parse) made it cost ~15 us per file
// (1.7 s at 100k files). Here the manifest's top-level object is split into its members by a scan that only
// tracks strings and brackets, so the "entries" and "frames" arrays (nearly all of the bytes) are stepped over,
// not parsed; every other member is parsed through parse_untrusted (bounded depth, no repeated keys) and read
// by the same code as the full parse (Manifest::from_top_level_tree).
//
// What it still refuses (a structural fault in the words of the full parse, which is run to say it, keeping nothing): a document that is not one object, a repeated top-level key, nesting deeper than
// kMaxJsonDepth anywhere (also inside the skipped arrays), unbalanced or mismatched brackets, an unterminated
// string, bytes after the object, more than limits.max_json_values values besides frames and entries, and
// every field error of the members it reads. What it does not check is the content of frames and entries: the
// caller runs the full parse (stage 2) before anything is extracted, unless the restore writes nothing and every
// folder's marker names these exact manifest bytes (unpack/installer.cpp says why that is safe).
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_set>

#include "manifest/json_guard.hpp"
#include "manifest/manifest.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"

namespace ccpack::manifest {
namespace {

using json = nlohmann::json;

// What the scan finds wrong with the document's structure; parse_top_level turns it into the full parse's words.
struct BadStructure {
  std::string why;
};

[[noreturn]] void bad_json(std::size_t at, const std::string& why) { throw BadStructure{why + " at byte " + std::to_string(at)}; }

// Refuses `text` as the full parse would (the guard's message, with the JSON path), keeping nothing of the tree;
// `why` is said only if the guard finds nothing wrong.
[[noreturn]] void refuse_as_full_parse(std::string_view text, const std::string& why) {
  JsonFilter<json> keep_nothing = [](int, json::parse_event_t event, json&) {
    using Event = json::parse_event_t;
    return !(event == Event::value || event == Event::object_end || event == Event::array_end);
  };
  (void)parse_untrusted<json>(text, "manifest", keep_nothing);
  std::size_t first = text.find_first_not_of(" \t\n\r");
  if (first == std::string_view::npos || text[first] != '{') throw IntegrityError("manifest field '(root)' is not an object");
  throw IntegrityError("manifest is not valid JSON: " + why);
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The offset just past the string whose opening quote is at `at`.
std::size_t string_end(std::string_view s, std::size_t at) {
  std::size_t i = at + 1;
  while (true) {
    const void* q = i < s.size() ? std::memchr(s.data() + i, '"', s.size() - i) : nullptr;
    if (q == nullptr) bad_json(at, "unterminated string");
    std::size_t quote = static_cast<std::size_t>(static_cast<const char*>(q) - s.data());
    std::size_t slashes = 0;
    while (quote - slashes > at + 1 && s[quote - slashes - 1] == '\\') ++slashes;
    if (slashes % 2 == 0) return quote + 1;
    i = quote + 1;
  }
}

// The end of the member value that starts at `at` (depth 1, inside the root object): the offset of the ',' or
// '}' that follows it outside any string or bracket. Brackets must pair up ('[' with ']', '{' with '}') and
// nest at most kMaxJsonDepth levels counting the root; a value's own syntax is left to whoever parses it.
std::size_t value_end(std::string_view s, std::size_t at) {
  static_assert(kMaxJsonDepth <= 64, "the open brackets are kept as bits of one 64-bit word");
  std::uint64_t is_array = 0;  // bit k: the (k+1)-th open bracket is '['
  int open = 0;
  for (std::size_t i = at; i < s.size(); ++i) {
    char c = s[i];
    if (c == '"') {
      i = string_end(s, i) - 1;
    } else if (c == '[' || c == '{') {
      if (open + 2 > kMaxJsonDepth) bad_json(i, "nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels");
      is_array = c == '[' ? is_array | (1ULL << open) : is_array & ~(1ULL << open);
      ++open;
    } else if (c == ']' || c == '}') {
      if (open == 0) {
        if (c == '}') return i;
        bad_json(i, "unbalanced ']'");
      }
      --open;
      if (((is_array >> open) & 1) != (c == ']' ? 1U : 0U)) bad_json(i, "mismatched brackets");
    } else if (c == ',' && open == 0) {
      return i;
    }
  }
  bad_json(at, "unterminated object");
}

std::size_t skip_space(std::string_view s, std::size_t i) {
  while (i < s.size() && is_space(s[i])) ++i;
  return i;
}

// Splits the root object into its members, calling `member(key, value bytes)` for each in order.
template <class Member>
void for_each_member(std::string_view s, const Member& member) {
  std::size_t i = skip_space(s, 0);
  if (i == s.size() || s[i] != '{') bad_json(i, "not an object");
  i = skip_space(s, i + 1);
  bool first = true;
  while (i < s.size() && s[i] != '}') {
    if (!first) {
      if (s[i] != ',') bad_json(i, "expected ',' or '}'");
      i = skip_space(s, i + 1);
    }
    first = false;
    if (i == s.size() || s[i] != '"') bad_json(i, "expected a key");
    std::size_t key_end = string_end(s, i);
    std::string_view raw_key = s.substr(i, key_end - i);
    // A key with escapes is decoded as JSON, so "entr\u0069es" is "entries" here as it is for the full parse.
    std::string key = raw_key.find('\\') == std::string_view::npos ? std::string(raw_key.substr(1, raw_key.size() - 2))
                                                                    : parse_untrusted<json>(raw_key, "manifest").get<std::string>();
    i = skip_space(s, key_end);
    if (i == s.size() || s[i] != ':') bad_json(i, "expected ':'");
    std::size_t value_start = skip_space(s, i + 1);
    i = value_end(s, value_start);
    member(key, s.substr(value_start, i - value_start));
  }
  if (i == s.size()) bad_json(i, "unterminated object");
  if (skip_space(s, i + 1) != s.size()) bad_json(i + 1, "bytes after the manifest object");
}

}  // namespace

Manifest Manifest::parse_top_level(std::string_view text, const Limits& limits) {
  json root = json::object();
  std::unordered_set<std::string> keys;
  std::size_t kept = 0;  // JSON values kept in the tree, as Manifest::parse counts them
  auto member = [&](const std::string& key, std::string_view value) {
    if (!keys.insert(key).second) {
      throw IntegrityError("manifest field '" + escaped(key) + "' is repeated (a JSON key appears twice in one object)");
    }
    if (key == "entries" || key == "frames") {
      root[key] = json::array();  // read by stage 2 (Manifest::parse)
      return;
    }
    JsonFilter<json> count = [&](int, json::parse_event_t event, json&) {
      using Event = json::parse_event_t;
      if ((event == Event::value || event == Event::object_start || event == Event::array_start) && ++kept > limits.max_json_values) {
        throw IntegrityError("manifest field '" + escaped(key) + "' holds more than " + std::to_string(limits.max_json_values) +
                             " JSON values besides the entries and frames");
      }
      return true;
    };
    // One level shallower than in the document: the value sits inside the root object.
    root[key] = parse_untrusted<json>(value, "manifest field '" + escaped(key) + "':", count, kMaxJsonDepth - 1);
  };
  try {
    for_each_member(text, member);
  } catch (const BadStructure& e) {
    refuse_as_full_parse(text, e.why);
  }
  try {
    return from_top_level_tree(root);
  } catch (const json::exception& e) {
    throw IntegrityError(std::string("manifest has a field of the wrong type: ") + escaped(e.what()));
  }
}

}  // namespace ccpack::manifest
