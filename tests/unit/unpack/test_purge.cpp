// unpack/purge.cpp, the walker on a real disk: debris inside and beside the folders, a restore marker that makes a
// whole folder stale (or cannot be judged), Triton kernel folders judged by their .json, .so files by their ELF
// dynamic section (through the library search folders), links never followed, dry runs that touch nothing, and
// the exact report (paths, rules, reasons, counts and bytes) of each.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "manifest/marker.hpp"
#include "manifest/reserved_names.hpp"
#include "unit/support.hpp"
#include "unpack/purge.hpp"
#include "util/fs.hpp"

using namespace ccpack;
using unpack::PurgeRule;
namespace fs = std::filesystem;

namespace {

// A process id that no process has (above the kernel's pid_max), so its writer is gone.
constexpr const char* kDeadPid = "2147483600";

manifest::Fingerprint purge_a100() {
  manifest::Fingerprint fp;
  fp.set(manifest::field::gpu_arch, "sm_80", "nvml");
  fp.set(manifest::field::gpu_warp_size, "32", "nvml");
  fp.set(manifest::field::triton_version, "3.6.0", "python:dist-info (triton)");
  return fp;
}

std::vector<manifest::CacheDir> one(const std::string& name, manifest::ComponentKind kind, const fs::path& dir) {
  return {{name, kind, dir, "test"}};
}

unpack::PurgeReport purge_run(const std::vector<manifest::CacheDir>& dirs, bool dry_run = false) {
  unpack::PurgeOptions o;
  o.dry_run = dry_run;
  return unpack::purge(dirs, purge_a100(), o);
}

// "rule path folder files bytes: reason" for each removed entry, paths relative to `root`.
std::vector<std::string> removed(const unpack::PurgeReport& r, const fs::path& root) {
  std::vector<std::string> out;
  for (const unpack::PurgedEntry& e : r.removed) {
    out.push_back(std::string(unpack::to_string(e.rule)) + " " + e.path.lexically_relative(root).string() + " " +
                  (e.folder ? "dir " : "file ") + std::to_string(e.files) + " " + std::to_string(e.bytes) + ": " + e.reason);
  }
  return out;
}

std::string kernel_json(int arch, const std::string& version = "3.6.0") {
  return R"({"target": {"backend": "cuda", "arch": )" + std::to_string(arch) + R"(, "warp_size": 32}, "triton_version": ")" +
         version + "\"}";
}

template <typename T>
void put(std::string& b, std::size_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof v);
}

// A minimal ELF64 shared object whose dynamic section needs `needed` (no RUNPATH): header, PT_LOAD over the
// whole file, PT_DYNAMIC at 0x100, the string table at 0x200.
std::string elf_needing(const std::vector<std::string>& needed) {
  std::string b(0x400, '\0');
  std::memcpy(b.data(),
              "\x7f"
              "ELF\x02\x01\x01",
              7);
  put<std::uint64_t>(b, 32, 64);  // e_phoff
  put<std::uint16_t>(b, 54, 56);  // e_phentsize
  put<std::uint16_t>(b, 56, 2);   // e_phnum
  put<std::uint32_t>(b, 64, 1);   // PT_LOAD, offset 0, vaddr 0, filesz 0x400
  put<std::uint64_t>(b, 64 + 32, 0x400);
  put<std::uint32_t>(b, 120, 2);  // PT_DYNAMIC at 0x100
  put<std::uint64_t>(b, 120 + 8, 0x100);
  put<std::uint64_t>(b, 120 + 32, (needed.size() + 3) * 16);
  std::string strings(1, '\0');
  std::size_t at = 0x100;
  for (const std::string& n : needed) {
    put<std::int64_t>(b, at, 1);  // DT_NEEDED
    put<std::int64_t>(b, at + 8, static_cast<std::int64_t>(strings.size()));
    strings += n + '\0';
    at += 16;
  }
  put<std::int64_t>(b, at, 5);  // DT_STRTAB
  put<std::int64_t>(b, at + 8, 0x200);
  put<std::int64_t>(b, at + 16, 10);  // DT_STRSZ
  put<std::int64_t>(b, at + 24, static_cast<std::int64_t>(strings.size()));
  std::memcpy(b.data() + 0x200, strings.data(), strings.size());
  return b;
}

