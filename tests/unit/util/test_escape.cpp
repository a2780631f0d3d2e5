// util/escape: every untrusted name becomes one line of valid UTF-8, and different names stay different.
#include <catch2/catch.hpp>
#include <utility>

#include "util/escape.hpp"
#include "util/fs.hpp"

using namespace ccpack;

TEST_CASE("escaped keeps printable ASCII and well-formed UTF-8") {
  CHECK(escaped("inductor/fx/a.py") == "inductor/fx/a.py");
  CHECK(escaped("caf\xc3\xa9/\xe2\x82\xac/\xf0\x9f\x98\x80") == "caf\xc3\xa9/\xe2\x82\xac/\xf0\x9f\x98\x80");
  CHECK(escaped("") == "");
}

TEST_CASE("escaped writes control bytes, backslash and malformed UTF-8 as escapes") {
  CHECK(escaped("a\nccpack: error: forged") == "a\\nccpack: error: forged");
  CHECK(escaped("\t\r") == "\\t\\r");
  CHECK(escaped(std::string("x\0y", 3)) == "x\\x00y");
  CHECK(escaped("\x1b[2J\x7f") == "\\x1b[2J\\x7f");
  CHECK(escaped("a\\nb") == "a\\\\nb");                          // a real backslash cannot pass for an escape
  CHECK(escaped("caf\xe9") == "caf\\xe9");                       // Latin-1
  CHECK(escaped("\xc0\xaf") == "\\xc0\\xaf");                    // overlong '/'
  CHECK(escaped("\xed\xa0\x80") == "\\xed\\xa0\\x80");           // a UTF-16 surrogate
  CHECK(escaped("\xf4\x90\x80\x80") == "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  CHECK(escaped("\xe2\x82") == "\\xe2\\x82");                    // cut short
  CHECK(escaped("\x80") == "\\x80");                             // a lone continuation byte
}

TEST_CASE("escaped output is one line of valid UTF-8 for every byte") {
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  std::string out = escaped(all);
  CHECK(out.find('\n') == std::string::npos);
  CHECK(is_valid_utf8(out));
  CHECK_FALSE(is_valid_utf8(all));
}

TEST_CASE("quoted_path escapes the path it quotes") {
  CHECK(quoted_path("/tmp/a\nb") == "'/tmp/a\\nb'");
  CHECK(quoted_path("/tmp/caf\xe9") == "'/tmp/caf\\xe9'");
}

TEST_CASE("escaped writes C1 controls, line separators and bidirectional controls as u-escapes") {
  CHECK(escaped("a\xe2\x80\xaetxt.exe") == "a\\u{202e}txt.exe");  // U+202E right-to-left override
  const std::pair<const char*, const char*> cases[] = {
      {"\xd8\x9c", "\\u{061c}"},     {"\xe2\x80\x8e", "\\u{200e}"}, {"\xe2\x80\x8f", "\\u{200f}"}, {"\xe2\x80\xaa", "\\u{202a}"},
      {"\xe2\x80\xab", "\\u{202b}"}, {"\xe2\x80\xac", "\\u{202c}"}, {"\xe2\x80\xad", "\\u{202d}"}, {"\xe2\x81\xa6", "\\u{2066}"},
      {"\xe2\x81\xa7", "\\u{2067}"}, {"\xe2\x81\xa8", "\\u{2068}"}, {"\xe2\x81\xa9", "\\u{2069}"}, {"\xe2\x80\xa8", "\\u{2028}"},
      {"\xe2\x80\xa9", "\\u{2029}"}, {"\xc2\x9b", "\\u{009b}"},     {"\xc2\x80", "\\u{0080}"}};
  for (const auto& [in, out] : cases) CHECK(escaped(in) == out);
  // Neighbours stay as they are, and a literal "\u{202e}" cannot pass for the escape.
  CHECK(escaped("\xe2\x80\x8d\xe2\x80\xaf\xe2\x81\xa5\xc2\xa0") == "\xe2\x80\x8d\xe2\x80\xaf\xe2\x81\xa5\xc2\xa0");
  CHECK(escaped("\\u{202e}") == "\\\\u{202e}");
}
