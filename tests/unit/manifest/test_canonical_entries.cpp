// manifest/canonical_entries.cpp on hand-written arrays: create's exact form read field by field (the bounds of
// its numbers included), and every other form given up (nullopt), never half read: each prefix of a valid array,
// a byte after it, a trailing comma, a key a type does not have, a digest, mode or number out of form, the limit.
// tests/unit/manifest/test_manifest.cpp checks that the general reader agrees with it on whole manifests.
#include <catch2/catch.hpp>
#include <string>

#include "manifest/canonical_entries.hpp"
#include "util/sha256.hpp"

using namespace ccpack;
using namespace ccpack::manifest;

namespace {

const std::string kHex = to_hex(Sha256::of("hello"));
const std::string kFile = R"({"path":"inductor/a.py","type":"file","mode":"0644","size":5,"sha256":")" + kHex + R"(","frame":0})";
const std::string kDir = R"({"path":"inductor","type":"dir","mode":"0755","frame":0})";
const std::string kLink = R"({"path":"inductor/l","type":"symlink","mode":"0777","target":"a.py","frame":2})";
const std::string kArray = "[" + kDir + "," + kFile + "," + kLink + "]";

bool reads(const std::string& array, std::uint64_t max = 100) { return read_canonical_entries(array, max).has_value(); }

std::string file_with(const std::string& from, const std::string& to) {
  std::string s = kFile;
  s.replace(s.find(from), from.size(), to);
  return "[" + s + "]";
}

}  // namespace

TEST_CASE("canonical entries: create's form read field by field", "[canonical-entries]") {
  std::optional<EntryList> list = read_canonical_entries(kArray, 100);
  REQUIRE(list);
  REQUIRE(list->size() == 3);
  Entry dir = (*list)[0], file = (*list)[1], link = (*list)[2];
  CHECK(dir.path == "inductor");
  CHECK(dir.type == EntryType::dir);
  CHECK(dir.mode == 0755);
  CHECK(dir.size == 0);
  CHECK(file.path == "inductor/a.py");
  CHECK(file.type == EntryType::file);
  CHECK(file.mode == 0644);
  CHECK(file.size == 5);
  CHECK(file.sha256 == Sha256::of("hello"));
  CHECK(file.frame == 0);
  CHECK(link.type == EntryType::symlink);
  CHECK(link.mode == 0777);
  CHECK(link.link_target == "a.py");
  CHECK(link.frame == 2);
  CHECK(link.sha256 == Digest{});  // nothing carried over from the file before it
  CHECK(read_canonical_entries("[]", 0)->size() == 0);
}

TEST_CASE("canonical entries: the numbers' bounds: 64-bit sizes, 32-bit frames, no leading zero", "[canonical-entries]") {
  std::optional<EntryList> big = read_canonical_entries(file_with("\"size\":5", "\"size\":18446744073709551615"), 10);
  REQUIRE(big);
  CHECK((*big)[0].size == UINT64_MAX);
  CHECK_FALSE(reads(file_with("\"size\":5", "\"size\":18446744073709551616")));
  CHECK_FALSE(reads(file_with("\"size\":5", "\"size\":99999999999999999999")));
  CHECK(reads(file_with("\"size\":5", "\"size\":0")));
  CHECK_FALSE(reads(file_with("\"size\":5", "\"size\":00")));
  CHECK_FALSE(reads(file_with("\"size\":5", "\"size\":05")));
  CHECK_FALSE(reads(file_with("\"size\":5", "\"size\":5e0")));
  CHECK_FALSE(reads(file_with("\"size\":5", "\"size\":5E0")));
  CHECK_FALSE(reads(file_with("\"size\":5", "\"size\":-5")));
  CHECK_FALSE(reads(file_with("\"size\":5", "\"size\":\"5\"")));
  std::optional<EntryList> last_frame = read_canonical_entries(file_with("\"frame\":0", "\"frame\":4294967295"), 10);
  REQUIRE(last_frame);
  CHECK((*last_frame)[0].frame == UINT32_MAX);
  CHECK_FALSE(reads(file_with("\"frame\":0", "\"frame\":4294967296")));
}

TEST_CASE("canonical entries: modes of four octal digits, digests of 64 lower-case hex digits, known types",
          "[canonical-entries]") {
  CHECK((*read_canonical_entries(file_with("\"0644\"", "\"7777\""), 10))[0].mode == 07777);
  CHECK_FALSE(reads(file_with("\"0644\"", "\"644\"")));
  CHECK_FALSE(reads(file_with("\"0644\"", "\"00644\"")));
  CHECK_FALSE(reads(file_with("\"0644\"", "\"0648\"")));
  CHECK_FALSE(reads(file_with("\"0644\"", "420")));
  CHECK_FALSE(reads(file_with(kHex, kHex.substr(1))));
  CHECK_FALSE(reads(file_with(kHex, kHex + "0")));
  std::string upper = kHex;
  for (char& c : upper) c = static_cast<char>(c >= 'a' && c <= 'f' ? c - 32 : c);
  CHECK_FALSE(reads(file_with(kHex, upper)));
  CHECK_FALSE(reads(file_with("\"file\"", "\"fifo\"")));
  CHECK_FALSE(reads(file_with("\"file\"", "\"File\"")));
}

TEST_CASE("canonical entries: keys in create's order only, and only those of the entry's type", "[canonical-entries]") {
  CHECK_FALSE(reads("[" + std::string(R"({"path":"inductor","type":"dir","mode":"0755","size":0,"frame":0})") + "]"));
  CHECK_FALSE(reads("[" + std::string(R"({"path":"inductor","type":"file","mode":"0644","frame":0})") + "]"));
  CHECK_FALSE(reads("[" + std::string(R"({"type":"dir","path":"inductor","mode":"0755","frame":0})") + "]"));
  CHECK_FALSE(reads("[" + std::string(R"({"path":"inductor","type":"dir","mode":"0755"})") + "]"));
  CHECK_FALSE(reads(file_with("\"frame\":0}", "\"frame\":0,\"x\":1}")));
  CHECK_FALSE(reads(file_with("\"inductor/a.py\"", "\"inductor/\\u0061.py\"")));
  CHECK_FALSE(reads(file_with("\"inductor/a.py\"", "\"inductor/\x7f.py\"")));
  CHECK_FALSE(reads(file_with("\"inductor/a.py\"", "\"inductor/\ta.py\"")));
  CHECK_FALSE(reads(file_with("\"inductor/a.py\"", "\"inductor/\xc3\xa9.py\"")));
  CHECK_FALSE(reads(file_with(",\"mode\"", ", \"mode\"")));
}

TEST_CASE("canonical entries: every prefix, a byte after the array, a trailing comma, the limit: given up",
          "[canonical-entries]") {
  for (std::size_t n = 0; n < kArray.size(); ++n) {
    INFO("prefix of " << n << " bytes");
    CHECK_FALSE(reads(kArray.substr(0, n)));
  }
  CHECK_FALSE(reads(kArray + " "));
  CHECK_FALSE(reads(kArray + "]"));
  CHECK_FALSE(reads(" " + kArray));
  CHECK_FALSE(reads("[" + kDir + ",]"));
  CHECK_FALSE(reads("[," + kDir + "]"));
  CHECK_FALSE(reads("[" + kDir + kDir + "]"));
  CHECK_FALSE(reads("[ ]"));
  CHECK_FALSE(reads("{}"));
  CHECK(reads(kArray, 3));
  CHECK_FALSE(reads(kArray, 2));
  CHECK_FALSE(reads("[" + kDir + "]", 0));
}
