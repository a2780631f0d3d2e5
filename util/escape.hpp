// A name read from an untrusted source (an archive entry, a link target), made safe to print in a one-line
// message: quoted with single quotes; bytes outside printable ASCII, the quote and the backslash as \xNN, so a
// hostile name cannot forge a line, move the cursor or hide itself.
#pragma once

#include <string>
#include <string_view>

namespace ccpack {

// The bytes of `text` with every one outside printable ASCII, the quote and the backslash written as \xNN.
[[nodiscard]] inline std::string printable(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (char c : text) {
    auto b = static_cast<unsigned char>(c);
    if (b >= 0x20 && b < 0x7f && c != '\'' && c != '\\') {
      out += c;
    } else {
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 15];
    }
  }
  return out;
}

// A name, escaped as above and quoted: 'inductor/a\x0ab'.
[[nodiscard]] inline std::string escaped(std::string_view name) { return "'" + printable(name) + "'"; }

}  // namespace ccpack
