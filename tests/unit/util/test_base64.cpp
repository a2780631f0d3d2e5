// util/base64.cpp: RFC 4648's test vectors both ways, every byte value through a round trip, the lenient reading
// auth files need (padding optional, the URL-safe alphabet), and what is refused (a character outside both
// alphabets, padding inside the text, a lone trailing character).
#include <catch2/catch.hpp>
#include <optional>
#include <string>

#include "util/base64.hpp"

using namespace ccpack;

namespace {

std::optional<std::string> some(const std::string& s) { return s; }

}  // namespace

TEST_CASE("base64: RFC 4648 section 10 vectors, encoded and decoded", "[base64]") {
  const std::pair<const char*, const char*> vectors[] = {{"", ""},
                                                         {"f", "Zg=="},
                                                         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},
                                                         {"foob", "Zm9vYg=="},
                                                         {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, coded] : vectors) {
    CHECK(base64_encode(plain) == coded);
    CHECK(base64_decode(coded) == some(plain));
  }
}

TEST_CASE("base64: every byte value survives a round trip, and the alphabet's ends are right", "[base64]") {
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  CHECK(base64_decode(base64_encode(all)) == some(all));
  CHECK(base64_encode(std::string("\xfb\xff\xbf", 3)) == "+/+/");
  CHECK(base64_encode(std::string("\0\0\0", 3)) == "AAAA");
  CHECK(base64_encode(std::string("\xff\xff\xff", 3)) == "////");
  CHECK(base64_encode("user:pa ss") == "dXNlcjpwYSBzcw==");
}

TEST_CASE("base64: lenient where auth files need it: padding optional, URL-safe '-' and '_'", "[base64]") {
  CHECK(base64_decode("Zg") == some("f"));
  CHECK(base64_decode("Zm8") == some("fo"));
  CHECK(base64_decode("-_-_") == some(std::string("\xfb\xff\xbf", 3)));
  CHECK(base64_decode("+/-_") == some(std::string("\xfb\xff\xbf", 3)));
  CHECK(base64_decode("Zg=") == some("f"));
  CHECK(base64_decode("Zg=====") == some("f"));  // any trailing padding is dropped
}

TEST_CASE("base64: characters outside the alphabets, inner padding and a lone last character are refused", "[base64]") {
  CHECK_FALSE(base64_decode("Zm9v\n"));
  CHECK_FALSE(base64_decode("Zm 9v"));
  CHECK_FALSE(base64_decode("Zm9v*"));
  CHECK_FALSE(base64_decode("Zg==Zg=="));  // padding only at the end
  CHECK_FALSE(base64_decode(std::string("Zm\0v", 4)));
  CHECK_FALSE(base64_decode("\xc3\xa9"));  // not ASCII
  CHECK_FALSE(base64_decode("Z"));         // 6 bits make no byte
  CHECK_FALSE(base64_decode("Zm9vY"));
  CHECK_FALSE(base64_decode("Zm9vY==="));
  CHECK(base64_decode("") == some(""));
  CHECK(base64_decode("====") == some(""));
}

TEST_CASE("base64 strict: only what base64_encode writes, as Go's padded standard encoding reads cosign's signatures",
          "[base64]") {
  CHECK(base64_decode_strict("") == some(""));
  CHECK(base64_decode_strict("Zg==") == some("f"));
  CHECK(base64_decode_strict("Zm8=") == some("fo"));
  CHECK(base64_decode_strict("Zm9v") == some("foo"));
  CHECK(base64_decode_strict("+/+/") == some(std::string("\xfb\xff\xbf", 3)));
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  CHECK(base64_decode_strict(base64_encode(all)) == some(all));
  CHECK_FALSE(base64_decode_strict("Zg"));        // unpadded
  CHECK_FALSE(base64_decode_strict("Zm8"));       // unpadded
  CHECK_FALSE(base64_decode_strict("Zg="));       // short padding
  CHECK_FALSE(base64_decode_strict("Zg==="));     // too much padding
  CHECK_FALSE(base64_decode_strict("Zg======"));  // too much padding
  CHECK_FALSE(base64_decode_strict("-_-_"));      // URL-safe alphabet
  CHECK_FALSE(base64_decode_strict("+/-_"));
  CHECK_FALSE(base64_decode_strict("Zg==Zg=="));  // padding inside
  CHECK_FALSE(base64_decode_strict("Zh=="));      // unused bits set: not canonical
  CHECK_FALSE(base64_decode_strict("Zm9="));
  CHECK_FALSE(base64_decode_strict("Zm9v\n"));
  CHECK_FALSE(base64_decode_strict("Zm9\nv"));
  CHECK_FALSE(base64_decode_strict(" Zm9v"));
  CHECK_FALSE(base64_decode_strict("===="));
  CHECK_FALSE(base64_decode_strict("Z==="));
}