void write_marker(const fs::path& dir, const manifest::Fingerprint& fp) {
  manifest::Marker m;
  m.archive_manifest_sha256 = std::string(64, 'a');
  m.component = "inductor";
  m.restored_by = "ccpack test";
  m.fingerprint = fp;
  test::write_file(dir / manifest::kMarkerName, m.to_json());
}

}  // namespace

TEST_CASE("purge: lock files, dead writers' temporary folders and staging folders go, live writers' stay", "[purge]") {
  test::ScratchDir t;
  const fs::path tri = t / "pod/tri";
  test::write_file(tri / "K1/k.lock", "12345");
  test::write_file(tri / (std::string("tmp.pid_") + kDeadPid + "_9/a.json"), "half");
  test::write_file(tri / ("tmp.pid_" + std::to_string(::getpid()) + "_1/b.json"), "live");
  test::write_file(t / ("pod/.tri.ccpack-staging." + std::string(kDeadPid)) / "old.json", "old!");
  test::write_file(t / ("pod/.tri.ccpack-staging." + std::to_string(::getpid())) / "new.json", "new");
  test::write_file(t / "pod/.other.ccpack-staging.1/x", "not this folder's");
  const auto before = test::snapshot(t / "pod");

  unpack::PurgeReport dry = purge_run(one("triton", manifest::ComponentKind::triton, tri), true);
  CHECK(test::snapshot(t / "pod") == before);
  unpack::PurgeReport r = purge_run(one("triton", manifest::ComponentKind::triton, tri));
  const std::vector<std::string> want = {
      "debris .tri.ccpack-staging.2147483600 dir 1 4: a ccpack staging folder left by a run that ended",
      "debris tri/K1/k.lock file 1 5: a lock file",
      "debris tri/tmp.pid_2147483600_9 dir 1 4: a Triton temporary folder whose writer is gone"};
  std::vector<std::string> got = removed(r, t / "pod");
  std::sort(got.begin() + 1, got.end());  // inside the folder, in readdir order
  CHECK(got == want);
  std::vector<std::string> dry_got = removed(dry, t / "pod");
  std::sort(dry_got.begin() + 1, dry_got.end());
  CHECK(dry_got == want);
  CHECK(r.removed[0].component == "triton");
  CHECK_FALSE(fs::exists(tri / "K1/k.lock"));
  CHECK_FALSE(fs::exists(tri / (std::string("tmp.pid_") + kDeadPid + "_9")));
  CHECK(test::slurp(tri / ("tmp.pid_" + std::to_string(::getpid()) + "_1/b.json")) == "live");
  CHECK(fs::exists(t / ("pod/.tri.ccpack-staging." + std::to_string(::getpid()))));
  CHECK(test::slurp(t / "pod/.other.ccpack-staging.1/x") == "not this folder's");
  CHECK(r.kept_files == 1);  // the live writer's b.json
  // Both folders left are Triton kernel folders by place, and neither holds a kernel .json with a target.
  REQUIRE(r.unjudged == 2);
  std::vector<std::string> unjudged;
  for (const auto& u : r.unjudged_examples) unjudged.push_back(u.path.lexically_relative(t / "pod").string() + ": " + u.reason);
  std::sort(unjudged.begin(), unjudged.end());
  CHECK(unjudged == std::vector<std::string>{"tri/K1: no kernel .json with a target",
                                             "tri/tmp.pid_" + std::to_string(::getpid()) + "_1: no kernel .json with a target"});
  CHECK_FALSE(r.truncated);
  // No debris of the removal itself: a folder is renamed aside, then deleted.
  const std::string live = std::to_string(::getpid());
  CHECK(test::snapshot(t / "pod") ==
        std::map<std::string, std::string>{{".other.ccpack-staging.1", "dir 0755"},
                                           {".other.ccpack-staging.1/x", "file 0644 not this folder's"},
                                           {".tri.ccpack-staging." + live, "dir 0755"},
                                           {".tri.ccpack-staging." + live + "/new.json", "file 0644 new"},
                                           {"tri", "dir 0755"},
                                           {"tri/K1", "dir 0755"},
                                           {"tri/tmp.pid_" + live + "_1", "dir 0755"},
                                           {"tri/tmp.pid_" + live + "_1/b.json", "file 0644 live"}});
}

