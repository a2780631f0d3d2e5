// See group_file.hpp. A cursor over the text that gives up (nullopt) at the first byte outside the common form.
#include "unpack/group_file.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace ccpack::unpack {
namespace {

// More members than Triton ever writes (one per file of a kernel folder); past it the full parser decides, so the
// check for a repeated key stays small.
constexpr std::size_t kMaxSimpleMembers = 64;

class Cursor {
 public:
  explicit Cursor(std::string_view text) : text_(text) {}

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  // The byte `c`, after any whitespace.
  bool take(char c) {
    skip_space();
    if (pos_ == text_.size() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }

  // A string of printable ASCII without escapes, after any whitespace: its bytes between the quotes.
  std::optional<std::string_view> plain_string() {
    if (!take('"')) return std::nullopt;
    std::size_t start = pos_;
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == '"') {
        std::string_view s = text_.substr(start, pos_ - start);
        ++pos_;
        return s;
      }
      if (c < 0x20 || c > 0x7e || c == '\\') return std::nullopt;  // (char is signed: bytes past 0x7f are below 0)
      ++pos_;
    }
    return std::nullopt;
  }

  bool at_end() {
    skip_space();
    return pos_ == text_.size();
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

// Printable ASCII without '"' or '\\': written between quotes as it is, exactly as nlohmann writes it.
bool plain(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c <= 0x7e && c != '"' && c != '\\'; });
}

}  // namespace

std::optional<std::vector<GroupMember>> read_simple_group(std::string_view text) {
  Cursor c(text);
  if (!c.take('{')) return std::nullopt;
  std::optional<std::string_view> top = c.plain_string();
  if (!top || *top != "child_paths" || !c.take(':') || !c.take('{')) return std::nullopt;
  std::vector<GroupMember> members;
  if (!c.take('}')) {
    do {
      std::optional<std::string_view> key = c.plain_string();
      if (!key || !c.take(':')) return std::nullopt;
      std::optional<std::string_view> value = c.plain_string();
      if (!value || members.size() == kMaxSimpleMembers) return std::nullopt;
      for (const GroupMember& m : members) {
        if (m.key == *key) return std::nullopt;
      }
      members.push_back({*key, *value, false});
    } while (c.take(','));
    if (!c.take('}')) return std::nullopt;
  }
  if (!c.take('}') || !c.at_end()) return std::nullopt;
  return members;
}

std::string write_group(const std::vector<GroupMember>& members) {
  std::string out = R"({"child_paths":{)";
  for (std::size_t i = 0; i < members.size(); ++i) {
    const GroupMember& m = members[i];
    if (i != 0) out += ',';
    out += '"';
    out += m.key;
    out += "\":";
    if (m.replaced && !plain(m.value)) {
      out += nlohmann::ordered_json(std::string(m.value)).dump();  // nlohmann's own escaping, as the full path writes
    } else {
      out += '"';
      out += m.value;
      out += '"';
    }
  }
  out += "}}";
  return out;
}

}  // namespace ccpack::unpack
