// pack/layout: kernel names found in bundle bytes, groups and frame cuts, the size threshold, and determinism of
// the whole create (any -j, create or import) once an archive is split.
#include <catch2/catch.hpp>

#include "manifest/cache_dir.hpp"
#include "pack/import_source.hpp"
#include "pack/layout.hpp"
#include "pack/packer.hpp"
#include "unit/support.hpp"
#include "unpack/archive.hpp"
#include "unpack/extractor.hpp"

using namespace ccpack;
namespace fs = std::filesystem;
using manifest::EntryType;

namespace {

std::string kernel(char c) { return std::string(pack::KernelFolderIndex::kNameLength, c); }

manifest::Entry entry(const std::string& path, EntryType type, std::uint64_t size = 0) {
  manifest::Entry e;
  e.path = path;
  e.type = type;
  e.mode = type == EntryType::dir ? 0755 : 0644;
  e.size = size;
  return e;
}

// In the scanner's order: folders, large files, small files, symlinks. Folder C is autotuning's twin of A (same
// largest file name and size); D is named by the second bundle only; p2 also names A, which p1 claimed first.
manifest::EntryList sample_entries() {
  return std::vector<manifest::Entry>{entry("inductor", EntryType::dir),                                  // 0
                                      entry("inductor/fxgraph", EntryType::dir),                          // 1
                                      entry("triton", EntryType::dir),                                    // 2
                                      entry("triton/" + kernel('A'), EntryType::dir),                     // 3
                                      entry("triton/" + kernel('B'), EntryType::dir),                     // 4
                                      entry("triton/" + kernel('C'), EntryType::dir),                     // 5
                                      entry("triton/" + kernel('D'), EntryType::dir),                     // 6
                                      entry("inductor/fxgraph/p1", EntryType::file, 2 << 20),             // 7
                                      entry("inductor/fxgraph/p2", EntryType::file, 2 << 20),             // 8
                                      entry("inductor/x.py", EntryType::file, 100),                       // 9
                                      entry("triton/" + kernel('A') + "/k.llir", EntryType::file, 1000),  // 10
                                      entry("triton/" + kernel('A') + "/k.json", EntryType::file, 10),    // 11
                                      entry("triton/" + kernel('B') + "/k.llir", EntryType::file, 2000),  // 12
                                      entry("triton/" + kernel('C') + "/k.llir", EntryType::file, 1000),  // 13
                                      entry("triton/" + kernel('D') + "/k.llir", EntryType::file, 3000),  // 14
                                      entry("inductor/link", EntryType::symlink)};                        // 15
}

pack::LayoutLimits small_limits() {
  pack::LayoutLimits l;
  l.split_threshold = 0;
  l.rest_frame_bytes = 64 << 20;
  l.min_group_frame_bytes = 1 << 20;
  return l;
}

}  // namespace

TEST_CASE("layout: kernel folder names are found in bundle bytes, in order, even glued to a pickle's length byte") {
  manifest::EntryList entries = sample_entries();
  pack::KernelFolderIndex index(entries);
  std::string bytes =
      "\x8c"
      "4" +
      kernel('B') + "\x94 " + kernel('A') + kernel('B') + " " + kernel('C').substr(1) + " " + kernel('d') + " " + kernel('B');
  std::vector<std::size_t> found;
  index.find(bytes, found);
  CHECK(found == std::vector<std::size_t>{4, 3, 4, 4});  // C is one character short, lowercase d is no name
}

TEST_CASE("layout: each bundle with the folders it names first claims them, twins follow, then the rest") {
  manifest::EntryList entries = sample_entries();
  std::vector<pack::Bundle> bundles = {{7, {4, 3}}, {8, {3, 6}}};
  pack::Layout l = pack::plan_layout(entries, bundles, small_limits());
  CHECK(l.order == std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6, 7, 12, 10, 11, 13, 8, 14, 9, 15});
  CHECK(l.frame_starts == std::vector<std::size_t>{12, 14});
  // Pure: the same input gives the same layout.
  pack::Layout again = pack::plan_layout(entries, bundles, small_limits());
  CHECK(again.order == l.order);
  CHECK(again.frame_starts == l.frame_starts);
}

TEST_CASE("layout: below the threshold, or with no bundle naming a folder, the scanner's order stays, one frame") {
  manifest::EntryList entries = sample_entries();
  std::vector<pack::Bundle> bundles = {{7, {4, 3}}};
  pack::Layout below = pack::plan_layout(entries, bundles, pack::LayoutLimits{});  // 64 MiB threshold
  CHECK(below.order.empty());
  CHECK(below.frame_starts.empty());
  pack::Layout none = pack::plan_layout(entries, {{7, {}}, {8, {}}}, small_limits());
  CHECK(none.order.empty());
}

