// pack/import_source.cpp on tar archives written byte by byte here (ustar headers: any name, type, mode and link
// a hostile archive could hold): folders mapped by name at any depth or by --map, missing folders added, hard links
// read as copies, transient names skipped, create's order; and every refusal with its exact message and type
// (IntegrityError for an unsafe entry, UsageError for an unmapped one or a bad --map).
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "pack/import_source.hpp"
#include "unit/support.hpp"
#include "unit/ustar.hpp"
#include "util/error.hpp"

using namespace ccpack;
using test::TarEntry;
using test::ustar;
namespace fs = std::filesystem;

namespace {

struct Imported {
  std::vector<std::string> entries;  // "path type mode size [-> link] [= bytes]", in the source's order
  std::vector<std::string> components;
  std::vector<std::string> skipped;
};

Imported import(const test::ScratchDir& t, const std::string& tar, std::vector<std::pair<std::string, std::string>> maps = {},
                manifest::Limits limits = {}) {
  test::write_file(t / "in.tar", tar);
  pack::ImportSource src({t / "in.tar", std::move(maps), t.path(), limits});
  src.open();
  Imported out;
  const manifest::EntryList& list = src.entries();
  for (std::size_t i = 0; i < list.size(); ++i) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", list.mode(i));
    std::string line = list.path(i) + " " + std::to_string(static_cast<int>(list.type(i))) + " " + mode;
    if (list.type(i) == manifest::EntryType::file) {
      std::string bytes(list.file_size(i), '\0');
      src.read_piece(i, 0, bytes.size(), bytes.data());
      line += " " + std::to_string(bytes.size()) + " = " + bytes;
    }
    if (!list.link_target(i).empty()) line += " -> " + std::string(list.link_target(i));
    out.entries.push_back(line);
  }
  for (const manifest::Component& c : src.components()) out.components.push_back(c.name + " " + c.source);
  out.skipped = src.skipped();
  return out;
}

std::string refused(const std::vector<TarEntry>& entries, manifest::Limits limits = {}) {
  test::ScratchDir t;
  return test::integrity_error([&] { (void)import(t, ustar(entries), {}, limits); });
}

std::string usage(const std::vector<TarEntry>& entries, std::vector<std::pair<std::string, std::string>> maps = {}) {
  test::ScratchDir t;
  return test::usage_error([&] { (void)import(t, ustar(entries), std::move(maps)); });
}

}  // namespace

// Entry types as EntryType's numbers: 0 file, 1 dir, 2 symlink (in the listing lines below).
TEST_CASE("import: folders mapped by name at any depth, missing folders added, a hard link a copy, create's order", "[import]") {
  test::ScratchDir t;
  Imported got = import(t, ustar({{"./", '5', "", "", 0755},
                                  {"workspace/", '5', "", "", 0700},
                                  {"workspace/triton_cache/K/k.json", '0', "{\"k\":1}"},
                                  {"workspace/triton_cache/K/l", '2', "", "k.json", 0777},
                                  {"workspace/triton_cache/K/h", '1', "", "workspace/triton_cache/K/k.json"},
                                  {"workspace/inductor_cache/fx/", '5', "", "", 0700},
                                  {"workspace/inductor_cache/fx/a.py", '0', "print(1)\n", "", 0755}}));
  CHECK(got.components == std::vector<std::string>{"inductor " + (t / "in.tar").string() + ":workspace/inductor_cache",
                                                   "triton " + (t / "in.tar").string() + ":workspace/triton_cache"});
  CHECK(got.entries == std::vector<std::string>{"inductor 1 0755", "inductor/fx 1 0700", "triton 1 0755", "triton/K 1 0755",
                                                "inductor/fx/a.py 0 0755 9 = print(1)\n", "triton/K/h 0 0644 7 = {\"k\":1}",
                                                "triton/K/k.json 0 0644 7 = {\"k\":1}", "triton/K/l 2 0777 -> k.json"});
  CHECK(got.skipped.empty());
}

TEST_CASE("import: --map names a folder, by any name, for any component, transient names are skipped once", "[import]") {
  test::ScratchDir t;
  Imported got = import(t,
                        ustar({{"data/c/K/k.json", '0', "{}"},
                               {"data/c/K/k.json.lock", '0', ""},
                               {"data/c/tmp.pid_1_2/", '5', "", "", 0755},
                               {"data/c/tmp.pid_1_2/x", '0', "x"},
                               {"data/c/locks/", '5', "", "", 0755},
                               {"data/c/.ccpack-marker.json", '0', "{}"}}),
                        {pack::parse_map("data/c=triton")});
  CHECK(got.components == std::vector<std::string>{"triton " + (t / "in.tar").string() + ":data/c"});
  CHECK(got.entries == std::vector<std::string>{"triton 1 0755", "triton/K 1 0755", "triton/K/k.json 0 0644 2 = {}"});
  CHECK(got.skipped == std::vector<std::string>{"triton/K/k.json.lock (lock file)",
                                                "triton/tmp.pid_1_2 (Triton temporary folder)", "triton/locks (lock folder)",
                                                "triton/.ccpack-marker.json (ccpack marker or restore debris)"});
}

