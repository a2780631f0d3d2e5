// manifest/json_guard: untrusted JSON is refused, by JSON path, when it nests too deep or repeats a key.
#include <catch2/catch.hpp>

#include "manifest/json_guard.hpp"
#include "manifest/manifest.hpp"
#include "util/error.hpp"

using namespace ccpack;
using namespace ccpack::manifest;
using json = nlohmann::json;

namespace {

std::string nested(int levels, const char* open = "{\"a\":", const char* inner = "1", char close = '}') {
  std::string s;
  for (int i = 0; i < levels; ++i) s += open;
  s += inner;
  s.append(static_cast<std::size_t>(levels), close);
  return s;
}

}  // namespace

TEST_CASE("parse_untrusted accepts ordinary JSON") {
  json j = parse_untrusted<json>(R"({"a":[1,{"b":"c"}],"d":{}})", "test");
  CHECK(j["a"][1]["b"] == "c");
  CHECK(parse_untrusted<nlohmann::ordered_json>(R"({"z":1,"a":2})", "test").dump() == R"({"z":1,"a":2})");
}

TEST_CASE("nesting is bounded, with the path named") {
  CHECK_NOTHROW(parse_untrusted<json>(nested(kMaxJsonDepth), "test"));  // the root object is the first level
  CHECK_THROWS_AS(parse_untrusted<json>(nested(kMaxJsonDepth + 1), "test"), IntegrityError);
  CHECK_NOTHROW(parse_untrusted<json>(R"({"x":[[1]]})", "test", nullptr, 3));
  // The path names the first container past the bound.
  CHECK_THROWS_WITH(parse_untrusted<json>(R"({"x":[[[1]]]})", "test", nullptr, 3),
                    "test field 'x[0][0]' nests deeper than 3 levels");
  // 60,000 levels: refused at level 65, never built, never walked.
  CHECK_THROWS_WITH(parse_untrusted<json>(nested(60000), "manifest"), Catch::EndsWith("' nests deeper than 64 levels"));
  CHECK_THROWS_WITH(parse_untrusted<json>(nested(60000, "[", "1", ']'), "manifest"),
                    Catch::StartsWith("manifest field '[0][0][0]"));
}

TEST_CASE("a repeated key is refused anywhere, with the path named") {
  CHECK_THROWS_WITH(parse_untrusted<json>(R"({"entries":[],"entries":[]})", "manifest"),
                    "manifest field 'entries' is repeated (a JSON key appears twice in one object)");
  CHECK_THROWS_WITH(parse_untrusted<json>(R"({"e":[{"p":1},{"p":1,"p":2}]})", "manifest"),
                    "manifest field 'e[1].p' is repeated (a JSON key appears twice in one object)");
  CHECK_THROWS_WITH(parse_untrusted<json>("{\"a\\nb\":1,\"a\\nb\":2}", "manifest"),
                    "manifest field 'a\\nb' is repeated (a JSON key appears twice in one object)");
  // The same key in two different objects is fine.
  CHECK_NOTHROW(parse_untrusted<json>(R"({"a":{"k":1},"b":{"k":1},"k":[{"k":1},{"k":2}]})", "test"));
}

TEST_CASE("a repeated key is refused in an object of many keys, before and after the key list turns into a set") {
  // Keys k0..k39 (an object's first 16 are searched in order, the rest through a set), then one of them again.
  auto object_with = [](int keys, int repeat) {
    std::string s = "{\"o\":{";
    for (int i = 0; i < keys; ++i) s += "\"k" + std::to_string(i) + "\":" + std::to_string(i) + ",";
    return s + "\"k" + std::to_string(repeat) + "\":0}}";
  };
  CHECK_NOTHROW(parse_untrusted<json>(object_with(40, 40), "manifest"));
  for (int keys : {3, 16, 17, 40}) {
    for (int repeat : {0, keys / 2, keys - 1}) {
      CHECK_THROWS_WITH(
          parse_untrusted<json>(object_with(keys, repeat), "manifest"),
          "manifest field 'o.k" + std::to_string(repeat) + "' is repeated (a JSON key appears twice in one object)");
    }
  }
  // A slot reused by the next object starts empty: sibling objects of 20 keys each, same names, all accepted.
  std::string siblings = "{\"l\":[";
  for (int o = 0; o < 3; ++o) {
    siblings += o == 0 ? "{" : ",{";
    for (int i = 0; i < 20; ++i) siblings += (i == 0 ? "\"k" : ",\"k") + std::to_string(i) + "\":1";
    siblings += "}";
  }
  CHECK_NOTHROW(parse_untrusted<json>(siblings + "]}", "manifest"));
}

TEST_CASE("malformed JSON is an integrity error on one line") {
  CHECK_THROWS_WITH(parse_untrusted<json>("{\"a\":\n\x01}", "marker"), Catch::StartsWith("marker is not valid JSON: "));
  try {
    (void)parse_untrusted<json>("{\"a\":\"\xff\"}", "marker");
    FAIL("accepted invalid UTF-8");
  } catch (const IntegrityError& e) {
    CHECK(std::string(e.what()).find('\n') == std::string::npos);
  }
}

TEST_CASE("a filter sees every event after the guard and may drop values") {
  int values = 0;
  JsonFilter<json> drop_numbers = [&](int, nlohmann::detail::parse_event_t event, json& parsed) {
    if (event == nlohmann::detail::parse_event_t::value && parsed.is_number()) {
      ++values;
      return false;
    }
    return true;
  };
  json j = parse_untrusted<json>(R"({"a":[1,2,"s"],"b":"t"})", "test", drop_numbers);
  CHECK(values == 2);
  CHECK(j.dump() == R"({"a":["s"],"b":"t"})");
}

TEST_CASE("a number too large for a double is refused as invalid JSON, not thrown as nlohmann's out_of_range") {
  // Found by fuzz_manifest through Manifest::parse_top_level: "bytes": 9e41690... escaped as out_of_range.406.
  CHECK_THROWS_AS(ccpack::manifest::parse_untrusted<nlohmann::json>(R"({"bytes": 9e416})", "manifest"), ccpack::IntegrityError);
  CHECK_THROWS_AS(ccpack::manifest::Manifest::parse_top_level(R"({"components": [], "bytes": 9e416})"), ccpack::IntegrityError);
}
