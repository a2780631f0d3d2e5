// The restored entry list (write, read, every way it reads as absent) and a folder's status since its restore:
// nothing added, then kernels, an FX graph, an autotune result and other files added by hand, grouped exactly.
#include <fcntl.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>

#include "manifest/marker.hpp"
#include "manifest/reserved_names.hpp"
#include "manifest/restored_entries.hpp"
#include "unit/support.hpp"
#include "unpack/status.hpp"
#include "util/fs.hpp"

using namespace ccpack;
using namespace ccpack::manifest;
namespace fs = std::filesystem;

namespace {

const std::string kRestoredDigest(64, 'a');

// A manifest with an inductor component of two files (one with a newline and a backslash in its name) and a
// triton component of one kernel folder.
Manifest status_sample() {
  Manifest m;
  m.entries = std::vector<Entry>{test::dir_entry("inductor"),
                                 test::dir_entry("inductor/ab"),
                                 test::file_entry("inductor/ab/c.py", "code"),
                                 test::file_entry("inductor/odd\nname\\x", "x"),
                                 test::dir_entry("triton"),
                                 test::dir_entry("triton/K1"),
                                 test::file_entry("triton/K1/triton_poi_a_0.json", "{}")};
  return m;
}

// `root` as restore leaves it: the component's files, the marker and the entry list.
void restored(const fs::path& root, const Manifest& m, const std::string& component) {
  fs::create_directories(root);
  for (const Entry& e : m.entries) {
    if (component_of(e.path) != component || e.type != EntryType::file) continue;
    test::write_file(root / std::string(relative_of(e.path)), e.path.ends_with(".py")     ? "code"
                                                              : e.path.ends_with(".json") ? "{}"
                                                                                          : "x");
  }
  UniqueFd fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  write_restored_entries(fd.get(), m, component, kRestoredDigest);
  Marker marker;
  marker.archive_manifest_sha256 = kRestoredDigest;
  marker.component = component;
  marker.restored_by = "ccpack test";
  marker.restored_at = "2026-12-01T09:30:00Z";
  marker.signed_by = "0123456789abcdef";
  test::write_file(root / std::string(kMarkerName), marker.to_json());
}

}  // namespace

TEST_CASE("the restored entry list round-trips, with escaped names, and reads as absent when anything is off") {
  test::ScratchDir t;
  restored(t / "ind", status_sample(), "inductor");
  std::string text = test::slurp(t / "ind" / std::string(kEntriesName));
  CHECK(text == "ccpack-entries 1 " + kRestoredDigest + " 2\nf 4 " + to_hex(Sha256::of(std::string("code"))) + " ab/c.py\nf 1 " +
                    to_hex(Sha256::of(std::string("x"))) + " odd\\nname\\\\x\nend\n");
  auto list = RestoredEntries::read(t / "ind", kRestoredDigest);
  REQUIRE(list);
  CHECK(list->entries.size() == 2);
  CHECK(list->entries.count("odd\nname\\x") == 1);
  CHECK(list->entries.at("ab/c.py").size == 4);
  CHECK_FALSE(RestoredEntries::read(t / "ind", std::string(64, 'b')));  // another archive's list
  for (const std::string& broken :
       {text.substr(0, text.size() - 4), text + "f 1 00 x\n", std::string("ccpack-entries 2") + text.substr(16)}) {
    test::write_file(t / "ind" / std::string(kEntriesName), broken);
    CHECK_FALSE(RestoredEntries::read(t / "ind", kRestoredDigest));
  }
}

TEST_CASE("status right after a restore: nothing compiled, then what was added by hand, grouped") {
  test::ScratchDir t;
  Manifest m = status_sample();
  restored(t / "ind", m, "inductor");
  restored(t / "tri", m, "triton");
  CacheDir ind{"inductor", ComponentKind::inductor, t / "ind", "test"};
  CacheDir tri{"triton", ComponentKind::triton, t / "tri", "test"};
  unpack::FolderStatus s = unpack::folder_status(ind);
  CHECK(s.state == unpack::FolderState::restored);
  CHECK(s.archive_files == 2);
  CHECK(s.added() == 0);
  CHECK(s.missing.empty());
  CHECK(s.marker->signed_by == "0123456789abcdef");
  CHECK(unpack::folder_status(tri).added() == 0);

  for (const char* k : {"K2/triton_poi_b_0.json", "K2/triton_poi_b_0.cubin", "K2/__grp__triton_poi_b_0.json",
                        "K3/triton_red_c_1.json", "K4/__grp__triton_per_d_2.json", "K4/triton_per_d_2.cubin"})
    test::write_file(t / "tri" / k, "k");
  test::write_file(t / "tri/K1/triton_poi_a_0.json.lock", "");  // transient
  test::write_file(t / "ind/fxgraph/ab/fabc/entry", "g");
  test::write_file(t / "ind/ab/123.best_config", "{}");
  test::write_file(t / "ind/triton/0/K5/triton_mm_e_3.json", "{}");
  test::write_file(t / "ind/de/cde.py", "new code");
  test::write_file(t / "ind/locks/x", "");  // transient
  fs::remove(t / "ind/ab/c.py");

  unpack::FolderStatus st = unpack::folder_status(tri);
  CHECK(st.kernels ==
        std::vector<unpack::AddedKernel>{{"triton_per_d_2", "K4"}, {"triton_poi_b_0", "K2"}, {"triton_red_c_1", "K3"}});
  CHECK(st.added() == 3);
  unpack::FolderStatus si = unpack::folder_status(ind);
  CHECK(si.fx_graphs == std::vector<std::string>{"fxgraph/ab/fabc/entry"});
  CHECK(si.autotune == std::vector<std::string>{"ab/123.best_config"});
  CHECK(si.kernels == std::vector<unpack::AddedKernel>{{"triton_mm_e_3", "triton/0/K5"}});
  CHECK(si.other == std::vector<std::string>{"de/cde.py"});
  CHECK(si.missing == std::vector<std::string>{"ab/c.py"});
  CHECK_FALSE(si.verified);
}