TEST_CASE("import: unsafe paths, special files, set-id bits and escaping links are refused, escaped", "[import]") {
  CHECK(refused({{"/etc/passwd", '0', "x"}}) == "refusing foreign entry '/etc/passwd': absolute path");
  CHECK(refused({{"inductor_cache/../../x", '0', "x"}}) ==
        "refusing foreign entry 'inductor_cache/../../x': unsafe path (empty, '.' or '..' part)");
  CHECK(refused({{"inductor_cache//x", '0', "x"}}) ==
        "refusing foreign entry 'inductor_cache//x': unsafe path (empty, '.' or '..' part)");
  CHECK(refused({{"inductor_cache/./x", '0', "x"}}) ==
        "refusing foreign entry 'inductor_cache/./x': unsafe path (empty, '.' or '..' part)");
  CHECK(refused({{"/a\nb\x1b", '0', "x"}}) == "refusing foreign entry '/a\\nb\\x1b': absolute path");
  CHECK(refused({{"inductor_cache/p", '6'}}) ==
        "refusing foreign entry 'inductor_cache/p': a FIFO; only files, folders and symlinks can be imported");
  CHECK(refused({{"inductor_cache/tty", '3'}}) ==
        "refusing foreign entry 'inductor_cache/tty': a character device; only files, folders and symlinks can be imported");
  CHECK(refused({{"inductor_cache/su", '0', "x", "", 04755}}) ==
        "refusing foreign entry 'inductor_cache/su': setuid, setgid or sticky bit");
  CHECK(refused({{"inductor_cache/", '5', "", "", 01777}}) ==
        "refusing foreign entry 'inductor_cache/': setuid, setgid or sticky bit");
  CHECK(refused({{"inductor_cache/l", '2', "", "../../etc/passwd", 0777}}) ==
        "refusing foreign entry 'inductor_cache/l': symlink to '../../etc/passwd' leads outside its folder");
  CHECK(refused({{"inductor_cache/l", '2', "", "/etc/passwd", 0777}}) ==
        "refusing foreign entry 'inductor_cache/l': symlink to '/etc/passwd' leads outside its folder");
  CHECK(refused({{"inductor_cache/a/l", '2', "", "../..", 0777}}) ==
        "refusing foreign entry 'inductor_cache/a/l': symlink to '../..' leads outside its folder");
  CHECK(refused({{"inductor_cache/l", '2', "", "", 0777}}) ==
        "refusing foreign entry 'inductor_cache/l': symlink to '' leads outside its folder");
}

TEST_CASE("import: duplicates, bad hard links and entries inside a file are refused", "[import]") {
  CHECK(refused({{"inductor_cache/a", '0', "1"}, {"./inductor_cache/a", '0', "2"}}) ==
        "refusing foreign entry './inductor_cache/a': a second entry for 'inductor/a'");
  CHECK(
      refused({{"inductor_cache/h", '1', "", "inductor_cache/later"}, {"inductor_cache/later", '0', "x"}}) ==
      "refusing foreign entry 'inductor_cache/h': hard link to 'inductor_cache/later', which is not an earlier file of the archive");
  CHECK(
      refused({{"inductor_cache/d/", '5', "", "", 0755}, {"inductor_cache/h", '1', "", "inductor_cache/d"}}) ==
      "refusing foreign entry 'inductor_cache/h': hard link to 'inductor_cache/d', which is not an earlier file of the archive");
  CHECK(refused({{"inductor_cache/h", '1', "", "/etc/passwd"}}) ==
        "refusing foreign entry 'inductor_cache/h': hard link to '/etc/passwd', which is not an earlier file of the archive");
  CHECK(
      refused({{"inductor_cache/a", '0', "1"}, {"inductor_cache/h", '1', "", "inductor_cache/x/../a"}}) ==
      "refusing foreign entry 'inductor_cache/h': hard link to 'inductor_cache/x/../a', which is not an earlier file of the archive");
  CHECK(refused({{"inductor_cache/a", '0', "1"}, {"inductor_cache/a/b", '0', "2"}}) ==
        "refusing foreign entry 'inductor/a/b': it is inside 'inductor/a', which is not a folder");
  CHECK(refused({{"inductor_cache/l", '2', "", "x", 0777}, {"inductor_cache/l/b", '0', "2"}}) ==
        "refusing foreign entry 'inductor/l/b': it is inside 'inductor/l', which is not a folder");
}

