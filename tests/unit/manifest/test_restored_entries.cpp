// manifest/restored_entries.cpp: the list a restore writes beside its marker, byte for byte (one component's files
// and links in manifest order, folders left out, rewritable files marked "g", "\" and LF escaped), read back the
// same, and every malformed, truncated or foreign list read as absent.
#include <fcntl.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "manifest/manifest.hpp"
#include "manifest/reserved_names.hpp"
#include "manifest/restored_entries.hpp"
#include "unit/support.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"

using namespace ccpack;
using namespace ccpack::manifest;

namespace {

const std::string kSha(64, 'c');

Manifest restored_sample() {
  Manifest m;
  m.components = {{"inductor", ComponentKind::inductor, "/src/i", 2, 8}, {"triton", ComponentKind::triton, "/src/t", 1, 1}};
  m.entries = std::vector<Entry>{test::dir_entry("inductor"),
                                 test::file_entry("inductor/a.py", "a = 1\n"),
                                 test::dir_entry("inductor/sub"),
                                 test::file_entry("inductor/sub/we\\ird\nname", "xy"),
                                 test::link_entry("inductor/link", "a.py"),
                                 test::dir_entry("triton"),
                                 test::file_entry("triton/k", "k")};
  return m;
}

}  // namespace

TEST_CASE("restored entries: written byte for byte for one component, read back the same") {
  test::ScratchDir t;
  UniqueFd dir(::open(t.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  REQUIRE(dir.valid());
  write_restored_entries(dir.get(), restored_sample(), "inductor", kSha, [](std::size_t i) { return i == 3; });
  CHECK(test::slurp(t / std::string(kEntriesName)) == "ccpack-entries 1 " + kSha + " 3\n" + "f 6 " +
                                                          to_hex(Sha256::of("a = 1\n")) + " a.py\n" + "g 2 " +
                                                          to_hex(Sha256::of("xy")) + " sub/we\\\\ird\\nname\n" +
                                                          "l link\n"
                                                          "end\n");
  std::optional<RestoredEntries> list = RestoredEntries::read(t.path(), kSha);
  REQUIRE(list);
  CHECK(list->manifest_sha256 == kSha);
  REQUIRE(list->entries.size() == 3);
  const RestoredEntry& a = list->entries.at("a.py");
  CHECK(a.type == EntryType::file);
  CHECK(a.size == 6);
  CHECK(a.sha256 == Sha256::of("a = 1\n"));
  CHECK_FALSE(a.rewritable);
  CHECK(list->entries.at("sub/we\\ird\nname").rewritable);
  CHECK(list->entries.at("link").type == EntryType::symlink);
  // Never over an existing list.
  CHECK_THROWS_WITH(write_restored_entries(dir.get(), restored_sample(), "triton", kSha),
                    "cannot write the restored entry list .ccpack-entries: File exists");
}

TEST_CASE("restored entries: malformed, truncated, over the bounds or for another manifest read as absent") {
  test::ScratchDir t;
  const std::string good = "ccpack-entries 1 " + kSha + " 2\nf 1 " + std::string(64, 'a') + " x\nl y\nend\n";
  auto reads = [&](const std::string& text, const Limits& limits = {}) {
    test::write_file(t / std::string(kEntriesName), text);
    return RestoredEntries::read(t.path(), kSha, limits).has_value();
  };
  CHECK(reads(good));
  CHECK_FALSE(RestoredEntries::read(t.path(), std::string(64, 'd')));  // another manifest's list
  CHECK_FALSE(reads(good.substr(0, good.size() - 4)));                 // no "end"
  CHECK_FALSE(reads(good + "extra\n"));
  CHECK_FALSE(reads("ccpack-entries 2 " + kSha + " 2\n" + good.substr(good.find('\n') + 1)));        // another version
  CHECK_FALSE(reads("ccpack-entries 1 " + kSha + " 3\n" + good.substr(good.find('\n') + 1)));        // count too high
  CHECK_FALSE(reads("ccpack-entries 1 " + kSha + " 1\n" + good.substr(good.find('\n') + 1)));        // count too low
  CHECK_FALSE(reads("ccpack-entries 1 " + kSha + " 1\nf 1 " + std::string(63, 'a') + " x\nend\n"));  // short digest
  CHECK_FALSE(reads("ccpack-entries 1 " + kSha + " 1\nf -1 " + std::string(64, 'a') + " x\nend\n"));
  CHECK_FALSE(reads("ccpack-entries 1 " + kSha + " 1\nd x\nend\n"));       // no folders
  CHECK_FALSE(reads("ccpack-entries 1 " + kSha + " 2\nl x\nl x\nend\n"));  // twice the same
  CHECK_FALSE(reads("ccpack-entries 1 " + kSha + " 1\nl bad\\tescape\nend\n"));
  Limits few;
  few.max_entries = 1;
  CHECK_FALSE(reads(good, few));
  Limits short_paths;
  short_paths.max_path_length = 0;
  CHECK_FALSE(reads(good, short_paths));
  std::filesystem::remove(t / std::string(kEntriesName));
  CHECK_FALSE(RestoredEntries::read(t.path(), kSha));
}
