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

// The IntegrityError that validate() throws for test::sample_manifest() after `edit`.
std::string validate_refusal(const std::function<void(Manifest&)>& edit, const Limits& limits = {}) {
  Manifest m = test::sample_manifest();
  edit(m);
  return test::integrity_error([&] { m.validate(limits); });
}

}  // namespace

TEST_CASE("Manifest::validate accepts a valid manifest", "[manifest][validate]") {
  CHECK(validate_refusal([](Manifest&) {}) == "(no IntegrityError)");
}

TEST_CASE("Manifest::validate refuses bad components by name", "[manifest][validate]") {
  CHECK(validate_refusal([](Manifest& m) {
          m.components[1].name = "inductor";
          m.components[1].kind = ComponentKind::inductor;
        }) == "manifest field 'components[1].name' repeats 'inductor'");
  CHECK(validate_refusal([](Manifest& m) { m.components[1].name = "a/b"; }) ==
        "manifest field 'components[1].name' is not a valid component name: 'a/b'");
  CHECK(validate_refusal([](Manifest& m) { m.components[0].kind = ComponentKind::extra; }) ==
        "manifest field 'components[0].name' 'inductor' does not match its kind");
}

TEST_CASE("Manifest::validate refuses unsafe entry paths and modes by name", "[manifest][validate]") {
  CHECK(validate_refusal([](Manifest& m) { m.entries[2].path = "/etc/passwd"; }) ==
        "manifest field 'entries[2].path' is an absolute path: '/etc/passwd'");
  CHECK(validate_refusal([](Manifest& m) { m.entries[2].path = "inductor/fx/../a.py"; }) ==
        "manifest field 'entries[2].path' has an unsafe component in 'inductor/fx/../a.py'");
  CHECK(validate_refusal([](Manifest& m) { m.entries[2].path = "other/a.py"; }) ==
        "manifest field 'entries[2].path' 'other/a.py' is not under a listed component");
  CHECK(validate_refusal([](Manifest& m) { m.entries[2].mode = 04644; }) ==
        "manifest field 'entries[2].mode' has setuid, setgid or sticky bits on 'inductor/fx/a.py'");
  CHECK(validate_refusal([](Manifest& m) { m.entries[2].path = "inductor/fx"; }) ==
        "manifest field 'entries[2].path' duplicates 'inductor/fx'");
  CHECK(validate_refusal([](Manifest& m) { m.entries[2].path = "inductor/gx/a.py"; }) ==
        "manifest field 'entries[2].path' 'inductor/gx/a.py' comes before its folder 'inductor/gx'");
}

TEST_CASE("Manifest::validate bounds file sizes and the entry count by the limits", "[manifest][validate]") {
  Limits small;
  small.max_file_size = 4;
  CHECK(validate_refusal([](Manifest&) {}, small) == "manifest field 'entries[2].size' of 'inductor/fx/a.py' exceeds the limit");
  Limits total;
  total.max_total_size = 4;
  CHECK(validate_refusal([](Manifest&) {}, total) ==
        "manifest field 'entries[2].size' makes the archive exceed the total size limit");
  Limits few;
  few.max_entries = 4;
  CHECK(validate_refusal([](Manifest&) {}, few) == "manifest field 'entries' has more than 4 entries");
}

TEST_CASE("Manifest::validate refuses a component root that is no folder and bad link targets", "[manifest][validate]") {
  CHECK(validate_refusal([](Manifest& m) {
          m.entries[4].type = EntryType::file;
          m.entries[4].mode = 0644;
        }) == "manifest field 'entries[4].type' component root 'triton' is not a folder");
  CHECK(validate_refusal([](Manifest& m) { m.entries[3].link_target = "/etc/shadow"; }) ==
        "manifest field 'entries[3].target' of symlink 'inductor/fx/link' is absolute: '/etc/shadow'");
  CHECK(validate_refusal([](Manifest& m) { m.entries[3].link_target = "../../triton"; }) ==
        "manifest field 'entries[3].target' of symlink 'inductor/fx/link' resolves outside 'inductor': '../../triton'");
}

TEST_CASE("Manifest::validate checks that the frames cover the entries and the tar size", "[manifest][validate]") {
  CHECK(validate_refusal([](Manifest& m) { m.frames[0].offset = 7; }) == "manifest field 'frames[0].offset' is 7, expected 0");
  CHECK(validate_refusal([](Manifest& m) { m.frames[0].first_entry = 1; }) ==
        "manifest field 'frames[0].first_entry' does not follow the previous frame");
  CHECK(validate_refusal([](Manifest& m) { m.frames[0].entry_count = 6; }) ==
        "manifest field 'frames[0].entry_count' runs past the entries");
  CHECK(validate_refusal([](Manifest& m) { m.frames[0].entry_count = 4; }) == "manifest field 'frames' do not cover all entries");
  CHECK(validate_refusal([](Manifest& m) { m.tar_size = 4095; }) ==
        "manifest field 'tar_size' does not equal the frames' raw sizes");
  CHECK(validate_refusal([](Manifest& m) { m.entries[4].frame = 1; }) ==
        "manifest field 'entries[4].frame' does not match frames[0]");
  CHECK(validate_refusal([](Manifest& m) {
          m.frames[0].entry_count = 2;
          for (std::size_t i = 2; i < 5; ++i) m.entries[i].frame = 1;
          m.frames.push_back({100, UINT64_MAX, 0, Sha256::of("x"), 2, 3});
        }) == "manifest field 'frames[1].compressed_size' makes the payload size overflow 64 bits");
}
