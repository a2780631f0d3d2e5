// The manifest is the gate for untrusted archives: every unsafe or inconsistent field is refused by name.
#include <catch2/catch.hpp>
#include <cctype>
#include <nlohmann/json.hpp>
#include <optional>

#include "manifest/canonical_entries.hpp"
#include "manifest/manifest.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"

using namespace ccpack;
using namespace ccpack::manifest;

namespace {

std::string edited_json(const std::function<void(Manifest&)>& edit) {
  Manifest m = test::sample_manifest();
  edit(m);
  return m.to_json();
}

}  // namespace

TEST_CASE("manifest JSON round-trips exactly") {
  Manifest m = test::sample_manifest();
  std::string json = m.to_json();
  Manifest back = Manifest::parse(json);
  CHECK(back.to_json() == json);
  REQUIRE(back.entries.size() == 5);
  CHECK(back.entries[2].sha256 == Sha256::of("hello"));
  CHECK(back.entries[3].link_target == "a.py");
  CHECK(back.entries[4].mode == 0700);
}

TEST_CASE("hostile entries are refused, naming the field") {
  CHECK_THROWS_WITH(Manifest::parse(edited_json([](Manifest& m) { m.entries[2].path = "/etc/passwd"; })),
                    Catch::Contains("entries[2].path") && Catch::Contains("absolute"));
  CHECK_THROWS_WITH(Manifest::parse(edited_json([](Manifest& m) { m.entries[2].path = "inductor/fx/../../x"; })),
                    Catch::Contains("entries[2].path") && Catch::Contains("unsafe"));
  CHECK_THROWS_WITH(Manifest::parse(edited_json([](Manifest& m) { m.entries[2].path = "inductor/fx"; })),
                    Catch::Contains("entries[2].path") && Catch::Contains("duplicates"));
  CHECK_THROWS_WITH(Manifest::parse(edited_json([](Manifest& m) { m.entries[2].mode = 04755; })),
                    Catch::Contains("entries[2].mode") && Catch::Contains("setuid"));
  CHECK_THROWS_WITH(Manifest::parse(edited_json([](Manifest& m) { m.entries[3].link_target = "../../../etc/shadow"; })),
                    Catch::Contains("entries[3].target") && Catch::Contains("outside"));
  CHECK_THROWS_WITH(Manifest::parse(edited_json([](Manifest& m) { m.entries[3].link_target = "/etc/shadow"; })),
                    Catch::Contains("entries[3].target"));
  CHECK_THROWS_WITH(Manifest::parse(edited_json([](Manifest& m) { m.entries[2].path = "inductor/nofolder/a.py"; })),
                    Catch::Contains("entries[2].path") && Catch::Contains("comes before its folder"));
  CHECK_THROWS_WITH(Manifest::parse(edited_json([](Manifest& m) { m.entries[2].path = "other/a.py"; })),
                    Catch::Contains("not under a listed component"));
  CHECK_THROWS_WITH(Manifest::parse(edited_json([](Manifest& m) { m.entries[2].size = 1ULL << 40; })),
                    Catch::Contains("entries[2].size"));
}

TEST_CASE("the total size of the files is bounded, each file under its own bound") {
  Limits small;
  small.max_total_size = 4;  // the sample's one file has 5 bytes, under max_file_size
  CHECK_THROWS_WITH(Manifest::parse(test::sample_manifest().to_json(), small),
                    "manifest field 'entries[2].size' makes the archive exceed the total size limit");
  small.max_total_size = 5;
  CHECK_NOTHROW(Manifest::parse(test::sample_manifest().to_json(), small));
}

TEST_CASE("inconsistent frames are refused") {
  CHECK_THROWS_WITH(Manifest::parse(edited_json([](Manifest& m) { m.frames[0].offset = 7; })),
                    Catch::Contains("frames[0].offset"));
  CHECK_THROWS_WITH(Manifest::parse(edited_json([](Manifest& m) { m.frames[0].entry_count = 4; })),
                    Catch::Contains("do not cover all entries"));
  CHECK_THROWS_WITH(Manifest::parse(edited_json([](Manifest& m) { m.tar_size = 1; })), Catch::Contains("tar_size"));
}