TEST_CASE("import: the limits bound entries, path length, file size and total size", "[import]") {
  manifest::Limits few;
  few.max_entries = 2;
  CHECK(refused({{"inductor_cache/a", '0', "1"}, {"inductor_cache/b", '0', "2"}, {"inductor_cache/c", '0', "3"}}, few) ==
        "refusing foreign entry 'inductor_cache/c': more than 2 entries");
  manifest::Limits short_paths;
  short_paths.max_path_length = 20;
  CHECK(refused({{"inductor_cache/abcdefgh", '0', "1"}}, short_paths) ==
        "refusing foreign entry 'inductor_cache/abcdefgh': path longer than 20 bytes");
  manifest::Limits small;
  small.max_file_size = 3;
  CHECK(refused({{"inductor_cache/a", '0', "1234"}}, small) == "refusing foreign entry 'inductor_cache/a': larger than 3 bytes");
  manifest::Limits total;
  total.max_total_size = 5;
  CHECK(refused({{"inductor_cache/a", '0', "123"}, {"inductor_cache/b", '0', "456"}}, total) ==
        "refusing foreign entry 'inductor_cache/b': the files add up to more than the total size limit");
  // Folders added for the entries count too.
  manifest::Limits two;
  two.max_entries = 2;
  test::ScratchDir t;
  CHECK(test::integrity_error([&] {
          (void)import(t, ustar({{"inductor_cache/a/b", '0', "1"}}), {}, two);
        }) == "foreign archive '" + (t / "in.tar").string() + "' has too many entries");
}

TEST_CASE("import: entries outside the cache folders, clashing or empty --map folders are usage errors", "[import]") {
  const std::string known = " is outside the cache folders (inductor_cache, torchinductor_*, triton_cache); ";
  CHECK(usage({{"README", '0', "hi"}, {"inductor_cache/a", '0', "1"}}) ==
        "foreign entry 'README'" + known + "map its folder with --map PATH=COMPONENT");
  CHECK(usage({{"other/", '5', "", "", 0755}, {"inductor_cache/a", '0', "1"}}) ==
        "foreign folder 'other'" + known + "map it with --map PATH=COMPONENT");
  CHECK(usage({{"inductor_cache/a", '0', "1"}, {"x/torchinductor_root/b", '0', "2"}}) ==
        "folder 'x/torchinductor_root' and 'inductor_cache' are both inductor; choose one with --map PATH=COMPONENT");
  CHECK(usage({{"a/b/c", '0', "1"}}, {{"a", "triton"}, {"a/b", "extra1"}}) == "--map a/b=extra1 overlaps 'a'");
  CHECK(usage({{"a/c", '0', "1"}}, {{"a", "Bad Name"}}) == "--map a=Bad Name: 'Bad Name' is not a valid component name");
  CHECK(usage({{"a/c", '0', "1"}}, {{"./", "triton"}}) == "--map ./=triton: the path is empty");
  test::ScratchDir t;
  CHECK(test::usage_error([&] {
          (void)import(t, ustar({{"a/c", '0', "1"}}), {{"a", "triton"}, {"none", "extra1"}});
        }) == "--map: no entry of the foreign archive is in '" + (t / "in.tar").string() + ":none'");
  CHECK(test::integrity_error([&] {
          (void)import(t, ustar({{"a/c", '0', "1"}}), {{"/abs", "triton"}});
        }) == "refusing foreign entry '/abs': absolute path");
}

TEST_CASE("import: a truncated archive is refused naming the file, never imported in part", "[import]") {
  test::ScratchDir t;
  std::string whole = ustar({{"inductor_cache/a", '0', std::string(2000, 'a')}});
  std::string cut = whole.substr(0, 512 + 700);
  CHECK_THAT(test::ccpack_error([&] { (void)import(t, cut); }),
             Catch::StartsWith("foreign archive '" + (t / "in.tar").string() + "'"));
}

TEST_CASE("parse_map: PATH=COMPONENT split at the last '=', anything else named", "[import]") {
  CHECK(pack::parse_map("workspace/cache=inductor") == std::pair<std::string, std::string>{"workspace/cache", "inductor"});
  CHECK(pack::parse_map("a=b=c") == std::pair<std::string, std::string>{"a=b", "c"});
  const std::string want = "--map expects PATH=COMPONENT (e.g. workspace/cache=inductor), got ";
  CHECK(test::usage_error([] { (void)pack::parse_map("cache"); }) == want + "'cache'");
  CHECK(test::usage_error([] { (void)pack::parse_map("=inductor"); }) == want + "'=inductor'");
  CHECK(test::usage_error([] { (void)pack::parse_map("cache="); }) == want + "'cache='");
  CHECK(test::usage_error([] { (void)pack::parse_map("a\nb"); }) == want + "'a\\nb'");
}

TEST_CASE("libarchive_version: the compiled and the loaded version, numbers only", "[import]") {
  pack::LibraryVersion v = pack::libarchive_version();
  CHECK_FALSE(v.built.empty());
  CHECK(v.built.find_first_not_of("0123456789.") == std::string::npos);
  CHECK_FALSE(v.runs.empty());
  CHECK(v.runs.find("libarchive") == std::string::npos);
  CHECK(v.runs.substr(0, v.runs.find(' ')).find_first_not_of("0123456789.") == std::string::npos);
}