TEST_CASE("purge: a marker for another machine empties the folder, keeping the folder and its mode", "[purge]") {
  test::ScratchDir t;
  const fs::path ind = t / "pod/ind";
  manifest::Fingerprint other = purge_a100();
  other.set(manifest::field::triton_version, "3.5.0", "python:dist-info (triton)");
  write_marker(ind, other);
  test::write_file(ind / "fx/a.py", "print(1)\n");
  ::chmod(ind.c_str(), 0750);
  unpack::PurgeReport r = purge_run(one("inductor", manifest::ComponentKind::inductor, ind));
  REQUIRE(r.removed.size() == 1);
  CHECK(r.removed[0].rule == PurgeRule::marker);
  CHECK(r.removed[0].path == ind);
  CHECK(r.removed[0].folder);
  CHECK(r.removed[0].files == 2);  // the marker and fx/a.py
  CHECK(r.removed[0].reason == "restored for another machine: inductor stale (triton.version)");
  CHECK(fs::is_empty(ind));
  struct stat st {};
  REQUIRE(::stat(ind.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0750);
  CHECK(test::snapshot(t / "pod") == std::map<std::string, std::string>{{"ind", "dir 0750"}});
}

TEST_CASE("purge: a marker that fits, records nothing, or cannot be read leaves the folder to the other rules", "[purge]") {
  test::ScratchDir t;
  const fs::path ind = t / "ind";
  test::write_file(ind / "fx/a.py", "x");
  test::write_file(ind / "fx/b.lock", "");
  SECTION("fits") {
    write_marker(ind, purge_a100());
    unpack::PurgeReport r = purge_run(one("inductor", manifest::ComponentKind::inductor, ind));
    CHECK(removed(r, t.path()) == std::vector<std::string>{"debris ind/fx/b.lock file 1 0: a lock file"});
    CHECK(r.unjudged == 0);
  }
  SECTION("records no fingerprint: not judged as a whole, and not counted as unjudged") {
    write_marker(ind, manifest::Fingerprint{});
    unpack::PurgeReport r = purge_run(one("inductor", manifest::ComponentKind::inductor, ind));
    CHECK(r.removed.size() == 1);
    CHECK(r.unjudged == 0);
  }
  SECTION("a fingerprint that does not parse: unjudged, named") {
    test::write_file(ind / manifest::kMarkerName, R"({"marker": 1, "archive_manifest_sha256": ")" + std::string(64, 'b') +
                                                      R"(", "component": "inductor", "fingerprint": {"schema": 99}})");
    unpack::PurgeReport r = purge_run(one("inductor", manifest::ComponentKind::inductor, ind));
    CHECK(r.removed.size() == 1);
    REQUIRE(r.unjudged == 1);
    REQUIRE(r.unjudged_examples.size() == 1);
    CHECK(r.unjudged_examples[0].path == ind / manifest::kMarkerName);
    CHECK_THAT(r.unjudged_examples[0].reason, Catch::StartsWith("its fingerprint cannot be read: "));
  }
  CHECK(test::slurp(ind / "fx/a.py") == "x");
  CHECK(fs::exists(ind / manifest::kMarkerName));
}

