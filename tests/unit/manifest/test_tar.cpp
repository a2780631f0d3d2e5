// Tar codec: what append_tar_header writes decodes back to the same fields; corruption is named.
#include <catch2/catch.hpp>

#include "manifest/tar.hpp"
#include "util/error.hpp"

using namespace ccpack;
using namespace ccpack::manifest;

namespace {

UstarBlock decode_all(const std::string& bytes) {
  REQUIRE(bytes.size() % kTarBlock == 0);
  UstarBlock b = decode_ustar_block(bytes.data(), "test");
  if (b.typeflag == 'x') {
    std::string records = bytes.substr(kTarBlock, b.size);
    std::size_t next = kTarBlock + b.size + tar_padding(b.size);
    UstarBlock real = decode_ustar_block(bytes.data() + next, "test");
    apply_pax_records(records, real, "test");
    return real;
  }
  return b;
}

}  // namespace

TEST_CASE("short paths use a single ustar block") {
  std::string out;
  append_tar_header(out, TarHeader{"triton/ABC/k.json", EntryType::file, 0644, 1234, {}});
  REQUIRE(out.size() == kTarBlock);
  UstarBlock b = decode_all(out);
  CHECK(b.typeflag == '0');
  CHECK(b.path == "triton/ABC/k.json");
  CHECK(b.mode == 0644);
  CHECK(b.size == 1234);
}

TEST_CASE("folders get a trailing slash and type 5") {
  std::string out;
  append_tar_header(out, TarHeader{"inductor/fxgraph", EntryType::dir, 0755, 0, {}});
  UstarBlock b = decode_all(out);
  CHECK(b.typeflag == '5');
  CHECK(b.path == "inductor/fxgraph/");
}

TEST_CASE("paths split into prefix and name when over 100 bytes") {
  std::string path = "triton/" + std::string(52, 'H') + "/" + std::string(60, 'n') + ".json";
  std::string out;
  append_tar_header(out, TarHeader{path, EntryType::file, 0600, 7, {}});
  CHECK(out.size() == kTarBlock);
  CHECK(decode_all(out).path == path);
}

TEST_CASE("unsplittable paths and long link targets use pax records") {
  std::string path = "extra/" + std::string(150, 'x') + ".so";
  std::string target = std::string(120, 'y');
  std::string out;
  append_tar_header(out, TarHeader{path, EntryType::symlink, 0777, 0, target});
  CHECK(out.size() > kTarBlock);
  UstarBlock b = decode_all(out);
  CHECK(b.typeflag == '2');
  CHECK(b.path == path);
  CHECK(b.link_target == target);
}

TEST_CASE("sizes of 8 GiB and more use a pax size record") {
  std::uint64_t size = 9ULL << 30;
  std::string out;
  append_tar_header(out, TarHeader{"inductor/big", EntryType::file, 0644, size, {}});
  CHECK(decode_all(out).size == size);
}

TEST_CASE("a flipped header byte fails the checksum") {
  std::string out;
  append_tar_header(out, TarHeader{"inductor/a", EntryType::file, 0644, 1, {}});
  out[3] ^= 1;
  CHECK_THROWS_WITH(decode_ustar_block(out.data(), "where"), Catch::Contains("checksum mismatch"));
}

TEST_CASE("padding rounds up to the block") {
  CHECK(tar_padding(0) == 0);
  CHECK(tar_padding(1) == 511);
  CHECK(tar_padding(512) == 0);
  CHECK(tar_padding(513) == 511);
}

TEST_CASE("malformed pax records are rejected") {
  UstarBlock b;
  CHECK_THROWS_AS(apply_pax_records("99 path=x\n", b, "w"), IntegrityError);
  CHECK_THROWS_AS(apply_pax_records("garbage", b, "w"), IntegrityError);
  CHECK_THROWS_AS(apply_pax_records("13 size=12x3\n", b, "w"), IntegrityError);
}
