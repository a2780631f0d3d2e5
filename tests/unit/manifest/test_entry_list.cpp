// manifest/entry_list: the compact entry list gives back exactly the entries put in, whichever way they went in.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "manifest/entry_list.hpp"
#include "manifest/manifest.hpp"

using namespace ccpack;
using namespace ccpack::manifest;

namespace {

bool same(const Entry& a, const Entry& b) {
  return a.path == b.path && a.type == b.type && a.mode == b.mode && a.size == b.size && a.sha256 == b.sha256 &&
         a.link_target == b.link_target && a.frame == b.frame;
}

// Folders, files, links, a name with bytes JSON escapes, long names (more than one arena block in all), an entry
// whose folder comes after it and one whose folder is a file (both kept whole, for validate to refuse).
std::vector<Entry> sample_entries() {
  std::vector<Entry> v = {
      {"inductor", EntryType::dir, 0755, 0, {}, {}, 0},
      {"inductor/fx", EntryType::dir, 0700, 0, {}, {}, 0},
      {"inductor/fx/a.py", EntryType::file, 0644, 5, Sha256::of("hello"), {}, 1},
      {"inductor/fx/q\"b\\\n\xc3\xa9.py", EntryType::file, 0600, 0, Sha256::of(""), {}, 2},
      {"inductor/fx/link", EntryType::symlink, 0777, 0, {}, "a.py", 2},
      {"inductor/late/x", EntryType::file, 0644, 1, Sha256::of("x"), {}, 3},
      {"inductor/fx/a.py/below", EntryType::file, 0644, 1, Sha256::of("y"), {}, 3},
      {"inductor/fx/sub", EntryType::dir, 0755, 0, {}, {}, 3},
      {"inductor/fx/sub/" + std::string(255, 'n'), EntryType::file, 0644, 1ULL << 33, Sha256::of("z"), {}, 4},
      {"triton", EntryType::dir, 0755, 0, {}, {}, 4},
      {"triton/top", EntryType::file, 0444, 7, Sha256::of("top"), {}, 4},
  };
  for (int i = 0; i < 3000; ++i) {
    v.push_back({"triton/k" + std::to_string(i), EntryType::dir, 0755, 0, {}, {}, 5});
    v.push_back({"triton/k" + std::to_string(i) + "/" + std::string(250, 'f'),
                 EntryType::file,
                 0644,
                 static_cast<std::uint64_t>(i),
                 Sha256::of(std::to_string(i)),
                 {},
                 5});
  }
  return v;
}

void check_all(const EntryList& list, const std::vector<Entry>& want) {
  REQUIRE(list.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO("entry " << i << " " << want[i].path);
    CHECK(same(list[i], want[i]));
    CHECK(list.path(i) == want[i].path);
    CHECK(list.path_size(i) == want[i].path.size());
    CHECK(list.type(i) == want[i].type);
    CHECK(list.file_size(i) == want[i].size);
    CHECK(list.sha256(i) == want[i].sha256);
    CHECK(list.link_target(i) == want[i].link_target);
    CHECK(list.component(i) == component_of(want[i].path));
  }
}

}  // namespace

TEST_CASE("an entry list gives back every entry exactly") {
  std::vector<Entry> want = sample_entries();
  EntryList list(want);
  CHECK_FALSE(list.editable());
  check_all(list, want);
  std::size_t i = 0;
  for (const Entry& e : list) CHECK(same(e, want[i++]));
  CHECK(i == want.size());
  // Copies and moves keep everything.
  EntryList copy = list;
  check_all(copy, want);
  EntryList moved = std::move(copy);
  check_all(moved, want);
}

TEST_CASE("an entry list keeps each path once, below its folder") {
  EntryList list(sample_entries());
  CHECK(list.parent(0) == EntryList::kNoParent);  // a component root
  CHECK(list.parent(1) == 0);
  CHECK(list.parent(2) == 1);
  CHECK(list.name(2) == "a.py");
  CHECK(list.name(7) == "sub");  // a folder's name is the end of its path
  // No folder listed before it, or its "folder" is a file: kept whole, without a parent.
  CHECK(list.parent(5) == EntryList::kNoParent);
  CHECK(list.name(5) == "inductor/late/x");
  CHECK(list.parent(6) == EntryList::kNoParent);
  CHECK(list.name(6) == "inductor/fx/a.py/below");
}

TEST_CASE("an entry list built from names below folders matches one built from paths") {
  EntryList by_name;
  std::uint32_t root = by_name.append(EntryList::kNoParent, "inductor", EntryType::dir, 0755, 0);
  std::uint32_t fx = by_name.append(root, "fx", EntryType::dir, 0755, 0);
  std::uint32_t file = by_name.append(fx, "a.py", EntryType::file, 0644, 5);
  std::uint32_t link = by_name.append(fx, "l", EntryType::symlink, 0777, 0, "a.py");
  by_name.set_sha256(file, Sha256::of("hello"));
  by_name.set_frame(link, 3);
  by_name.set_file_size(file, 6);
  std::vector<Entry> want = {{"inductor", EntryType::dir, 0755, 0, {}, {}, 0},
                             {"inductor/fx", EntryType::dir, 0755, 0, {}, {}, 0},
                             {"inductor/fx/a.py", EntryType::file, 0644, 6, Sha256::of("hello"), {}, 0},
                             {"inductor/fx/l", EntryType::symlink, 0777, 0, {}, "a.py", 3}};
  check_all(by_name, want);
  // A folder appended by name is found by a later entry appended by path.
  by_name.push_back({"inductor/fx/b.py", EntryType::file, 0644, 1, Sha256::of("b"), {}, 0});
  CHECK(by_name.parent(4) == fx);
  CHECK(by_name.path(4) == "inductor/fx/b.py");
}

TEST_CASE("editing an entry list turns it into plain entries, and compacting gives them back") {
  std::vector<Entry> want = sample_entries();
  EntryList list(want);
  list[2].path = "inductor/fx/renamed.py";
  want[2].path = "inductor/fx/renamed.py";
  CHECK(list.editable());
  list.insert(list.begin() + 1, {"inductor/early", EntryType::symlink, 0777, 0, {}, "fx", 0});
  want.insert(want.begin() + 1, {"inductor/early", EntryType::symlink, 0777, 0, {}, "fx", 0});
  check_all(list, want);
  EntryList scratch;
  const EntryList& compact = list.compact(scratch);
  CHECK(&compact == &scratch);
  CHECK_FALSE(compact.editable());
  check_all(compact, want);
}

TEST_CASE("a manifest of compact entries serialises as the same bytes as one of edited entries") {
  Manifest m;
  m.created_by = "ccpack test";
  m.compression = {"zstd", 1, 27};
  m.components = {{"inductor", ComponentKind::inductor, "/i", 0, 0}, {"triton", ComponentKind::triton, "/t", 0, 0}};
  std::vector<Entry> entries = sample_entries();
  entries.erase(entries.begin() + 5, entries.begin() + 7);  // the two a manifest refuses
  for (Entry& e : entries) e.frame = 0;
  m.entries = entries;
  m.frames = {{0, 10, 10, Sha256::of("f"), 0, entries.size()}};
  m.tar_size = 10;
  std::string json = m.to_json();
  Manifest back = Manifest::parse(json);
  CHECK_FALSE(back.entries.editable());
  check_all(back.entries, entries);
  CHECK(back.to_json() == json);
  m.entries[0].mode = 0755;  // the same entry, but the list is now editable
  CHECK(m.entries.editable());
  CHECK(m.to_json() == json);
}
