// Relocation of Triton's group files: after a restore into another folder every child path of every __grp__
// file names a restored file; nothing else changes; paths that are not the cache's own files are left alone.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <regex>

#include "pack/packer.hpp"
#include "unit/support.hpp"
#include "unpack/archive.hpp"
#include "unpack/installer.hpp"
#include "unpack/relocate.hpp"
#include "util/fs.hpp"

using namespace ccpack;
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// Every child path of every group file under `root`: (group file, child path).
std::vector<std::pair<fs::path, std::string>> child_paths(const fs::path& root) {
  std::vector<std::pair<fs::path, std::string>> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    std::string name = e.path().filename().string();
    if (!e.is_regular_file() || !name.starts_with("__grp__") || !name.ends_with(".json")) continue;
    json doc = json::parse(test::slurp(e.path()), nullptr, false);
    if (doc.is_discarded()) continue;
    for (const auto& [key, value] : doc["child_paths"].items()) out.emplace_back(e.path(), value.get<std::string>());
  }
  return out;
}

std::string group_json(const fs::path& dir, const std::string& kernel) {
  json doc;
  for (const char* ext : {".cubin", ".json"}) doc["child_paths"][kernel + ext] = (dir / (kernel + ext)).string();
  doc["child_paths"]["libdevice"] = "/usr/lib/libdevice.10.bc";  // not a cache file: left alone
  return doc.dump();
}

// Packs t/build/{ind,tri} into t/a.ccpack and restores it into t/pod/{ind,tri}.
unpack::InstallReport pack_and_restore(const test::ScratchDir& t, unpack::Archive& a) {
  (void)pack::create_archive(test::dirs_of(t / "build/ind", t / "build/tri"), t / "a.ccpack", {});
  a = unpack::Archive::open(t / "a.ccpack");
  return unpack::install(a, test::dirs_of(t / "pod/ind", t / "pod/tri"), {});
}

// A kernel file t/build/tri/HASH1/k.cubin, a file in t/build/ind, and a group document naming the kernel, which the
// caller pads and writes.
nlohmann::ordered_json kernel_and_group(const test::ScratchDir& t) {
  test::write_file(t / "build/tri/HASH1/k.cubin", "cubin");
  test::write_file(t / "build/ind/x", "x");
  nlohmann::ordered_json doc;
  doc["child_paths"]["k.cubin"] = (t / "build/tri/HASH1/k.cubin").string();
  return doc;
}

void check_stats(const unpack::RelocationStats& s, std::uint64_t groups, std::uint64_t rewritten, std::uint64_t kept,
                 std::uint64_t unparsed) {
  CHECK(s.group_files == groups);
  CHECK(s.paths_rewritten == rewritten);
  CHECK(s.paths_kept == kept);
  CHECK(s.files_unparsed == unparsed);
}

}  // namespace

TEST_CASE("relocated restore: group files name the new folder, other bytes are as packed") {
  test::ScratchDir t;
  fs::path build = t / "build/tri/HASH1";
  test::write_file(build / "k.cubin", "cubin");
  test::write_file(build / "k.json", "{\"triton_version\": \"3.6.0\"}");
  test::write_file(build / "__grp__k.json", group_json(build, "k"), 0640);
  test::write_file(t / "build/tri/HASH2/__grp__bad.json", "{not json");
  fs::path ind = t / "build/ind/triton/0/HASH3";  // Inductor's own Triton subtree follows the same rule
  test::write_file(ind / "k.cubin", "cubin3");
  test::write_file(ind / "k.json", "{}");
  test::write_file(ind / "__grp__k.json", group_json(ind, "k"));
  unpack::Archive a;
  unpack::InstallReport r = pack_and_restore(t, a);
  check_stats(r.components[1].relocation, 2, 2, 1, 1);
  CHECK(r.components[0].relocation.paths_rewritten == 2);
  for (const auto& [group, child] : child_paths(t / "pod")) {
    if (child == "/usr/lib/libdevice.10.bc") continue;
    CHECK(child.starts_with((t / "pod").string()));
    CHECK(fs::exists(child));
  }
  CHECK(test::slurp(t / "pod/tri/HASH2/__grp__bad.json") == "{not json");
  CHECK((fs::status(t / "pod/tri/HASH1/__grp__k.json").permissions() & fs::perms::all) == fs::perms(0640));
  CHECK(test::slurp(t / "pod/tri/HASH1/k.cubin") == "cubin");
  // Restored into the build folders themselves: nothing to rewrite.
  fs::rename(t / "build", t / "build.orig");
  r = unpack::install(a, test::dirs_of(t / "build/ind", t / "build/tri"), {});
  CHECK(r.components[1].relocation.paths_rewritten == 0);
  CHECK(test::slurp(t / "build/tri/HASH1/__grp__k.json") == test::slurp(t / "build.orig/tri/HASH1/__grp__k.json"));
}