TEST_CASE("malformed JSON and wrong types are integrity errors") {
  CHECK_THROWS_AS(Manifest::parse("{not json"), IntegrityError);
  CHECK_THROWS_WITH(Manifest::parse("{\"format\": 2}"), Catch::Contains("format 2 is not supported"));
  std::string json = test::sample_manifest().to_json();
  std::string bad = json;
  bad.replace(bad.find("\"tar_size\":4096"), 15, "\"tar_size\":\"x\"");
  CHECK_THROWS_WITH(Manifest::parse(bad), Catch::Contains("tar_size"));
}

TEST_CASE("component names are checked") {
  CHECK(is_valid_component_name("torch_extensions"));
  CHECK_FALSE(is_valid_component_name(""));
  CHECK_FALSE(is_valid_component_name(".."));
  CHECK_FALSE(is_valid_component_name("a/b"));
  CHECK_THROWS_WITH(Manifest::parse(edited_json([](Manifest& m) { m.components[1].name = "inductor"; })),
                    Catch::Contains("components[1].name"));
}

TEST_CASE("links are judged through the other links of the archive") {
  auto chain = [](Manifest& m) {
    m.entries.insert(m.entries.begin() + 4, {{"inductor/l2", EntryType::symlink, 0777, 0, {}, ".", 0},
                                             {"inductor/l1", EntryType::symlink, 0777, 0, {}, "l2/..", 0}});
    m.frames[0].entry_count = m.entries.size();
  };
  CHECK_THROWS_WITH(Manifest::parse(edited_json(chain)),
                    "manifest field 'entries[5].target' of symlink 'inductor/l1' resolves outside 'inductor': 'l2/..'");
  auto loop = [](Manifest& m) {
    m.entries[3].link_target = "link";
    m.frames[0].entry_count = m.entries.size();
  };
  CHECK_THROWS_WITH(
      Manifest::parse(edited_json(loop)),
      "manifest field 'entries[3].target' of symlink 'inductor/fx/link' follows more than 40 symlinks (a loop): 'link'");
  // A link may come before the entry it points at: links are judged once every entry is known.
  auto early = [](Manifest& m) {
    m.entries.insert(m.entries.begin() + 1, {"inductor/early", EntryType::symlink, 0777, 0, {}, "fx/a.py", 0});
    m.frames[0].entry_count = m.entries.size();
  };
  CHECK_NOTHROW(Manifest::parse(edited_json(early)));
}

TEST_CASE("a link target the kernel would not create as written is refused") {
  CHECK_THROWS_WITH(Manifest::parse(edited_json([](Manifest& m) { m.entries[3].link_target = std::string("a.py\0/../..", 11); })),
                    "manifest field 'entries[3].target' of symlink 'inductor/fx/link' contains a NUL byte");
  CHECK_THROWS_WITH(Manifest::parse(edited_json([](Manifest& m) { m.entries[3].link_target = std::string(4096, 'a'); })),
                    "manifest field 'entries[3].target' of symlink 'inductor/fx/link' is longer than 4095 bytes");
  CHECK_THROWS_WITH(Manifest::parse(edited_json([](Manifest& m) { m.entries[3].link_target.clear(); })),
                    "manifest field 'entries[3].target' of symlink 'inductor/fx/link' is empty");
  CHECK_THROWS_WITH(Manifest::parse(edited_json([](Manifest& m) { m.entries[3].link_target = "/etc/shadow"; })),
                    "manifest field 'entries[3].target' of symlink 'inductor/fx/link' is absolute: '/etc/shadow'");
}

