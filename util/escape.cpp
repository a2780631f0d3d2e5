#include "util/escape.hpp"

#include <cstdint>
#include <cstdio>

namespace ccpack {
namespace {

// Length of the well-formed UTF-8 sequence starting at s[i] (2-4), or 0 when it is not one.
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  auto byte = [&](std::size_t k) { return static_cast<std::uint8_t>(s[k]); };
  std::uint8_t b0 = byte(i);
  std::size_t len = 0;
  std::uint8_t lo = 0x80;
  std::uint8_t hi = 0xbf;  // bounds of the second byte (RFC 3629 table)
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    len = 2;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    len = 3;
    if (b0 == 0xe0) lo = 0xa0;  // no overlong forms
    if (b0 == 0xed) hi = 0x9f;  // no surrogates
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    len = 4;
    if (b0 == 0xf0) lo = 0x90;  // no overlong forms
    if (b0 == 0xf4) hi = 0x8f;  // nothing past U+10FFFF
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < len; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xbf) return 0;
  }
  return len;
}

// The code point of the well-formed sequence s[i, i + len).
char32_t code_point(std::string_view s, std::size_t i, std::size_t len) {
  static constexpr std::uint8_t kLead[] = {0, 0, 0x1f, 0x0f, 0x07};
  char32_t cp = static_cast<std::uint8_t>(s[i]) & kLead[len];
  for (std::size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<std::uint8_t>(s[i + k]) & 0x3f);
  return cp;
}

// Well-formed characters that still rewrite what a reader sees: the C1 controls (0x9b is a terminal's CSI), the
// line and paragraph separators, and the bidirectional controls (U+202E shows "exe.txt" as "txt.exe").
bool invisible_control(char32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) || cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x2028 && cp <= 0x202e) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

}  // namespace

std::string escaped(std::string_view s) {
  // defence: escaping
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    auto c = static_cast<std::uint8_t>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      if (c == '\\') out += '\\';
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    if (c >= 0x80) {
      if (std::size_t len = utf8_sequence(s, i)) {
        char32_t cp = code_point(s, i, len);
        // defence: escape-bidi
        if (invisible_control(cp)) {
          char buf[16];
          out.append(buf, static_cast<std::size_t>(std::snprintf(buf, sizeof buf, "\\u{%04x}", static_cast<unsigned>(cp))));
          i += len;
          continue;
        }
        out.append(s.substr(i, len));
        i += len;
        continue;
      }
    }
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        out += "\\x";
        out += kHex[c >> 4];
        out += kHex[c & 0xf];
    }
    ++i;
  }
  return out;
}

bool is_valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    if (static_cast<std::uint8_t>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = utf8_sequence(s, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

std::string escaped(std::string_view bytes, std::size_t max_length) {
  std::string out = escaped(bytes);
  if (max_length == 0 || out.size() <= max_length) return out;
  std::size_t cut = max_length > 3 ? max_length - 3 : 0;
  while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 sequence
  out.resize(cut);
  return out + "...";
}

}  // namespace ccpack
