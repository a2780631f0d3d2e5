// manifest/manifest_parse.cpp: the readers' own refusals (a field of an entry, a frame, a component or the top level
// that is missing, of the wrong type or out of range; the bounds of Limits), each message exact and the same from
// Manifest::parse (create's form read by the canonical reader, else the general one) and Manifest::parse_general.
// The rules a parsed manifest must meet are manifest_validate.cpp's (test_manifest_validate.cpp).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "manifest/manifest.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"

using namespace ccpack;
using namespace ccpack::manifest;

namespace {

const std::string kHelloSha = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";

// The refusal of `text` by both readers; "accepted" when one accepts, "the readers disagree" when they differ.
std::string parse_refusal(const std::string& text, const Limits& limits = {}) {
  std::string fast = test::integrity_error([&] { (void)Manifest::parse(text, limits); });
  std::string general = test::integrity_error([&] { (void)Manifest::parse_general(text, limits); });
  if (fast != general) return "the readers disagree: '" + fast + "' and '" + general + "'";
  return fast == "(no IntegrityError)" ? "accepted" : fast;
}

// sample_manifest()'s JSON with the first `from` replaced by `to`.
std::string sample_with(const std::string& from, const std::string& to) {
  return test::replaced(test::sample_manifest().to_json(), from, to);
}

}  // namespace

TEST_CASE("manifest parse: create's form and any other order read to the same manifest") {
  std::string json = test::sample_manifest().to_json();
  CHECK(json.ends_with(R"({"path":"triton","type":"dir","mode":"0700","frame":0}]})"));
  CHECK(Manifest::parse(json).to_json() == json);
  CHECK(Manifest::parse_general(json).to_json() == json);
  // The entries first: not create's form, so the general reader alone reads it.
  std::size_t at = json.find(",\"entries\":");
  std::string entries = json.substr(at + 1, json.size() - 2 - at);
  std::string moved = "{" + entries + "," + json.substr(1, at - 1) + "}";
  CHECK(moved.starts_with(R"({"entries":[{"path":"inductor","type":"dir")"));
  CHECK(Manifest::parse(moved).to_json() == json);
}

TEST_CASE("manifest parse: an entry's fields are refused by name") {
  CHECK(parse_refusal(sample_with(R"("type":"file")", R"("type":"fifo")")) ==
        "manifest field 'entries[2].type' has unknown entry type 'fifo'");
  CHECK(parse_refusal(sample_with(R"("mode":"0644")", R"("mode":"644")")) ==
        "manifest field 'entries[2].mode' is not a 4-digit octal mode");
  CHECK(parse_refusal(sample_with(R"("mode":"0644")", R"("mode":"0684")")) ==
        "manifest field 'entries[2].mode' is not a 4-digit octal mode");
  CHECK(parse_refusal(sample_with(R"("mode":"0644")", R"("mode":420)")) == "manifest field 'entries[2].mode' is not a string");
  CHECK(parse_refusal(sample_with(R"("size":5)", R"("size":-5)")) ==
        "manifest field 'entries[2].size' is not a non-negative integer");
  CHECK(parse_refusal(sample_with(R"("sha256":")" + kHelloSha, R"("sha256":"2CF24DBA)" + kHelloSha.substr(8))) ==
        "manifest field 'entries[2].sha256' is not a lower-case SHA-256 hex digest");
  CHECK(parse_refusal(sample_with(R"("target":"a.py")", R"("link":"a.py")")) == "manifest field 'entries[3].target' is missing");
  CHECK(parse_refusal(sample_with(R"({"path":"inductor",)", R"({"name":"inductor",)")) ==
        "manifest field 'entries[0].path' is missing");
  CHECK(parse_refusal(sample_with(R"("mode":"0755","frame":0})", R"("mode":"0755","frame":4294967296})")) ==
        "manifest field 'entries[0].frame' is out of range");
  CHECK(parse_refusal(sample_with(R"("entries":[{)", R"("entries":[7,{)")) ==
        "manifest field 'entries' is not an array of objects");
  CHECK(parse_refusal(sample_with(R"("entries":[)", R"("entries":{"a":[)") + "}") ==
        "manifest field 'entries' is not an array of objects");
}

