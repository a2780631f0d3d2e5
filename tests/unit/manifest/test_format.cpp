// The header frame: round trip, and each kind of damage reported as an integrity error naming the file.
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "manifest/format.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

using namespace ccpack;
using namespace ccpack::manifest;

namespace {

ArchiveHeader read_bytes(const test::ScratchDir& dir, const std::string& bytes) {
  auto path = dir / "a.ccpack";
  test::write_file(path, bytes);
  UniqueFd fd(::open(path.c_str(), O_RDONLY));
  return read_header(fd.get(), path);
}

std::string encoded(std::uint64_t payload) {
  ArchiveHeader h;
  h.manifest = "{\"x\":1}";
  h.payload_size = payload;
  return encode_header(h);
}

}  // namespace

TEST_CASE("header round trip, payload located after it") {
  test::ScratchDir dir;
  std::string bytes = encoded(3) + "abc";
  ArchiveHeader h = read_bytes(dir, bytes);
  CHECK(h.manifest == "{\"x\":1}");
  CHECK(h.signatures == "[]");
  CHECK(h.payload_size == 3);
  CHECK(h.header_size == bytes.size() - 3);
  CHECK(bytes.substr(0, 4) == std::string("\x5e\x2a\x4d\x18", 4));  // zstd skippable frame, little endian
}

TEST_CASE("damaged headers are named") {
  test::ScratchDir dir;
  std::string good = encoded(3) + "abc";
  CHECK_THROWS_WITH(read_bytes(dir, good.substr(0, good.size() - 1)), Catch::Contains("is truncated"));
  CHECK_THROWS_WITH(read_bytes(dir, good + "x"), Catch::Contains("unexpected bytes after the payload"));
  CHECK_THROWS_WITH(read_bytes(dir, "hello world, this is not an archive at all, not even close....."),
                    Catch::Contains("not a ccpack archive"));
  std::string flipped = good;
  flipped[flipped.find("\"x\"") + 1] = 'y';
  CHECK_THROWS_WITH(read_bytes(dir, flipped), Catch::Contains("manifest SHA-256 mismatch"));
  std::string version = good;
  version[16] = 9;
  CHECK_THROWS_WITH(read_bytes(dir, version), Catch::Contains("format version 9"));
  CHECK_THROWS_AS(read_bytes(dir, good.substr(0, 20)), IntegrityError);
}

TEST_CASE("a payload size that overflows with the header size is named") {
  test::ScratchDir dir;
  std::string bytes = encoded(UINT64_MAX) + "abc";
  CHECK_THROWS_WITH(read_bytes(dir, bytes), "'" + (dir / "a.ccpack").string() +
                                                "': header field 'payload_size' is 18446744073709551615: the header and payload "
                                                "sizes overflow 64 bits");
  // The largest size that does not wrap is an ordinary truncation.
  std::uint64_t header = encoded(0).size();
  CHECK_THROWS_WITH(read_bytes(dir, encoded(UINT64_MAX - header) + "abc"), Catch::Contains("is truncated"));
}
