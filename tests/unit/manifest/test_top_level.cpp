// Stage 1 of reading a manifest (Manifest::parse_top_level) and the no-op restore it makes cheap: it reads what
// the full parse reads outside frames and entries, still refuses what the guard refuses, never looks inside the
// entries, and restore runs the full parse exactly when it writes.
#include <catch2/catch.hpp>

#include "manifest/manifest.hpp"
#include "manifest/top_level.hpp"
#include "pack/packer.hpp"
#include "unit/support.hpp"
#include "unpack/archive.hpp"
#include "unpack/installer.hpp"
#include "util/error.hpp"

using namespace ccpack;
using namespace ccpack::manifest;
namespace fs = std::filesystem;

namespace {

Manifest top_level_sample() {
  Manifest m;
  m.created_by = "ccpack test";
  m.compression = {"zstd", 1, 27};
  m.fingerprint.set(field::torch_version, "2.9.0", "test");
  m.fingerprint.set(field::gpu_arch, "sm_90", "test");
  m.components = {{"inductor", ComponentKind::inductor, "/tmp/ind", 1, 5}, {"triton", ComponentKind::triton, "/tmp/tri", 0, 0}};
  m.entries = {{"inductor", EntryType::dir, 0755, 0, {}, {}, 0},
               {"inductor/a \"q\" \\ ].py", EntryType::file, 0644, 5, Sha256::of("hello"), {}, 0},
               {"triton", EntryType::dir, 0700, 0, {}, {}, 0}};
  m.frames = {{0, 100, 4096, Sha256::of("frame"), 0, 3}};
  m.tar_size = 4096;
  return m;
}

// A kernel file and a Triton folder in t/ind and t/tri, packed into t/a.ccpack (6 entries).
void pack_sample(const test::ScratchDir& t) {
  test::write_file(t / "ind/23/c23x.py", "print('kernel')\n");
  test::write_file(t / "tri/K/k.json", "{}");
  (void)pack::create_archive(test::dirs_of(t / "ind", t / "tri"), t / "a.ccpack", pack::PackOptions{});
}

// What a scan fed `pieces` concludes: the top-level fields it read, or its error message.
std::string outcome(const std::vector<std::string_view>& pieces, const std::string& whole) {
  TopLevelScan scan;
  for (std::string_view p : pieces) scan.feed(p);
  try {
    Manifest m = scan.finish([&] { return whole; });
    return "ok " + m.to_json();
  } catch (const IntegrityError& e) {
    return std::string("error ") + e.what();
  }
}

}  // namespace

TEST_CASE("the top-level scan concludes the same wherever the text is cut into pieces") {
  std::string json = top_level_sample().to_json();
  std::string body = json.substr(0, json.size() - 1);  // without the final '}'
  // Runs of backslashes before quotes, inside a member that is read and inside one that is stepped over.
  std::string tricky = test::replaced(test::replaced(json, "2.9.0", R"(2.9 \\\" \\\\\" \\\\)"), ".py", R"(\\\\\".py)");
  const std::vector<std::string> texts = {json,
                                          tricky,
                                          test::replaced(json, "\"tar_size\"", "\"tar\\u005fsize\""),
                                          body + ",\"tar_size\":1}",
                                          test::replaced(json, "\"entries\":[", "\"entries\":[}"),
                                          test::replaced(json, "\"entries\":[", "\"entries\":[" + std::string(70, '[')),
                                          json.substr(0, json.find(".py")),
                                          json + "x",
                                          "[]",
                                          "",
                                          " { } ",
                                          body + ",}",
                                          body + ",\"x\" 1}",
                                          test::replaced(json, "\"format\":1", "\"format\":2")};
  for (const std::string& text : texts) {
    INFO(text);
    const std::string whole = outcome({text}, text);
    if (text == json || text == tricky) CHECK(whole.starts_with("ok "));
    for (std::size_t cut = 0; cut <= text.size(); ++cut) {
      INFO("cut at " << cut);
      std::string_view v(text);
      REQUIRE(outcome({v.substr(0, cut), v.substr(cut)}, text) == whole);
    }
    std::vector<std::string_view> bytes;
    for (std::size_t i = 0; i < text.size(); ++i) bytes.push_back(std::string_view(text).substr(i, 1));
    CHECK(outcome(bytes, text) == whole);
  }
  CHECK(Manifest::parse_top_level(tricky).fingerprint == Manifest::parse(tricky).fingerprint);
  CHECK(Manifest::parse(tricky).fingerprint.get(field::torch_version)->value == R"(2.9 \" \\" \\)");
}

TEST_CASE("the top-level parse reads what the full parse reads, and leaves frames and entries out") {
  std::string json = top_level_sample().to_json();
  Manifest full = Manifest::parse(json);
  Manifest top = Manifest::parse_top_level(json);
  CHECK(top.created_by == full.created_by);
  CHECK(top.fingerprint == full.fingerprint);
  CHECK(top.fingerprint.get(field::gpu_arch)->value == "sm_90");
  CHECK(top.compression.window_log == 27);
  CHECK(top.tar_size == 4096);
  REQUIRE(top.components.size() == 2);
  CHECK(top.components[1].name == "triton");
  CHECK(top.components[0].source == "/tmp/ind");
  CHECK(top.entries.empty());
  CHECK(top.frames.empty());
  // An escaped key is the key it decodes to, as for the full parse.
  CHECK(Manifest::parse_top_level(test::replaced(json, "\"tar_size\"", "\"tar\\u005fsize\"")).tar_size == 4096);
}

