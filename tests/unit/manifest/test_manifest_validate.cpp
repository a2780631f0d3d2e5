// manifest/manifest_validate.cpp's Manifest::validate on manifests built in memory (no JSON): a valid one passes,
// and each rule's refusal is an IntegrityError whose whole message names the field: component names, entry paths,
// modes, sizes, component roots, link targets, the folder order, and the frames' coverage of the entries.
#include <catch2/catch.hpp>
#include <functional>
#include <string>

#include "manifest/manifest.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"

using namespace ccpack;
using namespace ccpack::manifest;

namespace {

// Two components, a folder tree with a file and a symlink, one frame over all five entries.
Manifest valid_manifest() {
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

// The IntegrityError that validate() throws for valid_manifest() after `edit`.
std::string refusal(const std::function<void(Manifest&)>& edit, const Limits& limits = {}) {
  Manifest m = valid_manifest();
  edit(m);
  return test::integrity_error([&] { m.validate(limits); });
}

}  // namespace

TEST_CASE("Manifest::validate accepts a valid manifest", "[manifest][validate]") {
  CHECK(refusal([](Manifest&) {}) == "(no IntegrityError)");
}

TEST_CASE("Manifest::validate refuses bad components by name", "[manifest][validate]") {
  CHECK(refusal([](Manifest& m) { m.components[1].name = "inductor"; m.components[1].kind = ComponentKind::inductor; }) ==
        "manifest field 'components[1].name' repeats 'inductor'");
  CHECK(refusal([](Manifest& m) { m.components[1].name = "a/b"; }) ==
        "manifest field 'components[1].name' is not a valid component name: 'a/b'");
  CHECK(refusal([](Manifest& m) { m.components[0].kind = ComponentKind::extra; }) ==
        "manifest field 'components[0].name' 'inductor' does not match its kind");
}

TEST_CASE("Manifest::validate refuses unsafe entry paths and modes by name", "[manifest][validate]") {
  CHECK(refusal([](Manifest& m) { m.entries[2].path = "/etc/passwd"; }) ==
        "manifest field 'entries[2].path' is an absolute path: '/etc/passwd'");
  CHECK(refusal([](Manifest& m) { m.entries[2].path = "inductor/fx/../a.py"; }) ==
        "manifest field 'entries[2].path' has an unsafe component in 'inductor/fx/../a.py'");
  CHECK(refusal([](Manifest& m) { m.entries[2].path = "other/a.py"; }) ==
        "manifest field 'entries[2].path' 'other/a.py' is not under a listed component");
  CHECK(refusal([](Manifest& m) { m.entries[2].mode = 04644; }) ==
        "manifest field 'entries[2].mode' has setuid, setgid or sticky bits on 'inductor/fx/a.py'");
  CHECK(refusal([](Manifest& m) { m.entries[2].path = "inductor/fx"; }) ==
        "manifest field 'entries[2].path' duplicates 'inductor/fx'");
  CHECK(refusal([](Manifest& m) { m.entries[2].path = "inductor/gx/a.py"; }) ==
        "manifest field 'entries[2].path' 'inductor/gx/a.py' comes before its folder 'inductor/gx'");
}

TEST_CASE("Manifest::validate bounds file sizes and the entry count by the limits", "[manifest][validate]") {
  Limits small;
  small.max_file_size = 4;
  CHECK(refusal([](Manifest&) {}, small) == "manifest field 'entries[2].size' of 'inductor/fx/a.py' exceeds the limit");
  Limits total;
  total.max_total_size = 4;
  CHECK(refusal([](Manifest&) {}, total) == "manifest field 'entries[2].size' makes the archive exceed the total size limit");
  Limits few;
  few.max_entries = 4;
  CHECK(refusal([](Manifest&) {}, few) == "manifest field 'entries' has more than 4 entries");
}

TEST_CASE("Manifest::validate refuses a component root that is no folder and bad link targets", "[manifest][validate]") {
  CHECK(refusal([](Manifest& m) { m.entries[4].type = EntryType::file; m.entries[4].mode = 0644; }) ==
        "manifest field 'entries[4].type' component root 'triton' is not a folder");
  CHECK(refusal([](Manifest& m) { m.entries[3].link_target = "/etc/shadow"; }) ==
        "manifest field 'entries[3].target' of symlink 'inductor/fx/link' is absolute: '/etc/shadow'");
  CHECK(refusal([](Manifest& m) { m.entries[3].link_target = "../../triton"; }) ==
        "manifest field 'entries[3].target' of symlink 'inductor/fx/link' resolves outside 'inductor': '../../triton'");
}

TEST_CASE("Manifest::validate checks that the frames cover the entries and the tar size", "[manifest][validate]") {
  CHECK(refusal([](Manifest& m) { m.frames[0].offset = 7; }) == "manifest field 'frames[0].offset' is 7, expected 0");
  CHECK(refusal([](Manifest& m) { m.frames[0].first_entry = 1; }) ==
        "manifest field 'frames[0].first_entry' does not follow the previous frame");
  CHECK(refusal([](Manifest& m) { m.frames[0].entry_count = 6; }) == "manifest field 'frames[0].entry_count' runs past the entries");
  CHECK(refusal([](Manifest& m) { m.frames[0].entry_count = 4; }) == "manifest field 'frames' do not cover all entries");
  CHECK(refusal([](Manifest& m) { m.tar_size = 4095; }) == "manifest field 'tar_size' does not equal the frames' raw sizes");
  CHECK(refusal([](Manifest& m) { m.entries[4].frame = 1; }) == "manifest field 'entries[4].frame' does not match frames[0]");
  CHECK(refusal([](Manifest& m) {
          m.frames[0].entry_count = 2;
          for (std::size_t i = 2; i < 5; ++i) m.entries[i].frame = 1;
          m.frames.push_back({100, UINT64_MAX, 0, Sha256::of("x"), 2, 3});
        }) == "manifest field 'frames[1].compressed_size' makes the payload size overflow 64 bits");
}