TEST_CASE("deep or repeated JSON is refused by the manifest parser") {
  std::string json = test::sample_manifest().to_json();
  std::string deep;
  for (int i = 0; i < 60000; ++i) deep += "{\"a\":";
  deep += "{}" + std::string(60000, '}');
  std::string nested = json;
  nested.replace(nested.find("\"fingerprint\":{}"), 16, "\"fingerprint\":" + deep);
  CHECK_THROWS_WITH(Manifest::parse(nested),
                    Catch::StartsWith("manifest field 'fingerprint.a.a.a.a") && Catch::EndsWith("' nests deeper than 64 levels"));
  std::string twice = json;
  twice.replace(twice.find("\"entries\":["), 11, "\"entries\":[],\"entries\":[");
  CHECK_THROWS_WITH(Manifest::parse(twice), "manifest field 'entries' is repeated (a JSON key appears twice in one object)");
  std::string in_entry = json;
  in_entry.replace(in_entry.find("\"mode\":\"0644\""), 13, "\"mode\":\"0644\",\"mode\":\"0600\"");
  CHECK_THROWS_WITH(Manifest::parse(in_entry),
                    "manifest field 'entries[2].mode' is repeated (a JSON key appears twice in one object)");
  // Past the manifest's own guard, the fingerprint goes through its gate (the manifest holds it parsed).
  CHECK_THROWS_WITH(
      Manifest::parse(test::replaced(json, "\"fingerprint\":{}", "\"fingerprint\":{\"schema\":1,\"fields\":{},\"x\":1}")),
      "fingerprint field 'x' is not a fingerprint key this ccpack knows");
}

TEST_CASE("entries named like ccpack's own files are refused") {
  CHECK_THROWS_WITH(Manifest::parse(edited_json([](Manifest& m) { m.entries[2].path = "inductor/fx/.ccpack-marker.json"; })),
                    "manifest field 'entries[2].path' uses a name ccpack reserves for itself: 'inductor/fx/.ccpack-marker.json'");
  CHECK_THROWS_WITH(Manifest::parse(edited_json([](Manifest& m) { m.entries[1].path = "inductor/.fx.ccpack-staging.42"; })),
                    Catch::StartsWith("manifest field 'entries[1].path' uses a name ccpack reserves for itself"));
}

TEST_CASE("untrusted names in refusals are escaped onto one line") {
  CHECK_THROWS_WITH(
      Manifest::parse(edited_json([](Manifest& m) {
        m.entries[2].path = "inductor/fx/a\nccpack: error: forged";
        m.entries[2].mode = 04755;
      })),
      "manifest field 'entries[2].mode' has setuid, setgid or sticky bits on 'inductor/fx/a\\nccpack: error: forged'");
  CHECK_THROWS_WITH(Manifest::parse(edited_json([](Manifest& m) { m.entries[2].path = "other/\x1b[2J"; })),
                    "manifest field 'entries[2].path' 'other/\\x1b[2J' is not under a listed component");
}

TEST_CASE("frame sizes that wrap around 2^64 are refused by field") {
  auto wrap = [](std::uint64_t Frame::*field) {
    return [field](Manifest& m) {
      Frame f1{100, 0, 0, Sha256::of("x"), 5, 0};
      Frame f2{100, 0, 0, Sha256::of("y"), 5, 0};
      f1.*field = UINT64_MAX;
      f2.*field = 1;
      if (field == &Frame::compressed_size) f2.offset = 99;  // 100 + 2^64 - 1, wrapped
      m.frames.push_back(f1);
      m.frames.push_back(f2);
    };
  };
  CHECK_THROWS_WITH(Manifest::parse(edited_json(wrap(&Frame::compressed_size))),
                    "manifest field 'frames[1].compressed_size' makes the payload size overflow 64 bits");
  CHECK_THROWS_WITH(Manifest::parse(edited_json(wrap(&Frame::raw_size))),
                    "manifest field 'frames[1].raw_size' makes the tar size overflow 64 bits");
}

TEST_CASE("the entry count is bounded before the entries are kept") {
  Limits small;
  small.max_entries = 4;
  CHECK_THROWS_WITH(Manifest::parse(test::sample_manifest().to_json(), small),
                    "manifest field 'entries' has more than 4 entries");
  Manifest m = test::sample_manifest();
  CHECK_THROWS_WITH(m.validate(small), "manifest field 'entries' has more than 4 entries");
  small.max_entries = 5;
  CHECK_NOTHROW(Manifest::parse(test::sample_manifest().to_json(), small));
}

