// See kernel_json.hpp.
#include "manifest/kernel_json.hpp"

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "manifest/json_guard.hpp"
#include "manifest/manifest.hpp"

namespace ccpack::manifest {

namespace {

// The target from its fields as read, or nothing when they are out of bounds.
std::optional<TritonTarget> make_target(std::string backend, std::string arch, std::uint64_t warp, std::string version) {
  if (arch.empty() || arch.size() > 32 || backend.size() > 32 || version.size() > 64 || warp > 1024) return std::nullopt;
  return TritonTarget{std::move(backend), std::move(arch), static_cast<int>(warp), std::move(version), 1};
}

// The reader of Triton's own form (see scan_plain_kernel_json). Each reading member returns false at the first
// thing outside the form.
class PlainCursor {
 public:
  explicit PlainCursor(std::string_view text) : s_(text) {}

  // One value as the full parser would type it: a string, an unsigned integer, anything else.
  struct Value {
    enum class Kind : std::uint8_t { absent, string, unsigned_number, other } kind = Kind::absent;
    std::string_view text;
    std::uint64_t number = 0;
  };

  [[nodiscard]] bool at_end() {
    space();
    return i_ == s_.size();
  }
  bool eat(char c) {
    space();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  [[nodiscard]] char peek() {
    space();
    return i_ < s_.size() ? s_[i_] : '\0';
  }
  // A string of printable ASCII without a backslash: its bytes between the quotes.
  bool string(std::string_view& out) {
    if (!eat('"')) return false;
    for (std::size_t start = i_; i_ < s_.size(); ++i_) {
      auto c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        out = s_.substr(start, i_++ - start);
        return true;
      }
      if (c < 0x20 || c > 0x7e || c == '\\') return false;
    }
    return false;
  }
  // A value that is not an object (objects are the caller's), arrays at most kMaxDepth deep.
  bool value(Value& v, int depth) {
    char c = peek();
    if (c == '"') {
      v.kind = Value::Kind::string;
      return string(v.text);
    }
    v.kind = Value::Kind::other;
    if (c == '-' || (c >= '0' && c <= '9')) return integer(v);
    if (c == '[') {
      ++i_;
      if (depth >= kMaxDepth) return false;
      if (eat(']')) return true;
      Value item;
      do {
        if (!value(item, depth + 1)) return false;
      } while (eat(','));
      return eat(']');
    }
    for (std::string_view word : {"true", "false", "null"}) {
      if (s_.substr(i_, word.size()) == word) {
        i_ += word.size();
        return true;
      }
    }
    return false;
  }

 private:
  static constexpr int kMaxDepth = 8;  // the full parser allows 16; deeper is left to it