TEST_CASE("manifest parse: a frame's, a component's and the top level's fields are refused by name") {
  CHECK(parse_refusal(sample_with(R"("first_entry":0)", R"("first_entry":"0")")) ==
        "manifest field 'frames[0].first_entry' is not a non-negative integer");
  CHECK(parse_refusal(sample_with(R"("raw_size":4096,)", "")) == "manifest field 'frames[0].raw_size' is missing");
  CHECK(parse_refusal(sample_with(R"("frames":[{)", R"("frames":["x",{)")) ==
        "manifest field 'frames' is not an array of objects");
  CHECK(parse_refusal(sample_with(R"("kind":"triton")", R"("kind":"cuda")")) ==
        "manifest field 'components[1].kind' has unknown component kind 'cuda'");
  CHECK(parse_refusal(sample_with(R"("files":0,)", "")) == "manifest field 'components[1].files' is missing");
  nlohmann::ordered_json tree = nlohmann::ordered_json::parse(test::sample_manifest().to_json());
  tree["components"] = {{"inductor", 1}};
  CHECK(parse_refusal(tree.dump()) == "manifest field 'components' is not an array");
  CHECK(parse_refusal(sample_with(R"("format":1)", R"("format":2)")) ==
        "manifest format 2 is not supported by this ccpack (it reads format 1)");
  CHECK(parse_refusal(sample_with(R"("format":1)", R"("format":"1")")) == "manifest field 'format' is not an integer");
  CHECK(parse_refusal(sample_with(R"("fingerprint":{})", R"("fingerprint":[])")) ==
        "manifest field 'fingerprint' is not an object");
  CHECK(parse_refusal(sample_with(R"("created_by":"ccpack test",)", "")) == "manifest field 'manifest.created_by' is missing");
  CHECK(parse_refusal(sample_with(R"("level":1)", R"("level":"1")")) ==
        "manifest has a field of the wrong type: [json.exception.type_error.302] type must be number, but is string");
  CHECK(parse_refusal("[]") == "manifest field '(root)' is not an object");
}

TEST_CASE("manifest parse: the bounds of Limits, each named") {
  std::string json = test::sample_manifest().to_json();
  Limits four;
  four.max_entries = 4;
  CHECK(parse_refusal(json, four) == "manifest field 'entries' has more than 4 entries");
  four.max_entries = 5;
  CHECK(parse_refusal(json, four) == "accepted");
  Limits no_frames;
  no_frames.max_frames = 0;
  CHECK(parse_refusal(json, no_frames) == "manifest field 'frames' has more than 0 frames");
  // The tree outside the entries and frames: root, format, created_by, compression and its 3, fingerprint, the
  // components array: 9 values; the first component's object is the 10th, its name the 11th. Then two components
  // of 5 members (21), tar_size and the frames array (23); the frame being read counts while it is read (its object
  // and 6 members: 30), then the entries array (24) and a file entry being read (its object and 6 members: 31).
  Limits ten;
  ten.max_json_values = 10;
  CHECK(parse_refusal(json, ten) == "manifest field 'components' holds more than 10 JSON values besides the entries and frames");
  Limits in_frame;
  in_frame.max_json_values = 29;
  CHECK(parse_refusal(json, in_frame) == "manifest field 'frames' holds more than 29 JSON values besides the entries and frames");
  // The canonical reader builds no tree for create's entries, so only the general reader counts an entry being read.
  Limits in_entry;
  in_entry.max_json_values = 30;
  CHECK(test::integrity_error([&] { (void)Manifest::parse_general(json, in_entry); }) ==
        "manifest field 'entries' holds more than 30 JSON values besides the entries and frames");
  CHECK(Manifest::parse(json, in_entry).to_json() == json);
  Limits all;
  all.max_json_values = 31;
  CHECK(parse_refusal(json, all) == "accepted");
}

TEST_CASE("manifest parse: from_top_level_tree reads the top level alone") {
  nlohmann::json tree = nlohmann::json::parse(test::sample_manifest().to_json());
  Manifest m = Manifest::from_top_level_tree(tree);
  CHECK(m.created_by == "ccpack test");
  CHECK(m.compression.level == 1);
  CHECK(m.compression.window_log == 27);
  CHECK(m.tar_size == 4096);
  REQUIRE(m.components.size() == 2);
  CHECK(m.components[0].source == "/tmp/ind");
  CHECK(m.components[1].kind == ComponentKind::triton);
  CHECK(m.entries.size() == 0);
  CHECK(m.frames.empty());
  tree["components"][0]["kind"] = "extra";
  CHECK(test::integrity_error([&] { (void)Manifest::from_top_level_tree(tree); }) ==
        "manifest field 'components[0].name' 'inductor' does not match its kind");
}