TEST_CASE("frames are streamed and bounded, and the rest of the tree is bounded") {
  Limits small;
  small.max_frames = 0;
  CHECK_THROWS_WITH(Manifest::parse(test::sample_manifest().to_json(), small), "manifest field 'frames' has more than 0 frames");
  Limits narrow;
  narrow.max_json_values = 100;
  std::string wide = "{";
  for (int i = 0; i < 100; ++i) wide += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":0";
  CHECK_THROWS_WITH(
      Manifest::parse(test::replaced(test::sample_manifest().to_json(), "\"fingerprint\":{}", "\"fingerprint\":" + wide + "}"),
                      narrow),
      "manifest field 'fingerprint' holds more than 100 JSON values besides the entries and frames");
  // Streamed entries do not count: each is dropped from the tree once converted.
  Manifest many = test::sample_manifest();
  for (int i = 0; i < 500; ++i) many.entries.push_back({"triton/f" + std::to_string(i), EntryType::dir, 0755, 0, {}, {}, 0});
  many.frames[0].entry_count = many.entries.size();
  CHECK(Manifest::parse(many.to_json(), narrow).entries.size() == 505);
  CHECK(Limits{}.max_json_values == 65536);
  std::string text = test::sample_manifest().to_json();
  text.replace(text.find("\"frames\":["), 10, "\"frames\":[7,");
  CHECK_THROWS_WITH(Manifest::parse(text), "manifest field 'frames' is not an array of objects");
}

TEST_CASE("entries are written exactly as nlohmann's dump() writes them") {
  // to_json writes entries by hand for speed; the archive bytes must not change (golden archives, signatures).
  Manifest m = test::sample_manifest();
  m.entries[2].path = std::string("inductor/fx/q\"b\\s\b\f\n\r\t\x01\x1f\x7f") + "\xc3\xa9.py";
  m.entries[3].link_target = "a\"\\\x02.py";
  std::string json = m.to_json();
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(json);
  CHECK(doc.dump() == json);
  CHECK(doc["entries"][2]["path"] == m.entries[2].path);
  CHECK(doc["entries"][3]["target"] == m.entries[3].link_target);
}

TEST_CASE("a digest reads back only from 64 lower-case hex digits") {
  Digest d = Sha256::of("hello");
  std::string hex = to_hex(d);
  REQUIRE(digest_from_hex(hex) == d);
  CHECK_FALSE(digest_from_hex(hex.substr(1)));
  CHECK_FALSE(digest_from_hex(hex + "0"));
  for (std::size_t at : {std::size_t{0}, std::size_t{1}, std::size_t{62}, std::size_t{63}}) {
    for (char c : {'A', 'F', 'g', 'G', '/', ':', '`', '\0', '\xff'}) {
      std::string bad = hex;
      bad[at] = c;
      CHECK_FALSE(digest_from_hex(bad));
    }
  }
  CHECK(digest_from_hex(std::string(64, 'f')) == Digest{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                                        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                                        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff});
  CHECK(digest_from_hex(std::string(64, '0')) == Digest{});
}

namespace {

// parse (canonical reader for create's form, else general) and parse_general give the same manifest or the same
// refusal.
void check_readers_agree(const std::string& text, const Limits& limits = {}) {
  std::string fast, general;
  try {
    fast = Manifest::parse(text, limits).to_json();
  } catch (const IntegrityError& e) {
    fast = std::string("refused: ") + e.what();
  }
  try {
    general = Manifest::parse_general(text, limits).to_json();
  } catch (const IntegrityError& e) {
    general = std::string("refused: ") + e.what();
  }
  INFO(text.substr(0, 400));
  CHECK(fast == general);
}

// The entries array of a manifest text.
std::string_view array_of(const std::string& text) {
  std::size_t at = text.find(",\"entries\":") + 11;
  return std::string_view(text).substr(at, text.size() - 1 - at);
}

}  // namespace