TEST_CASE("the top-level parse does not parse or validate the entries") {
  std::string json = test::replaced(top_level_sample().to_json(), "\"path\":\"inductor\"", "\"path\":\"/etc/passwd\"");
  CHECK_THROWS_WITH(Manifest::parse(json), Catch::Contains("entries[0].path' is an absolute path"));
  CHECK(Manifest::parse_top_level(json).components.size() == 2);
}

TEST_CASE("the top-level parse refuses repeats, deep nesting and broken structure, also inside skipped arrays") {
  std::string json = top_level_sample().to_json();
  std::string body = json.substr(0, json.size() - 1);  // without the final '}'
  CHECK_THROWS_WITH(Manifest::parse_top_level(body + ",\"tar_size\":1}"),
                    "manifest field 'tar_size' is repeated (a JSON key appears twice in one object)");
  CHECK_THROWS_WITH(Manifest::parse_top_level(body + ",\"tar\\u005fsize\":1}"), Catch::Contains("field 'tar_size' is repeated"));
  CHECK_THROWS_WITH(Manifest::parse_top_level(body + ",\"entries\":[]}"), Catch::Contains("field 'entries' is repeated"));
  CHECK_THROWS_WITH(
      Manifest::parse_top_level(test::replaced(json, "{\"value\":\"2.9.0\"", "{\"value\":\"1\",\"value\":\"2.9.0\"")),
      Catch::Contains("field 'fields.torch.version.value' is repeated"));
  std::string deep = std::string(70, '[') + std::string(70, ']');
  CHECK_THROWS_WITH(Manifest::parse_top_level(test::replaced(json, "\"entries\":[", "\"entries\":[" + deep + ",")),
                    Catch::Contains("manifest field 'entries[0][0]") && Catch::Contains("' nests deeper than 64 levels"));
  CHECK_THROWS_WITH(Manifest::parse_top_level(test::replaced(json, "\"entries\":[", "\"entries\":[}")),
                    Catch::Contains("manifest is not valid JSON: [json.exception.parse_error.101]"));
  CHECK_THROWS_WITH(Manifest::parse_top_level(json.substr(0, json.find(".py"))), Catch::Contains("manifest is not valid JSON"));
  CHECK_THROWS_WITH(Manifest::parse_top_level(json + "x"), Catch::Contains("manifest is not valid JSON"));
  CHECK_THROWS_WITH(Manifest::parse_top_level("[]"), "manifest field '(root)' is not an object");
  CHECK_THROWS_WITH(Manifest::parse_top_level("#" + json.substr(1)), Catch::Contains("manifest is not valid JSON"));
  CHECK_THROWS_WITH(Manifest::parse_top_level(test::replaced(json, "\"format\":1", "\"format\":2")),
                    Catch::Contains("manifest format 2 is not supported"));
  CHECK_THROWS_WITH(Manifest::parse_top_level(test::replaced(json, "\"name\":\"triton\"", "\"name\":\"../x\"")),
                    Catch::Contains("components[1].name' is not a valid component name"));
  Limits few;
  few.max_json_values = 10;
  CHECK_THROWS_WITH(Manifest::parse_top_level(json, few), Catch::Contains("JSON values besides the entries and frames"));
}

TEST_CASE("restore parses the entries only when it writes, and a no-op reads the top level only") {
  test::ScratchDir t;
  pack_sample(t);
  auto out = test::dirs_of(t / "out/ind", t / "out/tri");

  unpack::Archive first = unpack::Archive::open(t / "a.ccpack", {}, unpack::ManifestDepth::top_level);
  CHECK(first.depth() == unpack::ManifestDepth::top_level);
  CHECK(first.manifest.entries.empty());
  CHECK_FALSE(unpack::install(first, out, {}).noop());
  CHECK(first.depth() == unpack::ManifestDepth::full);
  CHECK(first.manifest.entries.size() == 6);  // inductor, inductor/23, its file, triton, triton/K, its file
  CHECK(test::slurp(t / "out/ind/23/c23x.py") == "print('kernel')\n");

  unpack::Archive again = unpack::Archive::open(t / "a.ccpack", {}, unpack::ManifestDepth::top_level);
  unpack::InstallReport r = unpack::install(again, out, {});
  CHECK(r.noop());
  CHECK(r.components[0].action == unpack::Action::already);
  CHECK(again.depth() == unpack::ManifestDepth::top_level);
  CHECK(again.manifest.entries.empty());

  // One folder without its marker: that component is restored, so the whole manifest is read first.
  fs::remove(t / "out/tri/.ccpack-marker.json");
  unpack::Archive third = unpack::Archive::open(t / "a.ccpack", {}, unpack::ManifestDepth::top_level);
  r = unpack::install(third, out, {});
  CHECK(r.components[0].action == unpack::Action::already);
  CHECK(r.components[1].action == unpack::Action::restore);
  CHECK(third.depth() == unpack::ManifestDepth::full);
}