TEST_CASE("layout: the rest is cut into frames of about equal size") {
  std::vector<manifest::Entry> entries = {entry("inductor", EntryType::dir), entry("triton", EntryType::dir),
                                          entry("triton/" + kernel('A'), EntryType::dir)};
  entries.push_back(entry("inductor/fxgraph/p", EntryType::file, 2 << 20));
  for (int i = 0; i < 10; ++i) entries.push_back(entry("inductor/f" + std::to_string(i), EntryType::file, (1 << 20) - 512));
  entries.push_back(entry("triton/" + kernel('A') + "/k", EntryType::file, 100));
  pack::LayoutLimits limits = small_limits();
  limits.rest_frame_bytes = 4 << 20;  // 10 MiB of rest: 3 frames of about 3.4 MiB (4 files, 4 files, 2 files)
  pack::Layout l = pack::plan_layout(manifest::EntryList(entries), {{3, {2}}}, limits);
  CHECK(l.order == std::vector<std::size_t>{0, 1, 2, 3, 14, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13});
  CHECK(l.frame_starts == std::vector<std::size_t>{5, 9, 13});
}

TEST_CASE("layout: a cache whose bundles name no kernel folder keeps its order, cut into even frames") {
  std::vector<manifest::Entry> entries = {entry("inductor", EntryType::dir), entry("triton", EntryType::dir)};
  for (int i = 0; i < 10; ++i) entries.push_back(entry("triton/f" + std::to_string(i), EntryType::file, (1 << 20) - 512));
  pack::LayoutLimits limits;
  limits.split_threshold = 8 << 20;
  limits.plain_frame_bytes = 4 << 20;  // 10 MiB: 3 frames, each cut past 3.4 MiB (folders and 4 files, 4 files, 2)
  manifest::EntryList list(entries);
  CHECK(pack::even_frames(list, limits) == std::vector<std::size_t>{6, 10});
  limits.split_threshold = 11 << 20;  // below it: one frame
  CHECK(pack::even_frames(list, limits).empty());
}

namespace {

// A cache whose FX-graph pickle embeds two of three Triton kernel folders (by name, as Inductor's pickles do).
void make_split_cache(const fs::path& root) {
  std::string pickle = "\x80\x04";
  for (char c : {'Q', 'P'})
    pickle +=
        "\x8c"
        "4" +
        kernel(c) + "\x94" + std::string(600000, c) + "\n";
  test::write_file(root / "inductor_cache/fxgraph/ab/fabc/pabc", pickle);
  test::write_file(root / "inductor_cache/small.py", "print(1)\n");
  for (char c : {'P', 'Q', 'R'}) {
    // R's IR differs in size from P's and Q's: R is no twin of theirs.
    test::write_file(root / ("triton_cache/" + kernel(c) + "/k.llir"), std::string(c == 'R' ? 500000 : 600000, c) + "\n");
    test::write_file(root / ("triton_cache/" + kernel(c) + "/k.json"), "{\"name\": \"" + std::string(1, c) + "\"}");
  }
  fs::create_symlink("small.py", root / "inductor_cache/alias.py");
}

std::vector<manifest::CacheDir> split_dirs(const fs::path& root) {
  return {{"inductor", manifest::ComponentKind::inductor, root / "inductor_cache", "test"},
          {"triton", manifest::ComponentKind::triton, root / "triton_cache", "test"}};
}

pack::PackOptions split_options(unsigned jobs) {
  pack::PackOptions o;
  o.jobs = jobs;
  o.layout = small_limits();
  o.layout.rest_frame_bytes = 256 << 10;
  return o;
}

}  // namespace

