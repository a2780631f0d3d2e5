// unpack/swap_set.cpp's swap_all: staged folders replace their targets (absent or present), by renameat2 or by the
// two-renames fallback, the old content removed after the last swap; a failure at the k-th swap puts the first k
// back, so every target holds what it held before and every staging folder its new content.
#include <catch2/catch.hpp>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "unit/support.hpp"
#include "unpack/installer.hpp"
#include "unpack/swap_set.hpp"
#include "util/error.hpp"

using namespace ccpack;
using test::error_of;
namespace fs = std::filesystem;

namespace {

// Two targets: `old/a` exists with old content, `old/b` does not; two staging folders hold the new content.
std::vector<unpack::StagedFolder> stage(const test::ScratchDir& t) {
  test::write_file(t / "old/a/file", "old a\n");
  fs::create_directories(t / "old");
  test::write_file(t / "stage-a/file", "new a\n");
  test::write_file(t / "stage-b/file", "new b\n");
  return {{t / "stage-a", t / "old/a", t / "aside-a"}, {t / "stage-b", t / "old/b", t / "aside-b"}};
}

}  // namespace

TEST_CASE("swap_all: each staged folder replaces its target, the old content goes, nothing is left beside") {
  for (bool fallback : {false, true}) {
    test::ScratchDir t;
    auto folders = stage(t);
    unpack::FaultHook hook;
    if (fallback) hook = [](unpack::FaultPoint point, std::size_t) { return point == unpack::FaultPoint::rename_flags; };
    unpack::swap_all(folders, hook);
    CHECK(test::slurp(t / "old/a/file") == "new a\n");
    CHECK(test::slurp(t / "old/b/file") == "new b\n");
    for (const char* gone : {"stage-a", "stage-b", "aside-a", "aside-b"}) {
      INFO(gone << (fallback ? " (two renames)" : " (renameat2)"));
      CHECK_FALSE(fs::exists(t / gone));
    }
  }
}

TEST_CASE("swap_all: a failure at the second swap puts the first back, by either way of swapping") {
  for (bool fallback : {false, true}) {
    test::ScratchDir t;
    auto folders = stage(t);
    unpack::FaultHook hook = [fallback](unpack::FaultPoint point, std::size_t i) {
      if (point == unpack::FaultPoint::swap && i == 1) throw Error("injected at swap 1");
      return fallback && point == unpack::FaultPoint::rename_flags;
    };
    CHECK(error_of([&] { unpack::swap_all(folders, hook); }) == "injected at swap 1");
    CHECK(test::slurp(t / "old/a/file") == "old a\n");
    CHECK_FALSE(fs::exists(t / "old/b"));
    CHECK(test::slurp(t / "stage-a/file") == "new a\n");
    CHECK(test::slurp(t / "stage-b/file") == "new b\n");
    CHECK_FALSE(fs::exists(t / "aside-a"));
  }
}

TEST_CASE("swap_all: a target that is a file is refused by name, and the swaps before it are undone") {
  for (bool fallback : {false, true}) {
    test::ScratchDir t;
    auto folders = stage(t);
    test::write_file(t / "old/b", "a file\n");
    unpack::FaultHook hook;
    if (fallback) hook = [](unpack::FaultPoint point, std::size_t) { return point == unpack::FaultPoint::rename_flags; };
    CHECK(error_of([&] { unpack::swap_all(folders, hook); }) ==
          "cannot restore into '" + (t / "old/b").string() + "': it exists and is not a folder");
    CHECK(test::slurp(t / "old/a/file") == "old a\n");
    CHECK(test::slurp(t / "old/b") == "a file\n");
    CHECK(test::slurp(t / "stage-a/file") == "new a\n");
    CHECK(test::slurp(t / "stage-b/file") == "new b\n");
  }
}
