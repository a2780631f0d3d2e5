// The common form of Triton's group files, read without a JSON tree: exactly Triton's form is read, anything else is
// left to the full parser, and what is written is what nlohmann's dump() writes for the same document.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "unpack/group_file.hpp"

using namespace ccpack;
using ojson = nlohmann::ordered_json;

namespace {

// The members read, as "key=value" lines; "(other form)" when the text is left to the full parser.
std::string members_of(std::string_view text) {
  std::optional<std::vector<unpack::GroupMember>> m = unpack::read_simple_group(text);
  if (!m) return "(other form)";
  std::string out;
  for (const unpack::GroupMember& g : *m) out += std::string(g.key) + "=" + std::string(g.value) + "\n";
  return out;
}

}  // namespace

TEST_CASE("group files as Triton writes them are read member by member, in order") {
  // Python's json.dumps: ", " and ": " between tokens.
  std::string triton = R"({"child_paths": {"k.source": "/b/tri/H/k.source", "k.cubin": "/b/tri/H/k.cubin"}})";
  CHECK(members_of(triton) == "k.source=/b/tri/H/k.source\nk.cubin=/b/tri/H/k.cubin\n");
  CHECK(members_of(" \t\r\n{ \"child_paths\" :\n{ } }\n") == "");
  CHECK(members_of(R"({"child_paths":{"a b":" ~!#$%&'()*+,-./:;<=>?@[]^_`{|}"}})") == "a b= ~!#$%&'()*+,-./:;<=>?@[]^_`{|}\n");
}

TEST_CASE("any other text is left to the full parser") {
  for (std::string_view text : {
           R"({"child_paths": {"k": "/a"}, "other": 1})",   // another top-level key
           R"({"other": 1, "child_paths": {"k": "/a"}})",   //
           R"({"child_paths": {"k": "/a\/b"}})",            // an escape
           R"({"child_paths": {"k\u0041": "/a"}})",         //
           "{\"child_paths\": {\"k\": \"/caf\xc3\xa9\"}}",  // past ASCII
           "{\"child_paths\": {\"k\": \"/a\x7f\"}}",        // DEL
           "{\"child_paths\": {\"k\": \"/a\tb\"}}",         // a control byte inside a string
           R"({"child_paths": {"k": "/a", "k": "/b"}})",    // a key twice
           R"({"child_paths": {"k": 1}})",                  // not a string
           R"({"child_paths": {"k": null}})",               //
           R"({"child_paths": ["/a"]})",                    // not an object
           R"({"child_paths": {"k": "/a",}})",              // a trailing comma
           R"({"child_paths": {"k": "/a"}} x)",             // text after the document
           R"({"child_paths": {"k": "/a"}}})",              //
           R"({"child_paths": {"k": "/a"})",                // cut short
           R"({"child_paths": {"k": "/a)",                  //
           "\xef\xbb\xbf{\"child_paths\": {}}",             // a byte-order mark
           "{\"child_paths\": {}}\f",                       // not JSON whitespace
           "",
       }) {
    INFO(text);
    CHECK(members_of(text) == "(other form)");
  }
  // Past 64 members the full parser decides (Triton writes one per file of a kernel folder).
  auto many = [](int n) {
    std::string s = R"({"child_paths": {)";
    for (int i = 0; i < n; ++i) s += (i != 0 ? ", \"" : "\"") + std::to_string(i) + "\": \"/p\"";
    return s + "}}";
  };
  CHECK(members_of(many(64)) != "(other form)");
  CHECK(members_of(many(65)) == "(other form)");
}

TEST_CASE("a group file is written as nlohmann's dump() writes the same document") {
  std::string text =
      R"({"child_paths": {"k.source": "/b/H/k.source", "libdevice": "/usr/lib/libdevice.10.bc", "k.cubin": "/b/H/k.cubin"}})";
  std::optional<std::vector<unpack::GroupMember>> m = unpack::read_simple_group(text);
  REQUIRE(m);
  ojson doc = ojson::parse(text);
  CHECK(unpack::write_group(*m) == doc.dump());
  // Replaced values may hold anything UTF-8: escaped as nlohmann escapes them.
  std::string odd = "/p\xc3\xa9\"q\\r\n\x01/k.cubin";
  (*m)[2].value = odd;
  (*m)[2].replaced = true;
  (*m)[0].value = "/pod/H/k.source";
  (*m)[0].replaced = true;
  doc["child_paths"]["k.cubin"] = odd;
  doc["child_paths"]["k.source"] = "/pod/H/k.source";
  CHECK(unpack::write_group(*m) == doc.dump());
  CHECK(unpack::write_group({}) == ojson::parse(R"({"child_paths": {}})").dump());
}