TEST_CASE("purge: Triton kernel folders judged by their .json, in triton/ and inductor/triton/<device>/", "[purge]") {
  test::ScratchDir t;
  test::write_file(t / "tri/OLD/k.json", kernel_json(90));
  test::write_file(t / "tri/OLD/k.cubin", "cubin");
  test::write_file(t / "tri/OLDV/k.json", kernel_json(80, "3.3.1"));
  test::write_file(t / "tri/GOOD/k.json", kernel_json(80));
  test::write_file(t / "tri/GOOD/__grp__k.json", kernel_json(90));  // a group file: not judged
  test::write_file(t / "tri/NOJSON/k.cubin", "c");
  test::write_file(t / "tri/BADJSON/k.json", "{not json");
  test::write_file(t / "ind/triton/0/DEV/k.json", kernel_json(90));
  test::write_file(t / "ind/fx/OLD/k.json", kernel_json(90));  // not a kernel folder: not judged
  std::vector<manifest::CacheDir> dirs = {{"inductor", manifest::ComponentKind::inductor, t / "ind", "test"},
                                          {"triton", manifest::ComponentKind::triton, t / "tri", "test"}};
  unpack::PurgeReport r = purge_run(dirs);
  std::vector<std::string> got = removed(r, t.path());
  std::sort(got.begin(), got.end());
  CHECK(got == std::vector<std::string>{"triton-kernel ind/triton/0/DEV dir 1 " + std::to_string(kernel_json(90).size()) +
                                            ": built for gpu.arch sm_90 here sm_80",
                                        "triton-kernel tri/OLD dir 2 " + std::to_string(kernel_json(90).size() + 5) +
                                            ": built for gpu.arch sm_90 here sm_80",
                                        "triton-kernel tri/OLDV dir 1 " + std::to_string(kernel_json(80, "3.3.1").size()) +
                                            ": built for triton.version 3.3.1 here 3.6.0"});
  CHECK(fs::exists(t / "tri/GOOD/__grp__k.json"));
  CHECK(fs::exists(t / "ind/fx/OLD/k.json"));
  REQUIRE(r.unjudged == 2);
  std::vector<std::string> unjudged;
  for (const auto& u : r.unjudged_examples) unjudged.push_back(u.path.lexically_relative(t.path()).string() + ": " + u.reason);
  std::sort(unjudged.begin(), unjudged.end());
  CHECK(unjudged ==
        std::vector<std::string>{"tri/BADJSON: no kernel .json with a target", "tri/NOJSON: no kernel .json with a target"});
  CHECK(r.kept_files == 5);  // GOOD's two, NOJSON's, BADJSON's, inductor's fx/OLD/k.json
}

TEST_CASE("purge: a .so is judged by what it needs, through the search folders, driver libraries are not judged", "[purge]") {
  test::ScratchDir t;
  test::write_file(t / "libs/libfound.so.1", "");
  test::ScopedEnv ld("LD_LIBRARY_PATH", std::nullopt);
  test::ScopedEnv search("CCPACK_LIB_SEARCH_DIRS", (t / "libs").string());
  test::write_file(t / "ind/a/ok.so", elf_needing({"libfound.so.1", "libcuda.so.1", "libnvidia-ml.so.1"}));
  test::write_file(t / "ind/a/gone.so.2", elf_needing({"libfound.so.1", "libnosuch.so.7"}));
  test::write_file(t / "ind/a/notelf.so", "#!/bin/sh\n");
  test::write_file(t / "ind/a/readme.txt", "so what");
  unpack::PurgeReport r = purge_run(one("inductor", manifest::ComponentKind::inductor, t / "ind"));
  CHECK(removed(r, t.path()) ==
        std::vector<std::string>{"library ind/a/gone.so.2 file 1 1024: needs 'libnosuch.so.7', which resolves nowhere here"});
  CHECK_FALSE(fs::exists(t / "ind/a/gone.so.2"));
  REQUIRE(r.unjudged_examples.size() == 1);
  CHECK(r.unjudged_examples[0].path == t / "ind/a/notelf.so");
  CHECK(r.unjudged_examples[0].reason == "not an ELF file");
  // ok.so, notelf.so (unjudged, kept) and readme.txt
  CHECK(r.kept_files == 3);
}