TEST_CASE("layout: a split archive is the same bytes for any -j, and import gives create's tar stream") {
  test::ScratchDir t;
  make_split_cache(t / "src");
  pack::PackResult r1 = pack::create_archive(split_dirs(t / "src"), t / "j1.ccpack", split_options(1));
  (void)pack::create_archive(split_dirs(t / "src"), t / "j2.ccpack", split_options(2));
  (void)pack::create_archive(split_dirs(t / "src"), t / "j3.ccpack", split_options(3));
  CHECK(test::slurp(t / "j1.ccpack") == test::slurp(t / "j2.ccpack"));
  CHECK(test::slurp(t / "j1.ccpack") == test::slurp(t / "j3.ccpack"));
  // The pickle opens frame 0 (after the folders) with the kernels it names, in order of mention; the rest (R,
  // small.py) is frame 1, the symlink frame 2 (two frames of rest: 500 KB cut at about 250 KB).
  std::vector<std::string> files;
  for (const manifest::Entry& x : r1.manifest.entries) {
    if (x.type == EntryType::file) files.push_back(x.path + "@" + std::to_string(x.frame));
  }
  std::string q = "triton/" + kernel('Q'), p = "triton/" + kernel('P'), rr = "triton/" + kernel('R');
  CHECK(files == std::vector<std::string>{"inductor/fxgraph/ab/fabc/pabc@0", q + "/k.json@0", q + "/k.llir@0", p + "/k.json@0",
                                          p + "/k.llir@0", "inductor/small.py@1", rr + "/k.json@1", rr + "/k.llir@1"});
  CHECK(r1.manifest.frames.size() == 3);

  REQUIRE(
      std::system(("tar -C '" + (t / "src").string() + "' -cJf '" + (t / "f.tar.xz").string() + "' inductor_cache triton_cache")
                      .c_str()) == 0);
  pack::ImportSource source({t / "f.tar.xz", {}, t.path(), {}});
  pack::PackResult imported = pack::create_archive(source, t / "imported.ccpack", split_options(2));
  CHECK(imported.manifest.frames.size() == 3);
  REQUIRE(std::system(("zstd -qdc '" + (t / "imported.ccpack").string() + "' > '" + (t / "i.tar").string() + "'").c_str()) == 0);
  REQUIRE(std::system(("zstd -qdc '" + (t / "j1.ccpack").string() + "' > '" + (t / "c.tar").string() + "'").c_str()) == 0);
  CHECK(test::slurp(t / "i.tar") == test::slurp(t / "c.tar"));
  // And what import read through its reordered spool is each file's own bytes.
  unpack::Archive a = unpack::Archive::open(t / "imported.ccpack");
  CHECK(unpack::extract(a, {}, {}).files == 8);
}

TEST_CASE("layout: a kernel name across a boundary of the pieces a pickle is read in is found, in order") {
  // The pickle is read in pieces, in parallel: a name across every MiB up to 8 MiB lies across a boundary of
  // pieces of 1, 2, 4 or 8 MiB, and is found only through the overlap each piece reads past its end. The names
  // come in reverse alphabetical order, the scanner's is alphabetical: only names found move their folders into
  // the pickle's frame, in order of mention; the folder it does not name (Z) stays in the rest.
  test::ScratchDir t;
  const std::string named = "HGFEDCBA";
  std::string pickle(9 << 20, 'x');
  for (std::size_t m = 1; m <= named.size(); ++m) pickle.replace((m << 20) - 26, kernel('A').size(), kernel(named[m - 1]));
  test::write_file(t / "src/inductor_cache/fxgraph/ab/fabc/pabc", pickle);
  for (char c : named + "Z") test::write_file(t / ("src/triton_cache/" + kernel(c) + "/k.llir"), std::string(1000 + c, c));
  pack::PackResult r = pack::create_archive(split_dirs(t / "src"), t / "a.ccpack", split_options(2));
  std::vector<std::string> files;
  for (const manifest::Entry& x : r.manifest.entries) {
    if (x.type == EntryType::file) files.push_back(x.path + "@" + std::to_string(x.frame));
  }
  std::vector<std::string> expected = {"inductor/fxgraph/ab/fabc/pabc@0"};
  for (char c : named) expected.push_back("triton/" + kernel(c) + "/k.llir@0");
  expected.push_back("triton/" + kernel('Z') + "/k.llir@1");
  CHECK(files == expected);
}

TEST_CASE("layout: entries are reordered in place, cycle by cycle") {
  std::vector<std::string> v = {"a", "b", "c", "d", "e", "f"};
  pack::permute(v, {2, 0, 1, 4, 3, 5});
  CHECK(v == std::vector<std::string>{"c", "a", "b", "e", "d", "f"});
  // A compact entry list, folders first, rebuilt in another order: every entry keeps its path and fields.
  manifest::EntryList list = sample_entries();
  std::vector<std::size_t> order = {0, 2, 1, 6, 5, 4, 3, 15, 14, 13, 12, 11, 10, 9, 8, 7};
  manifest::EntryList moved = pack::reordered(list, order);
  REQUIRE(moved.size() == list.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    CHECK(moved.path(k) == list.path(order[k]));
    CHECK(moved.file_size(k) == list.file_size(order[k]));
    CHECK(moved.type(k) == list.type(order[k]));
  }
}