TEST_CASE("a streamed stage 1 reads what a kept one reads, and stage 2 reads the text again, checked") {
  test::ScratchDir t;
  pack_sample(t);
  unpack::Archive kept = unpack::Archive::open(t / "a.ccpack", {}, unpack::ManifestDepth::top_level);
  unpack::Archive streamed =
      unpack::Archive::open(t / "a.ccpack", {}, unpack::ManifestDepth::top_level, unpack::ManifestText::stream);
  CHECK(streamed.text_streamed());
  CHECK(streamed.header.manifest.empty());
  CHECK(streamed.manifest_digest() == kept.manifest_digest());
  CHECK(streamed.manifest.to_json() == kept.manifest.to_json());
  streamed.load_full();
  kept.load_full();
  CHECK_FALSE(streamed.text_streamed());
  CHECK(streamed.header.manifest == kept.header.manifest);
  CHECK(streamed.manifest.to_json() == kept.manifest.to_json());
  CHECK(streamed.manifest.entries.size() == 6);

  // The file rewritten in place between the stages: stage 2 must not parse bytes that stage 1 did not check.
  test::write_file(t / "ind/23/c23x.py", "print('other kernel')\n");
  (void)pack::create_archive(test::dirs_of(t / "ind", t / "tri"), t / "b.ccpack", pack::PackOptions{});
  unpack::Archive first =
      unpack::Archive::open(t / "a.ccpack", {}, unpack::ManifestDepth::top_level, unpack::ManifestText::stream);
  test::write_file(t / "a.ccpack", test::slurp(t / "b.ccpack"));  // same inode, new bytes
  CHECK_THROWS_WITH(first.load_full(), Catch::Contains("changed while it was read: its manifest is not the one checked"));
}

TEST_CASE("stage 2 refuses a manifest whose top-level fields stage 1 read differently") {
  test::ScratchDir t;
  pack_sample(t);
  unpack::Archive a = unpack::Archive::open(t / "a.ccpack", {}, unpack::ManifestDepth::top_level);
  a.manifest.tar_size += 1;  // what a stage-1 scan that misread the text would leave; restore planned with it
  CHECK_THROWS_WITH(a.load_full(),
                    "'" + (t / "a.ccpack").string() + "': manifest top-level fields read differently by the two stages");
}

TEST_CASE("a streamed stage 1 runs the gate before any parse and refuses bad structure in the same words") {
  test::ScratchDir t;
  test::write_file(t / "ind/a.py", "print(1)\n");
  test::write_file(t / "tri/K/k.json", "{}");
  (void)pack::create_archive(test::dirs_of(t / "ind", t / "tri"), t / "a.ccpack", pack::PackOptions{});
  unpack::Archive a = unpack::Archive::open(t / "a.ccpack");
  for (const std::string& bad : {std::string("#"), std::string("{\"entries\":[}")}) {
    INFO(bad);
    ArchiveHeader h = a.header;
    h.manifest.replace(0, bad.size(), bad);
    test::write_file(t / "b.ccpack", encode_header(h) + test::slurp(t / "a.ccpack").substr(a.header.header_size));
    int calls = 0;
    auto gate = [&](const fs::path&, const ArchiveHeader&, const std::vector<Signature>&) {
      ++calls;
      throw IntegrityError("refused by the gate");
    };
    auto open = [&](unpack::ManifestText text, const unpack::Archive::HeaderGate& g) {
      try {
        (void)unpack::Archive::open(t / "b.ccpack", g, unpack::ManifestDepth::top_level, text);
        return std::string("opened");
      } catch (const IntegrityError& e) {
        return std::string(e.what());
      }
    };
    CHECK(open(unpack::ManifestText::stream, gate) == "refused by the gate");
    CHECK(calls == 1);
    std::string words = open(unpack::ManifestText::keep, {});
    CHECK_THAT(words, Catch::Contains("manifest is not valid JSON"));
    CHECK(open(unpack::ManifestText::stream, {}) == words);
  }
}

TEST_CASE("a restore from a streamed stage 1 is a no-op without the text, and writes after reading it") {
  test::ScratchDir t;
  pack_sample(t);
  auto out = test::dirs_of(t / "out/ind", t / "out/tri");
  auto open = [&] {
    return unpack::Archive::open(t / "a.ccpack", {}, unpack::ManifestDepth::top_level, unpack::ManifestText::stream);
  };
  unpack::Archive first = open();
  CHECK_FALSE(unpack::install(first, out, {}).noop());
  CHECK(first.depth() == unpack::ManifestDepth::full);
  CHECK(test::slurp(t / "out/ind/23/c23x.py") == "print('kernel')\n");
  unpack::Archive again = open();
  CHECK(unpack::install(again, out, {}).noop());
  CHECK(again.header.manifest.empty());
  CHECK(again.depth() == unpack::ManifestDepth::top_level);
}
