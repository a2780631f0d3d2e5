// pack/scanner: create refuses what restore would refuse, naming the path.
#include <catch2/catch.hpp>

#include "manifest/cache_dir.hpp"
#include "pack/scanner.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"

using namespace ccpack;
namespace fs = std::filesystem;

namespace {

pack::ScanResult scan_one(const fs::path& dir) {
  return pack::scan({{"inductor", manifest::ComponentKind::inductor, dir, "test"}});
}

}  // namespace

TEST_CASE("create refuses a symlink that escapes through another symlink") {
  test::ScratchDir t;
  fs::create_directories(t / "c");
  fs::create_symlink(".", t / "c/l2");
  fs::create_symlink("l2/..", t / "c/l1");
  CHECK_THROWS_WITH(scan_one(t / "c"), "refusing to pack symlink '" + (t / "c/l1").string() + "' -> 'l2/..': it leads outside '" +
                                           (t / "c").string() + "' (replace it with the file it points to)");
}

TEST_CASE("create refuses symlink loops and keeps links that stay inside") {
  test::ScratchDir t;
  fs::create_directories(t / "c/sub");
  test::write_file(t / "c/sub/f", "x");
  fs::create_symlink("sub/f", t / "c/ok");
  fs::create_symlink("../ok", t / "c/sub/ok2");
  CHECK(scan_one(t / "c").entries.size() == 5);
  fs::create_symlink("b", t / "c/a");
  fs::create_symlink("a", t / "c/b");
  CHECK_THROWS_WITH(scan_one(t / "c"), "refusing to pack symlink '" + (t / "c/a").string() +
                                           "' -> 'b': resolving it follows more than 40 symlinks (a loop)");
}

TEST_CASE("create refuses names and link targets that are not UTF-8, escaped") {
  test::ScratchDir t;
  test::write_file(t / "c/caf\xe9", "x");
  CHECK_THROWS_AS(scan_one(t / "c"), Error);
  CHECK_THROWS_WITH(scan_one(t / "c"), "cannot pack '" + (t / "c").string() +
                                           "/caf\\xe9': its name is not valid UTF-8 (the manifest is JSON); rename it");
  test::ScratchDir u;
  fs::create_directories(u / "c");
  fs::create_symlink("caf\xe9", u / "c/l");
  CHECK_THROWS_WITH(scan_one(u / "c"),
                    "cannot pack symlink '" + (u / "c/l").string() + "': its target is not valid UTF-8 (the manifest is JSON)");
}

TEST_CASE("skipped names are escaped in the report") {
  test::ScratchDir t;
  test::write_file(t / "c/a\nb.lock", "");
  pack::ScanResult r = scan_one(t / "c");
  REQUIRE(r.skipped.size() == 1);
  CHECK(r.skipped[0] == "inductor/a\\nb.lock (lock file)");
}
