// The manifest is the gate for untrusted archives: every unsafe or inconsistent field is refused by name.
#include <catch2/catch.hpp>

#include "manifest/manifest.hpp"
#include "util/error.hpp"

using namespace ccpack;
using namespace ccpack::manifest;

namespace {

Manifest sample() {
  Manifest m;
  m.created_by = "ccpack test";
  m.compression = {"zstd", 1, 27};
  m.components = {{"inductor", ComponentKind::inductor, "/tmp/ind", 1, 5}, {"triton", ComponentKind::triton, "/tmp/tri", 0, 0}};
  m.entries = {{"inductor", EntryType::dir, 0755, 0, {}, {}, 0},
               {"inductor/fx", EntryType::dir, 0755, 0, {}, {}, 0},
               {"inductor/fx/a.py", EntryType::file, 0644, 5, Sha256::of("hello"), {}, 0},
               {"inductor/fx/link", EntryType::symlink, 0777, 0, {}, "a.py", 0},
               {"triton", EntryType::dir, 0700, 0, {}, {}, 0}};
  m.frames = {{0, 100, 4096, Sha256::of("frame"), 0, 5}};
  m.tar_size = 4096;
  return m;
}

std::string with(const std::function<void(Manifest&)>& edit) {
  Manifest m = sample();
  edit(m);
  return m.to_json();
}

}  // namespace

TEST_CASE("manifest JSON round-trips exactly") {
  Manifest m = sample();
  std::string json = m.to_json();
  Manifest back = Manifest::parse(json);
  CHECK(back.to_json() == json);
  REQUIRE(back.entries.size() == 5);
  CHECK(back.entries[2].sha256 == Sha256::of("hello"));
  CHECK(back.entries[3].link_target == "a.py");
  CHECK(back.entries[4].mode == 0700);
}

TEST_CASE("hostile entries are refused, naming the field") {
  CHECK_THROWS_WITH(Manifest::parse(with([](Manifest& m) { m.entries[2].path = "/etc/passwd"; })),
                    Catch::Contains("entries[2].path") && Catch::Contains("absolute"));
  CHECK_THROWS_WITH(Manifest::parse(with([](Manifest& m) { m.entries[2].path = "inductor/fx/../../x"; })),
                    Catch::Contains("entries[2].path") && Catch::Contains("unsafe"));
  CHECK_THROWS_WITH(Manifest::parse(with([](Manifest& m) { m.entries[2].path = "inductor/fx"; })),
                    Catch::Contains("entries[2].path") && Catch::Contains("duplicates"));
  CHECK_THROWS_WITH(Manifest::parse(with([](Manifest& m) { m.entries[2].mode = 04755; })),
                    Catch::Contains("entries[2].mode") && Catch::Contains("setuid"));
  CHECK_THROWS_WITH(Manifest::parse(with([](Manifest& m) { m.entries[3].link_target = "../../../etc/shadow"; })),
                    Catch::Contains("entries[3].target") && Catch::Contains("outside"));
  CHECK_THROWS_WITH(Manifest::parse(with([](Manifest& m) { m.entries[3].link_target = "/etc/shadow"; })),
                    Catch::Contains("entries[3].target"));
  CHECK_THROWS_WITH(Manifest::parse(with([](Manifest& m) { m.entries[2].path = "inductor/nofolder/a.py"; })),
                    Catch::Contains("entries[2].path") && Catch::Contains("comes before its folder"));
  CHECK_THROWS_WITH(Manifest::parse(with([](Manifest& m) { m.entries[2].path = "other/a.py"; })),
                    Catch::Contains("not under a listed component"));
  CHECK_THROWS_WITH(Manifest::parse(with([](Manifest& m) { m.entries[2].size = 1ULL << 40; })),
                    Catch::Contains("entries[2].size"));
}

TEST_CASE("inconsistent frames are refused") {
  CHECK_THROWS_WITH(Manifest::parse(with([](Manifest& m) { m.frames[0].offset = 7; })), Catch::Contains("frames[0].offset"));
  CHECK_THROWS_WITH(Manifest::parse(with([](Manifest& m) { m.frames[0].entry_count = 4; })),
                    Catch::Contains("do not cover all entries"));
  CHECK_THROWS_WITH(Manifest::parse(with([](Manifest& m) { m.tar_size = 1; })), Catch::Contains("tar_size"));
}

TEST_CASE("malformed JSON and wrong types are integrity errors") {
  CHECK_THROWS_AS(Manifest::parse("{not json"), IntegrityError);
  CHECK_THROWS_WITH(Manifest::parse("{\"format\": 2}"), Catch::Contains("format 2 is not supported"));
  std::string json = sample().to_json();
  std::string bad = json;
  bad.replace(bad.find("\"tar_size\":4096"), 15, "\"tar_size\":\"x\"");
  CHECK_THROWS_WITH(Manifest::parse(bad), Catch::Contains("tar_size"));
}

TEST_CASE("component names are checked") {
  CHECK(is_valid_component_name("torch_extensions"));
  CHECK_FALSE(is_valid_component_name(""));
  CHECK_FALSE(is_valid_component_name(".."));
  CHECK_FALSE(is_valid_component_name("a/b"));
  CHECK_THROWS_WITH(Manifest::parse(with([](Manifest& m) { m.components[1].name = "inductor"; })),
                    Catch::Contains("components[1].name"));
}