TEST_CASE("the canonical entries reader takes create's form only, and reads it as the general reader does") {
  std::string json = test::sample_manifest().to_json();
  // Create's form: read, to the same entries.
  std::optional<EntryList> fast = read_canonical_entries(array_of(json), 100);
  REQUIRE(fast);
  CHECK(fast->size() == 5);
  CHECK((*fast)[2].sha256 == Sha256::of("hello"));
  CHECK((*fast)[3].link_target == "a.py");
  CHECK((*fast)[0].mode == 0755);
  CHECK(Manifest::parse(json).to_json() == json);
  CHECK_FALSE(read_canonical_entries(array_of(json), 4));  // more than the limit: the general reader refuses
  // Anything else: given up, so the general reader decides.
  const std::vector<std::pair<std::string, std::string>> others = {
      {"\"inductor/fx/a.py\"", "\"inductor/fx/\\u0061.py\""},   // an escape
      {"\"inductor/fx/a.py\"", "\"inductor/fx/\xc3\xa9.py\""},  // a byte outside printable ASCII
      {"{\"path\":\"inductor/fx/a.py\",\"type\":\"file\"", "{\"type\":\"file\",\"path\":\"inductor/fx/a.py\""},
      {",\"mode\":\"0644\"", ", \"mode\":\"0644\""},    // whitespace
      {"\"size\":5", "\"size\":05"},                    // a leading zero: not JSON
      {"\"size\":5", "\"size\":18446744073709551616"},  // past 64 bits
      {"\"size\":5", "\"size\":5.0"},
      {"\"size\":5", "\"size\":-5"},
      {"\"mode\":\"0644\"", "\"mode\":\"0648\""},
      {"\"type\":\"file\"", "\"type\":\"fifo\""},
      {"\"frame\":0}", "\"frame\":4294967296}"},
      {"\"frame\":0}", "\"frame\":0,\"extra\":1}"},
      {"\"a.py\",\"frame\"", "\"a.py\",\"size\":1,\"frame\""},  // a key a symlink does not have
  };
  for (const auto& [from, to] : others) {
    std::string text = test::replaced(json, from, to);
    CHECK_FALSE(read_canonical_entries(array_of(text), 100));
    check_readers_agree(text);
  }
  std::string upper = to_hex(Sha256::of("hello"));
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  check_readers_agree(test::replaced(json, to_hex(Sha256::of("hello")), upper));
}

TEST_CASE("parse and the general reader agree on whole manifests, accepted or refused") {
  std::string json = test::sample_manifest().to_json();
  check_readers_agree(json);
  check_readers_agree(json, Limits{.max_entries = 4});
  // Read fast, refused by the rules on entries: the same refusal, by name.
  check_readers_agree(edited_json([](Manifest& m) { m.entries[2].path = "inductor/../a.py"; }));
  check_readers_agree(edited_json([](Manifest& m) { m.entries[3].link_target = "/etc/passwd"; }));
  check_readers_agree(edited_json([](Manifest& m) { m.entries[2].mode = 04755; }));
  check_readers_agree(edited_json([](Manifest& m) { m.entries[2].frame = 1; }));
  // Around the array: a repeated key, a key named "entries" elsewhere, a truncated or extended text.
  check_readers_agree(test::replaced(json, ",\"entries\":", ",\"entries\":[],\"entries\":"));
  check_readers_agree(test::replaced(json, "\"fingerprint\":{}", "\"fingerprint\":{\"x\":1,\"entries\":[]}"));
  check_readers_agree(test::replaced(json, "\"fingerprint\":{}", "\"fingerprint\":{\"x\":{\"y\":1,\"entries\":[]}}"));
  check_readers_agree(json.substr(0, json.size() - 1));
  check_readers_agree(json.substr(0, json.size() - 2) + "]]}");
  check_readers_agree(json + " ");
  check_readers_agree(json.substr(0, json.size() - 2) + ",{}]}");
}

TEST_CASE("component totals add every component's files and bytes") {
  CHECK(totals({}).files == 0);
  CHECK(totals({}).bytes == 0);
  std::vector<Component> components{{"inductor", ComponentKind::inductor, "/a", 3, 1000},
                                    {"triton", ComponentKind::triton, "/b", 4, 20},
                                    {"ext", ComponentKind::extra, "/c", 0, 5}};
  ComponentTotals t = totals(components);
  CHECK(t.files == 7);
  CHECK(t.bytes == 1025);
}