TEST_CASE("status --verify names a file of the archive whose bytes changed, the states without a marker or list") {
  test::ScratchDir t;
  restored(t / "ind", status_sample(), "inductor");
  CacheDir ind{"inductor", ComponentKind::inductor, t / "ind", "test"};
  test::write_file(t / "ind/ab/c.py", "edit");  // same size, other bytes
  CHECK(unpack::folder_status(ind).modified.empty());
  unpack::FolderStatus v = unpack::folder_status(ind, {true});
  CHECK(v.verified);
  CHECK(v.modified == std::vector<std::string>{"ab/c.py"});
  fs::remove(t / "ind" / std::string(kEntriesName));
  CHECK(unpack::folder_status(ind).state == unpack::FolderState::no_entry_list);
  fs::remove(t / "ind" / std::string(kMarkerName));
  CHECK(unpack::folder_status(ind).state == unpack::FolderState::not_restored);
  fs::remove_all(t / "ind");
  CHECK(unpack::folder_status(ind).state == unpack::FolderState::absent);
}

TEST_CASE("status reads no FIFO: one in the entry list's place is no list, one in a restored file's place is modified") {
  test::ScratchDir t;
  restored(t / "ind", status_sample(), "inductor");
  CacheDir ind{"inductor", ComponentKind::inductor, t / "ind", "test"};
  fs::remove(t / "ind/ab/c.py");
  REQUIRE(::mkfifo((t / "ind/ab/c.py").c_str(), 0644) == 0);  // opened for reading without O_NONBLOCK: a hang
  // Each call runs in a child bounded at 30 s (it answers at once): a hang fails here, not at CTest's timeout.
  CHECK(test::answer_within(30, [&] {
          unpack::FolderStatus v = unpack::folder_status(ind, {true});
          return std::string(unpack::to_string(v.state)) + " modified=" + (v.modified.empty() ? "" : v.modified[0]);
        }) == "restored modified=ab/c.py");
  fs::remove(t / "ind" / std::string(kEntriesName));
  REQUIRE(::mkfifo((t / "ind" / std::string(kEntriesName)).c_str(), 0644) == 0);
  CHECK(test::answer_within(30, [&] { return std::string(unpack::to_string(unpack::folder_status(ind).state)); }) ==
        std::string(unpack::to_string(unpack::FolderState::no_entry_list)));
}

TEST_CASE("an entry list over its bound on disk is not read: no list, and memory does not grow with it") {
  test::ScratchDir t;
  restored(t / "ind", status_sample(), "inductor");
  fs::path list = t / "ind" / std::string(kEntriesName);
  std::string text = test::slurp(list);
  // A list whose header is sound, made as long as the bound allows, then one byte longer (sparse: no disk used).
  fs::resize_file(list, kMaxEntriesBytes);
  CHECK_FALSE(RestoredEntries::read(t / "ind", kRestoredDigest));  // zeros after the lines: malformed, read in pieces
  long at_bound = test::peak_rss_growth_kib([&] { (void)RestoredEntries::read(t / "ind", kRestoredDigest); });
  fs::resize_file(list, kMaxEntriesBytes + 1);
  CacheDir ind{"inductor", ComponentKind::inductor, t / "ind", "test"};
  CHECK(unpack::folder_status(ind).state == unpack::FolderState::no_entry_list);
  long over = test::peak_rss_growth_kib([&] { (void)unpack::folder_status(ind); });
  // Read whole, each took the file's 256 MiB; now a 1 MiB buffer and one line (expected 2 MiB; bound 10x that).
  CHECK(at_bound >= 0);
  CHECK(at_bound < 20 * 1024);
  CHECK(over >= 0);
  CHECK(over < 20 * 1024);
  test::write_file(list, text);
  CHECK(RestoredEntries::read(t / "ind", kRestoredDigest));
  // The bound is checked before the first byte is read: a sound list one byte over it is not read.
  CHECK(RestoredEntries::read(t / "ind", kRestoredDigest, {}, text.size()));
  CHECK_FALSE(RestoredEntries::read(t / "ind", kRestoredDigest, {}, text.size() - 1));
}

TEST_CASE("status names a subfolder it cannot read instead of ending its walk there") {
  test::ScratchDir t;
  restored(t / "ind", status_sample(), "inductor");
  test::write_file(t / "ind/zz/new.py", "compiled since");
  fs::permissions(t.path(), fs::perms(0755));
  fs::permissions(t / "ind/zz", fs::perms(0));
  CacheDir ind{"inductor", ComponentKind::inductor, t / "ind", "test"};
  std::string message = test::error_as_other_user([&] { (void)unpack::folder_status(ind); });
  fs::permissions(t / "ind/zz", fs::perms(0755));
  CHECK(message ==
        "cannot read cache folder " + quoted_path(t / "ind") + " (at " + quoted_path(t / "ind/zz") + "): Permission denied");
}