  void space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  // An integer of JSON's grammar that fits 64 bits (a fraction, an exponent or more digits are the full
  // parser's: it reads them as floating point, and refuses some).
  bool integer(Value& v) {
    bool negative = s_[i_] == '-';
    if (negative) ++i_;
    std::size_t start = i_;
    std::uint64_t n = 0;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') {
      auto digit = static_cast<std::uint64_t>(s_[i_] - '0');
      if (n > (UINT64_MAX - digit) / 10) return false;
      n = n * 10 + digit;
      ++i_;
    }
    std::size_t digits = i_ - start;
    if (digits == 0 || (digits > 1 && s_[start] == '0')) return false;
    if (i_ < s_.size() && (s_[i_] == '.' || s_[i_] == 'e' || s_[i_] == 'E')) return false;
    if (negative) return n <= static_cast<std::uint64_t>(INT64_MAX) + 1;  // a signed integer: not unsigned
    v.kind = Value::Kind::unsigned_number;
    v.number = n;
    return true;
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

using PlainValue = PlainCursor::Value;

// One object's members through `member(key)` (which reads the value), refusing a repeated key as the full parser
// does. False when the object is outside the form.
template <typename Member>
bool plain_object(PlainCursor& c, Member&& member) {
  if (!c.eat('{')) return false;
  if (c.eat('}')) return true;
  std::vector<std::string_view> keys;
  do {
    std::string_view key;
    if (!c.string(key) || !c.eat(':') || std::find(keys.begin(), keys.end(), key) != keys.end()) return false;
    keys.push_back(key);
    if (!member(key)) return false;
  } while (c.eat(','));
  return c.eat('}');
}

// The full parser's answer (parse_kernel_json_tree) from the fields the plain reader found.
std::optional<TritonTarget> plain_target(bool target_object, const PlainValue& backend, const PlainValue& arch,
                                         const PlainValue& warp, const PlainValue& version) {
  using Kind = PlainValue::Kind;
  if (!target_object || version.kind != Kind::string || backend.kind != Kind::string || arch.kind == Kind::absent ||
      warp.kind != Kind::unsigned_number) {
    return std::nullopt;
  }
  std::string arch_text = arch.kind == Kind::string            ? std::string(arch.text)
                          : arch.kind == Kind::unsigned_number ? std::to_string(arch.number)
                                                               : "";
  return make_target(std::string(backend.text), std::move(arch_text), warp.number, std::string(version.text));
}

}  // namespace

std::optional<std::optional<TritonTarget>> scan_plain_kernel_json(std::string_view text) {
  if (text.size() > kMaxKernelJsonBytes) return std::optional<TritonTarget>{};
  PlainCursor c(text);
  PlainValue backend;
  PlainValue arch;
  PlainValue warp;
  PlainValue version;
  bool target_object = false;
  auto target_member = [&](std::string_view key) {
    PlainValue ignored;
    PlainValue& v = key == "backend" ? backend : key == "arch" ? arch : key == "warp_size" ? warp : ignored;
    return c.value(v, 2);
  };
  auto root_member = [&](std::string_view key) {
    if (key == "target" && c.peek() == '{') return target_object = plain_object(c, target_member);
    PlainValue ignored;
    return c.value(key == "triton_version" ? version : ignored, 1);
  };
  if (!plain_object(c, root_member) || !c.at_end()) return std::nullopt;
  return plain_target(target_object, backend, arch, warp, version);
}

std::optional<TritonTarget> parse_kernel_json(std::string_view text) {
  if (std::optional<std::optional<TritonTarget>> plain = scan_plain_kernel_json(text)) return *plain;
  return parse_kernel_json_tree(text);
}

std::optional<TritonTarget> parse_kernel_json_tree(std::string_view text) {
  if (text.size() > kMaxKernelJsonBytes) return std::nullopt;
  // Only the root's "target" and "triton_version" are built; the other members (most of the bytes of a real
  // kernel's metadata) are checked by the parser and dropped.
  JsonFilter<nlohmann::json> keep_needed = [](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    return !(depth == 1 && event == nlohmann::json::parse_event_t::key && parsed != "target" && parsed != "triton_version");
  };
  nlohmann::json j;
  try {
    j = parse_untrusted<nlohmann::json>(text, "kernel json", keep_needed, 16);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (!j.is_object()) return std::nullopt;
  auto t = j.find("target");
  auto v = j.find("triton_version");
  if (t == j.end() || !t->is_object() || v == j.end() || !v->is_string()) return std::nullopt;
  auto backend = t->find("backend");
  auto arch = t->find("arch");
  auto warp = t->find("warp_size");
  if (backend == t->end() || !backend->is_string() || arch == t->end() || warp == t->end() || !warp->is_number_unsigned()) {
    return std::nullopt;
  }
  std::string arch_text = arch->is_string()            ? arch->get<std::string>()
                          : arch->is_number_unsigned() ? std::to_string(arch->get<std::uint64_t>())
                                                       : "";
  return make_target(backend->get<std::string>(), std::move(arch_text), warp->get<std::uint64_t>(), v->get<std::string>());
}

bool is_kernel_json_name(std::string_view file_name) {
  return file_name.ends_with(".json") && !file_name.starts_with(kGroupFilePrefix);
}

namespace {

std::string_view parent_of(std::string_view relative) {
  std::size_t slash = relative.rfind('/');
  return slash == std::string_view::npos ? std::string_view{} : relative.substr(0, slash);
}

}  // namespace

TritonLevel folders_inside(ComponentKind kind, std::string_view folder) {
  if (kind == ComponentKind::triton) return folder.empty() ? TritonLevel::kernels : TritonLevel::other;
  if (kind != ComponentKind::inductor) return TritonLevel::other;
  if (folder == kInductorTritonFolder) return TritonLevel::devices;
  bool device = parent_of(folder) == kInductorTritonFolder && folder.size() > kInductorTritonFolder.size() + 1;
  return device ? TritonLevel::kernels : TritonLevel::other;
}

std::string_view kernel_folder_of(ComponentKind kind, std::string_view relative_path) {
  std::string_view folder = parent_of(relative_path);
  if (folder.empty()) return {};
  return folders_inside(kind, parent_of(folder)) == TritonLevel::kernels ? folder : std::string_view{};
}

bool is_kernel_json_path(std::string_view path) {
  if (!is_kernel_json_name(path.substr(path.rfind('/') + 1))) return false;
  return !kernel_folder_of(kind_of_component(component_of(path)), relative_of(path)).empty();
}

}  // namespace ccpack::manifest
