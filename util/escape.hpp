// Escaping of untrusted bytes (archive paths, link targets, JSON keys, names read from disk) before they go into a
// message. Every ccpack error is one line of valid UTF-8 (`ccpack: error: ...`), and a name is attacker-chosen:
// a newline in it would forge a second line, a terminal escape would rewrite the screen, and an invalid UTF-8
// byte would break `--json` reports. `escaped()` keeps printable ASCII and well-formed UTF-8 sequences as they
// are and writes everything else as a C-style escape: \n, \t, \r, \\ for backslash, \xNN for any other control
// byte (0x00-0x1f, 0x7f) and for every byte that is not part of a well-formed UTF-8 sequence (overlong forms,
// surrogates and code points past U+10FFFF count as malformed, as in RFC 3629). Well-formed characters that rewrite
// the display (C1 controls, U+2028/U+2029, the bidirectional controls U+061C, U+200E/F, U+202A-E, U+2066-9) are
// written as \u{XXXX}. The result is unambiguous: two different names never escape to the same text.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ccpack {

[[nodiscard]] std::string escaped(std::string_view bytes);

// escaped(), cut to at most `max_length` bytes (0: no limit) on a character boundary, with "..." when cut: for
// tables and one-line reports that show values of any length.
[[nodiscard]] std::string escaped(std::string_view bytes, std::size_t max_length);

// escaped(), in single quotes, for a name inside a message: 'inductor/a\nb'.
[[nodiscard]] inline std::string quoted_name(std::string_view bytes) { return "'" + escaped(bytes) + "'"; }

// Whether `bytes` is well-formed UTF-8 (RFC 3629), the rule `escaped()` applies.
[[nodiscard]] bool is_valid_utf8(std::string_view bytes);

}  // namespace ccpack
