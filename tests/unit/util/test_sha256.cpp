// util/sha256.cpp: the digest against FIPS 180-2's test vectors, whole and fed in pieces, reuse after finish(),
// a moved-from context's digest carried by the new one, and the hex both ways (exactly 64 lower-case digits).
#include <catch2/catch.hpp>
#include <string>
#include <utility>

#include "util/sha256.hpp"

using namespace ccpack;

namespace {
constexpr const char* kEmpty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr const char* kAbc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
constexpr const char* kTwoBlocks = "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1";
constexpr const char* kMillionA = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
}  // namespace

TEST_CASE("SHA-256 of the FIPS 180-2 vectors, whole and in pieces") {
  CHECK(to_hex(Sha256::of("")) == kEmpty);
  CHECK(to_hex(Sha256::of("abc")) == kAbc);
  const std::string two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  CHECK(to_hex(Sha256::of(two)) == kTwoBlocks);
  Sha256 h;
  for (char c : two) h.update(&c, 1);
  CHECK(to_hex(h.finish()) == kTwoBlocks);
  // finish() resets: the same context hashes the next input from scratch.
  h.update("ab");
  h.update("c");
  CHECK(to_hex(h.finish()) == kAbc);
  CHECK(to_hex(h.finish()) == kEmpty);
  const std::string chunk(1000, 'a');
  for (int i = 0; i < 1000; ++i) h.update(chunk);
  CHECK(to_hex(h.finish()) == kMillionA);
}

TEST_CASE("a moved Sha256 carries what was fed to it") {
  Sha256 a;
  a.update("ab");
  Sha256 b(std::move(a));
  b.update("c");
  CHECK(to_hex(b.finish()) == kAbc);
  Sha256 c;
  c.update("junk");
  c = std::move(b);
  c.update("abc");
  CHECK(to_hex(c.finish()) == kAbc);
}

TEST_CASE("hex both ways: exactly 64 lower-case digits") {
  const std::uint8_t bytes[] = {0x00, 0x0f, 0xa0, 0xff};
  CHECK(to_hex(bytes) == "000fa0ff");
  CHECK(to_hex(std::span<const std::uint8_t>{}).empty());
  auto d = digest_from_hex(kAbc);
  REQUIRE(d);
  CHECK(*d == Sha256::of("abc"));
  std::string upper = kAbc;
  upper[0] = 'B';
  CHECK_FALSE(digest_from_hex(upper));
  CHECK_FALSE(digest_from_hex(std::string(kAbc).substr(0, 63)));
  CHECK_FALSE(digest_from_hex(std::string(kAbc) + "0"));
  CHECK_FALSE(digest_from_hex(std::string(63, '0') + "g"));
  CHECK_FALSE(digest_from_hex(""));
}