TEST_CASE("a group file in Triton's form and the same document in another form are rewritten alike") {
  // Triton's form is read without a JSON tree (unpack/group_file.hpp); an escaped '/' sends the same document
  // through the full parser. Both must end as the same bytes, with the same counts.
  test::ScratchDir t;
  fs::path h1 = t / "build/tri/HASH1", h2 = t / "build/tri/HASH2";
  for (const fs::path& h : {h1, h2}) {
    test::write_file(h / "k.cubin", "cubin");
    test::write_file(h / "k.json", "{}");
  }
  auto doc = [](const fs::path& h, bool escaped) {
    std::string dir = h.string();
    if (escaped) dir = std::regex_replace(dir, std::regex("/"), "\\/");
    return R"({"child_paths": {"k.cubin": ")" + dir + R"(/k.cubin", "libdevice": "/usr/lib/libdevice.10.bc", "k.json": ")" + dir +
           R"(/k.json"}})";
  };
  test::write_file(h1 / "__grp__k.json", doc(h1, false));
  test::write_file(h2 / "__grp__k.json", doc(h2, true));
  test::write_file(t / "build/ind/x", "x");
  unpack::Archive a;
  unpack::InstallReport r = pack_and_restore(t, a);
  check_stats(r.components[1].relocation, 2, 4, 2, 0);
  std::string pod = (t / "pod/tri").lexically_normal().string();
  auto expected = [&](const char* hash) {
    return R"({"child_paths":{"k.cubin":")" + pod + "/" + hash +
           R"(/k.cubin","libdevice":"/usr/lib/libdevice.10.bc","k.json":")" + pod + "/" + hash + R"(/k.json"}})";
  };
  CHECK(test::slurp(t / "pod/tri/HASH1/__grp__k.json") == expected("HASH1"));
  CHECK(test::slurp(t / "pod/tri/HASH2/__grp__k.json") == expected("HASH2"));
}

TEST_CASE("relocated restore of the real fixture: every __grp__ child path exists", "[fixture]") {
  fs::path fixture = test::real_fixture();  // skipped (never passed) when the fixture is absent
  test::ScratchDir t;
  (void)pack::create_archive(test::dirs_of(fixture / "inductor_cache", fixture / "triton_cache"), t / "real.ccpack", {});
  unpack::Archive a = unpack::Archive::open(t / "real.ccpack");
  unpack::InstallReport r = unpack::install(a, test::dirs_of(t / "elsewhere/ind", t / "elsewhere/tri"), {});
  std::size_t children = 0;
  std::size_t missing = 0;
  for (const auto& [group, child] : child_paths(t / "elsewhere")) {
    ++children;
    if (!fs::exists(child)) ++missing;
  }
  CHECK(children > 1000);
  CHECK(missing == 0);
  CHECK(r.components[1].relocation.paths_rewritten + r.components[0].relocation.paths_rewritten == children);
}

TEST_CASE("a group file larger than a decoded chunk is gathered across chunks and rewritten whole") {
  // 5 MiB of JSON: more than one 4 MiB chunk (unpack/frame_stream.hpp), so its pieces are written apart and
  // the relocator must see the whole document at its last piece.
  test::ScratchDir t;
  fs::path build = t / "build/tri/HASH1";
  nlohmann::ordered_json doc = kernel_and_group(t);
  doc["child_paths"]["pad"] = std::string(5 << 20, 'x');  // not an absolute path: kept
  doc["other"] = 1;
  test::write_file(build / "__grp__big.json", doc.dump(2));  // packed pretty, written back compact
  unpack::Archive a;
  unpack::InstallReport r = pack_and_restore(t, a);
  check_stats(r.components[1].relocation, 1, 1, 1, 0);
  doc["child_paths"]["k.cubin"] = (t / "pod/tri/HASH1/k.cubin").lexically_normal().string();
  CHECK(test::slurp(t / "pod/tri/HASH1/__grp__big.json") == doc.dump());
  // Not relocated (--no-relocate): the packed bytes, whole.
  unpack::InstallOptions keep;
  keep.relocate = false;
  r = unpack::install(a, test::dirs_of(t / "pod2/ind", t / "pod2/tri"), keep);
  CHECK(test::slurp(t / "pod2/tri/HASH1/__grp__big.json") == test::slurp(build / "__grp__big.json"));
}

TEST_CASE("a group file past 16 MiB is written as packed and counted, never gathered") {
  // Its manifest size decides, before any byte is read: a hostile archive declaring a huge group file makes
  // restore hold nothing.
  test::ScratchDir t;
  fs::path build = t / "build/tri/HASH1";
  nlohmann::ordered_json doc = kernel_and_group(t);
  doc["pad"] = std::string((16 << 20) + 1, 'x');
  test::write_file(build / "__grp__huge.json", doc.dump());
  unpack::Archive a;
  unpack::InstallReport r = pack_and_restore(t, a);
  check_stats(r.components[1].relocation, 1, 0, 0, 1);
  CHECK(test::slurp(t / "pod/tri/HASH1/__grp__huge.json") == test::slurp(build / "__grp__huge.json"));
  // The bound itself, on the relocator: 16 MiB is read, one byte more is skipped and counted.
  for (std::size_t i = 0; i < a.manifest.entries.size(); ++i) {
    if (a.manifest.entries[i].path != "triton/HASH1/__grp__huge.json") continue;
    unpack::PathRelocator relocator(a.manifest, 1, t / "pod2/tri");
    CHECK(relocator.handles(i));
    CHECK(relocator.skips(i));
    check_stats(relocator.stats(), 1, 0, 0, 1);
    manifest::Manifest edited = a.manifest;
    edited.entries[i].size = 16 << 20;
    unpack::PathRelocator at_bound(edited, 1, t / "pod2/tri");
    CHECK_FALSE(at_bound.skips(i));
    check_stats(at_bound.stats(), 0, 0, 0, 0);
  }
}

