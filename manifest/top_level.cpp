// Manifest::parse_top_level: stage 1 of reading an archive's manifest, the part a no-op restore needs.
//
// Why: a restore whose folders already hold this archive writes nothing, and needs only the components and the
// fingerprint to decide so; parsing and validating every entry (Manifest::parse) made it cost time per file.
// Here the manifest's top-level object is split into its members by a scan that only tracks strings and brackets
// (TopLevelScan, top_level.hpp, which also takes the text in pieces), so the "entries" and "frames" arrays
// (nearly all of the bytes) are stepped over, not parsed; every other member is parsed through parse_untrusted
// (bounded depth, no repeated keys) and read by the same code as the full parse (Manifest::from_top_level_tree).
//
// What it does not check is the content of frames and entries: the caller runs the full parse (stage 2) before
// anything is extracted, unless the restore writes nothing and every folder's marker names these exact manifest
// bytes (unpack/installer.cpp says why that is safe). What it still refuses is listed at TopLevelScan::finish.
#include "manifest/top_level.hpp"

#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_set>

#include "manifest/json_guard.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"

namespace ccpack::manifest {
namespace {

using json = nlohmann::json;

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

bool is_stepped_over(std::string_view raw_key) { return raw_key == "\"entries\"" || raw_key == "\"frames\""; }

}  // namespace

void TopLevelScan::fail(std::size_t at, const std::string& why) {
  fault_ = why + " at byte " + std::to_string(base_ + at);
  at_ = At::fault;
}

void TopLevelScan::feed(std::string_view piece) {
  std::size_t i = 0;
  while (i < piece.size() && at_ != At::fault) i = step(piece, i);
  base_ += piece.size();
}

// The offset in `s` just past the string's closing quote, or s.size() when the string goes on past the piece;
// the bytes read are appended to `keep` when given.
std::size_t TopLevelScan::scan_string(std::string_view s, std::size_t i, std::string* keep) {
  const void* q = std::memchr(s.data() + i, '"', s.size() - i);
  std::size_t end = q == nullptr ? s.size() : static_cast<std::size_t>(static_cast<const char*>(q) - s.data());
  std::size_t k = end;
  while (k > i && s[k - 1] == '\\') --k;
  std::size_t run = end - k + (k == i ? backslashes_ : 0);  // a run of backslashes may go on from the last piece
  std::size_t next = q == nullptr ? s.size() : end + 1;
  if (keep) keep->append(s.data() + i, next - i);
  if (q == nullptr) {
    backslashes_ = run;
  } else {
    backslashes_ = 0;
    in_string_ = run % 2 == 1;  // an escaped quote leaves the string open
  }
  return next;
}

// Inside a member's value: strings and brackets only, up to the ',' or '}' that ends it outside both. Brackets
// must pair up ('[' with ']', '{' with '}') and nest at most kMaxJsonDepth levels counting the root; the value's
// own syntax is left to finish().
std::size_t TopLevelScan::scan_value(std::string_view s, std::size_t i) {
  static_assert(kMaxJsonDepth <= 64, "the open brackets are kept as bits of one 64-bit word");
  std::string* keep = current_.stepped_over ? nullptr : &current_.value;
  std::size_t from = i;
  while (i < s.size()) {
    if (in_string_) {
      // Strings are copied by scan_string itself.
      if (keep) keep->append(s.data() + from, i - from);
      i = scan_string(s, i, keep);
      from = i;
      continue;
    }
    char c = s[i];
    if (c == '"') {
      in_string_ = true;
      backslashes_ = 0;
    } else if (c == '[' || c == '{') {
      if (open_ + 2 > kMaxJsonDepth) {
        fail(i, "nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels");
        return s.size();
      }
      is_array_ = c == '[' ? is_array_ | (1ULL << open_) : is_array_ & ~(1ULL << open_);
      ++open_;
    } else if (c == ']' || c == '}') {
      if (open_ == 0) {
        if (c == ']') {
          fail(i, "unbalanced ']'");
          return s.size();
        }
        if (keep) keep->append(s.data() + from, i - from);
        end_member();
        at_ = At::after_root;
        return i + 1;
      }
      --open_;
      if (((is_array_ >> open_) & 1) != (c == ']' ? 1U : 0U)) {
        fail(i, "mismatched brackets");
        return s.size();
      }
    } else if (c == ',' && open_ == 0) {
      if (keep) keep->append(s.data() + from, i - from);
      end_member();
      at_ = At::key;
      return i + 1;
    }
    ++i;
  }
  if (keep) keep->append(s.data() + from, i - from);
  return i;
}

void TopLevelScan::end_member() {
  members_.push_back(std::move(current_));
  current_ = Member{};
}

// One step of the root object's grammar from `i`; returns where the next step starts.
std::size_t TopLevelScan::step(std::string_view s, std::size_t i) {
  if (at_ == At::in_key) {
    i = scan_string(s, i, &current_.raw_key);
    if (!in_string_) at_ = At::colon;
    return i;
  }
  if (at_ == At::value) return scan_value(s, i);
  if (is_space(s[i])) return i + 1;
  char c = s[i];
  switch (at_) {
    case At::start:
      if (c != '{')
        fail(i, "not an object");
      else
        at_ = At::first_key_or_end;
      return i + 1;
    case At::first_key_or_end:
      if (c == '}') {
        at_ = At::after_root;
        return i + 1;
      }
      [[fallthrough]];
    case At::key:  // after a ',' (a member's value ends only at ',' or '}', scan_value)
      if (c != '"') {
        fail(i, "expected a key");
        return i + 1;
      }
      current_.raw_key = "\"";
      in_string_ = true;
      backslashes_ = 0;
      at_ = At::in_key;
      return i + 1;
    case At::colon:
      if (c != ':')
        fail(i, "expected ':'");
      else
        at_ = At::value_start;
      return i + 1;
    case At::value_start:
      current_.stepped_over = is_stepped_over(current_.raw_key);
      open_ = 0;
      at_ = At::value;
      return i;
    case At::after_root:
      fail(i, "bytes after the manifest object");
      return i + 1;
    default:
      return i + 1;
  }
}

// What it refuses (a structural fault in the words of the full parse, which is run to say it, keeping nothing):
// a document that is not one object, a repeated top-level key, nesting deeper than kMaxJsonDepth anywhere (also
// inside the skipped arrays), unbalanced or mismatched brackets, an unterminated string, bytes after the object,
// more than limits.max_json_values values besides frames and entries, and every field error of the members it
// reads.
Manifest TopLevelScan::finish(const std::function<std::string()>& whole_text, const Limits& limits) {
  if (at_ != At::after_root && at_ != At::fault) {
    if (at_ == At::start)
      fail(0, "not an object");
    else if (in_string_)
      fail(0, "unterminated string");
    else
      fail(0, "unterminated object");
  }
  json root = json::object();
  std::unordered_set<std::string> keys;
  std::size_t kept = 0;  // JSON values kept in the tree, as Manifest::parse counts them
  for (const Member& m : members_) {
    // A key with escapes is decoded as JSON, so "entr\u0069es" is "entries" here as it is for the full parse.
    std::string key = m.raw_key.find('\\') == std::string::npos ? m.raw_key.substr(1, m.raw_key.size() - 2)
                                                                : parse_untrusted<json>(m.raw_key, "manifest").get<std::string>();
    // defence: top-level-duplicate-keys
    if (!keys.insert(key).second) {
      throw IntegrityError("manifest field '" + escaped(key) + "' is repeated (a JSON key appears twice in one object)");
    }
    if (key == "entries" || key == "frames") {
      root[key] = json::array();  // read by stage 2 (Manifest::parse)
      continue;
    }
    JsonFilter<json> count = [&](int, json::parse_event_t event, json&) {
      using Event = json::parse_event_t;
      if ((event == Event::value || event == Event::object_start || event == Event::array_start) &&
          ++kept > limits.max_json_values) {
        throw IntegrityError("manifest field '" + escaped(key) + "' holds more than " + std::to_string(limits.max_json_values) +
                             " JSON values besides the entries and frames");
      }
      return true;
    };
    // One level shallower than in the document: the value sits inside the root object.
    root[key] = parse_untrusted<json>(m.value, "manifest field '" + escaped(key) + "':", count, kMaxJsonDepth - 1);
  }
  if (fault_) refuse_as_full_parse(whole_text(), *fault_);
  try {
    return Manifest::from_top_level_tree(root);
  } catch (const json::exception& e) {
    throw IntegrityError(std::string("manifest has a field of the wrong type: ") + escaped(e.what()));
  }
}

Manifest Manifest::parse_top_level(std::string_view text, const Limits& limits) {
  TopLevelScan scan;
  scan.feed(text);
  return scan.finish([text] { return std::string(text); }, limits);
}

}  // namespace ccpack::manifest
