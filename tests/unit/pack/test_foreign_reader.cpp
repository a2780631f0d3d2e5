// pack/foreign_reader.cpp: entries of a foreign archive as stored (kind, mode, size, link target, data) from tar,
// tar.gz and tar.zst, one written with a window past libarchive's (zstd --long=30, ccpack's own decoder), and
// zip; a file that is no archive refused by name. The archives are made here by the system's tar, zstd and zip.
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <string>

#include "pack/foreign_reader.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"
#include "util/subprocess.hpp"

using namespace ccpack;
using Kind = pack::ForeignEntry::Kind;
namespace fs = std::filesystem;

namespace {

void run(const std::vector<std::string>& argv) {
  RunLimits limits;
  limits.timeout = std::chrono::milliseconds(60'000);
  RunResult r = run_program(argv, limits);
  INFO(argv[0] << ": " << r.why(limits));
  REQUIRE(r.ok());
}

// Each entry as "path|kind|mode|size|link|data", one a line, sorted by path.
std::string listing(const std::map<std::string, std::string>& entries) {
  std::string out;
  for (const auto& [path, what] : entries) out += path + "|" + what + "\n";
  return out;
}

// path -> "kind|mode|size|link|data" of every entry.
std::map<std::string, std::string> read_all(const fs::path& archive, std::string* describe = nullptr) {
  pack::ForeignReader reader(archive);
  std::map<std::string, std::string> out;
  pack::ForeignEntry e;
  while (reader.next(e)) {
    std::string data;
    char buf[7];
    for (std::size_t n; (n = reader.read(buf, sizeof buf)) > 0;) data.append(buf, n);
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", e.mode);
    out[e.path] = e.kind_name + "|" + mode + "|" + std::to_string(e.size) + "|" + e.link_target + "|" + data;
    if (describe != nullptr) *describe = reader.describe();
  }
  return out;
}

}  // namespace

TEST_CASE("ForeignReader: tar, tar.gz, tar.zst (also past libarchive's window) give the same entries") {
  test::ScratchDir t;
  test::write_file(t / "src/cache/a.py", "print('a')\n");
  test::write_file(t / "src/cache/run.sh", "#!/bin/sh\n", 0755);
  fs::create_symlink("a.py", t / "src/cache/link");
  fs::create_hard_link(t / "src/cache/a.py", t / "src/cache/hard");
  const std::string src = (t / "src").string();
  run({"tar", "--sort=name", "--owner=0", "--group=0", "-C", src, "-cf", (t / "c.tar").string(), "cache"});
  run({"sh", "-c", "gzip -c '" + (t / "c.tar").string() + "' >'" + (t / "c.tar.gz").string() + "'"});
  run({"zstd", "-q", (t / "c.tar").string(), "-o", (t / "c.tar.zst").string()});
  // From a pipe the size is unknown, so the frame keeps its 1 GiB window (from a file zstd shrinks it to fit).
  run({"sh", "-c", "zstd -q --long=30 -c <'" + (t / "c.tar").string() + "' >'" + (t / "long.tar.zst").string() + "'"});
  const std::string want =
      "cache/|folder|0755|0||\n"
      "cache/a.py|file|0644|11||print('a')\n\n"
      "cache/hard|hard link|0644|0|cache/a.py|\n"
      "cache/link|symlink|0777|0|a.py|\n"
      "cache/run.sh|file|0755|10||#!/bin/sh\n\n";
  std::string describe;
  CHECK(listing(read_all(t / "c.tar", &describe)) == want);
  CHECK(describe == "GNU tar format");
  CHECK(listing(read_all(t / "c.tar.gz", &describe)) == want);
  CHECK(describe == "GNU tar format, gzip");
  CHECK(listing(read_all(t / "c.tar.zst", &describe)) == want);
  CHECK(describe == "GNU tar format, zstd");
  CHECK(listing(read_all(t / "long.tar.zst", &describe)) == want);
  CHECK(describe == "GNU tar format, zstd (ccpack's decoder)");
}

TEST_CASE("ForeignReader: zip entries, a file that is no archive is refused by name") {
  test::ScratchDir t;
  test::write_file(t / "src/z/k.json", "{}");
  run({"sh", "-c", "cd '" + (t / "src").string() + "' && zip -q -r '" + (t / "c.zip").string() + "' z"});
  auto entries = read_all(t / "c.zip");
  REQUIRE(entries.count("z/k.json") == 1);
  CHECK(entries["z/k.json"] == "file|0644|2||{}");
  test::write_file(t / "notes.txt", "just text, no archive\n");
  CHECK_THROWS_AS(pack::ForeignReader(t / "notes.txt"), IntegrityError);
  CHECK_THROWS_WITH(pack::ForeignReader(t / "notes.txt"),
                    Catch::StartsWith("foreign archive '" + (t / "notes.txt").string() + "': "));
  CHECK_THROWS_WITH(pack::ForeignReader(t.path()), "'" + t.path().string() + "' is not a file");
}