namespace {

std::string le_bytes(std::uint64_t v, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return out;
}
std::string pickle_str(const std::string& s) { return "\x8c" + le_bytes(s.size(), 1) + s; }  // under 256 bytes
std::string pickle_frame(const std::string& content) { return "\x95" + le_bytes(content.size(), 8) + content; }

// A protocol-4 pickle naming `root`'s kernel `.py` and `.best_config` in two frames around a 6 MiB bytes value
// (more than one 4 MiB chunk, so the entry is fed to the rewrite piece by piece); `tail` ends it.
std::string fx_entry(const std::string& root, const std::string& tail = "t.") {
  std::string blob = "B" + le_bytes(6 << 20, 4) + std::string(6 << 20, 'b');
  return "\x80\x04" + pickle_frame("(" + pickle_str(root + "/ab/k.py")) + blob +
         pickle_frame(pickle_str(root + "/ab/k.best_config") + tail);
}

}  // namespace

TEST_CASE("a pickled FX-graph entry larger than a chunk is rewritten as it streams") {
  test::ScratchDir t;
  fs::path ind = t / "build/ind";
  test::write_file(ind / "ab/k.py", "kernel");
  test::write_file(t / "build/tri/x", "x");
  test::write_file(ind / "fxgraph/f1/entry", fx_entry(ind.string()));
  unpack::Archive a;
  unpack::InstallReport r = pack_and_restore(t, a);
  CHECK(r.components[0].relocation.pickle_files == 1);
  CHECK(r.components[0].relocation.pickle_paths_rewritten == 2);
  CHECK(r.components[0].relocation.pickle_files_unparsed == 0);
  CHECK(test::slurp(t / "pod/ind/fxgraph/f1/entry") == fx_entry((t / "pod/ind").lexically_normal().string()));
}

TEST_CASE("an FX-graph entry that stops being a pickle after a moved path is restored as packed") {
  // The rewrite has written the first frame, moved, and the bytes value when it meets an unknown opcode: what it
  // wrote is turned back into the packed bytes. Both paths: across chunks (streamed) and in one chunk.
  test::ScratchDir t;
  fs::path ind = t / "build/ind";
  test::write_file(ind / "ab/k.py", "kernel");
  test::write_file(t / "build/tri/x", "x");
  std::string bad = fx_entry(ind.string(), "\xff.");
  std::string small = "\x80\x04" + pickle_frame("(" + pickle_str(ind.string() + "/ab/k.py")) + "\xff.";
  test::write_file(ind / "fxgraph/f1/entry", bad);
  test::write_file(ind / "fxgraph/f2/entry", small);
  unpack::Archive a;
  unpack::InstallReport r = pack_and_restore(t, a);
  CHECK(r.components[0].relocation.pickle_files == 2);
  CHECK(r.components[0].relocation.pickle_paths_rewritten == 0);
  CHECK(r.components[0].relocation.pickle_files_unparsed == 2);
  CHECK(test::slurp(t / "pod/ind/fxgraph/f1/entry") == bad);
  CHECK(test::slurp(t / "pod/ind/fxgraph/f2/entry") == small);
}

TEST_CASE("a build folder recorded with a trailing slash is the same folder, and a target that is not UTF-8 is named") {
  test::ScratchDir t;
  (void)kernel_and_group(t);
  (void)pack::create_archive(test::dirs_of(t / "build/ind/", t / "build/tri/"), t / "a.ccpack", {});
  unpack::Archive a = unpack::Archive::open(t / "a.ccpack");
  CHECK(a.manifest.components[0].source == (t / "build/ind").string());  // recorded without the slash
  CHECK(a.manifest.components[1].source == (t / "build/tri").string());
  for (const manifest::CacheDir& d : manifest::build_dirs(a.manifest)) CHECK(d.dir.string().back() != '/');
  // A manifest made before the rule, with the slash: the same folder.
  a.manifest.components[1].source += "/";
  CHECK(manifest::build_dirs(a.manifest)[1].dir == t / "build/tri");
  fs::path bad = t / "pod\xff\n/tri";
  std::string message = test::ccpack_error([&] { unpack::PathRelocator r(a.manifest, 1, bad); });
  CHECK(message == "cannot restore triton into " + quoted_path(bad) +
                       ": its path is not valid UTF-8, and the restored pickles and group files would have to name it; restore "
                       "into a UTF-8 path, or with --no-relocate");
  CHECK(message.find("\\xff\\n") != std::string::npos);
  CHECK(test::ccpack_error([&] { unpack::PathRelocator r(a.manifest, 1, t / "pod/tri/"); }) == "(no Error)");
}