TEST_CASE("purge: links are never followed, reserved names are skipped, a linked folder is not walked", "[purge]") {
  test::ScratchDir t;
  test::write_file(t / "outside/victim.lock", "keep me");
  test::write_file(t / "outside/K/k.json", kernel_json(90));
  fs::create_directories(t / "tri");
  fs::create_symlink(t / "outside/victim.lock", t / "tri/link.lock");  // a lock name: the link goes, not its target
  fs::create_symlink(t / "outside/K", t / "tri/K");                    // a kernel folder by name, but a link
  fs::create_symlink(t / "outside", t / ("tri/tmp.pid_" + std::string(kDeadPid)));
  test::write_file(t / "tri" / manifest::kEntriesName, "entries");
  unpack::PurgeReport r = purge_run(one("triton", manifest::ComponentKind::triton, t / "tri"));
  CHECK(removed(r, t.path()) ==
        std::vector<std::string>{"debris tri/link.lock file 1 " + std::to_string((t / "outside/victim.lock").string().size()) +
                                 ": a lock file"});
  CHECK(test::slurp(t / "outside/victim.lock") == "keep me");
  CHECK(fs::exists(t / "outside/K/k.json"));
  CHECK(fs::is_symlink(t / "tri/K"));
  CHECK(r.kept_files == 2);  // the two other links; the entry list is ccpack's own
  // The cache folder itself a link: only what is beside it is looked at.
  fs::create_symlink(t / "outside", t / "linked");
  unpack::PurgeReport linked = purge_run(one("triton", manifest::ComponentKind::triton, t / "linked"));
  CHECK(linked.removed.empty());
  CHECK(linked.kept_files == 0);
  CHECK(test::slurp(t / "outside/victim.lock") == "keep me");
}

TEST_CASE("purge: a missing folder is nothing to do, folders nested past the depth bound are unjudged", "[purge]") {
  test::ScratchDir t;
  unpack::PurgeReport none = purge_run(one("triton", manifest::ComponentKind::triton, t / "no/such"));
  CHECK(none.removed.empty());
  CHECK(none.kept_files == 0);
  fs::path deep = t / "ind";
  for (int i = 0; i <= unpack::kMaxPurgeDepth + 1; ++i) deep /= "d";
  test::write_file(deep / "x.lock", "");
  unpack::PurgeReport r = purge_run(one("inductor", manifest::ComponentKind::inductor, t / "ind"));
  CHECK(r.removed.empty());
  CHECK(fs::exists(deep / "x.lock"));
  REQUIRE(r.unjudged == 1);
  CHECK(r.unjudged_examples[0].reason == "nested deeper than 48 levels");
}

TEST_CASE("library_search_dirs: LD_LIBRARY_PATH, then the override, then torch/lib and the nvidia wheels' lib folders",
          "[purge]") {
  test::ScratchDir t;
  fs::create_directories(t / "sp1/nvidia/cublas/lib");
  fs::create_directories(t / "sp1/nvidia/cudnn/lib");
  fs::create_directories(t / "sp1/nvidia/nolib");
  test::ScopedEnv ld("LD_LIBRARY_PATH", "/ld/a::/ld/b");
  test::ScopedEnv search("CCPACK_LIB_SEARCH_DIRS", "/over");
  manifest::Fingerprint fp;
  fp.set(manifest::field::python_site_packages, (t / "sp1").string() + ", " + (t / "sp2").string(), "python sys.path");
  CHECK(unpack::library_search_dirs(fp) == std::vector<std::string>{"/ld/a", "/ld/b", "/over", (t / "sp1/torch/lib").string(),
                                                                    (t / "sp1/nvidia/cublas/lib").string(),
                                                                    (t / "sp1/nvidia/cudnn/lib").string(),
                                                                    (t / "sp2/torch/lib").string()});
  test::ScopedEnv no_over("CCPACK_LIB_SEARCH_DIRS", std::nullopt);
  std::vector<std::string> standard = unpack::library_search_dirs(manifest::Fingerprint{});
  REQUIRE(standard.size() >= 11);
  CHECK(std::vector<std::string>(standard.begin(), standard.begin() + 11) ==
        std::vector<std::string>{"/ld/a", "/ld/b", "/lib", "/usr/lib", "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
                                 "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64",
                                 "/usr/local/lib"});
}

TEST_CASE("purge: a folder it cannot read is named, never skipped in silence", "[purge]") {
  test::ScratchDir t;
  test::write_file(t / "tri/K1/x.lock", "");
  fs::permissions(t.path(), fs::perms(0755));
  fs::permissions(t / "tri/K1", fs::perms(0));
  std::string message =
      test::error_as_other_user([&] { (void)purge_run(one("triton", manifest::ComponentKind::triton, t / "tri"), true); });
  fs::permissions(t / "tri/K1", fs::perms(0755));
  CHECK(message == "cannot read folder " + quoted_path(t / "tri/K1") + ": Permission denied");
}
