// util/scratch_folder.cpp: the folder is made beside its result with the prefix given, removed with what it holds
// when the object goes (also when unwinding), and an unusable parent is an error naming it.
#include <catch2/catch.hpp>
#include <stdexcept>

#include "unit/support.hpp"
#include "util/error.hpp"
#include "util/scratch_folder.hpp"

using namespace ccpack;
namespace fs = std::filesystem;

TEST_CASE("scratch folder: made with its prefix, removed with its content when it goes", "[scratch_folder]") {
  test::ScratchDir t;
  fs::path kept;
  {
    ScratchFolder s(t.path(), ".ccpack-test-");
    kept = s.path();
    CHECK(kept.parent_path() == t.path());
    CHECK(kept.filename().string().starts_with(".ccpack-test-"));
    CHECK(kept.filename().string().size() == std::string(".ccpack-test-").size() + 6);
    CHECK(fs::is_directory(kept));
    test::write_file(kept / "a/b", "x");
  }
  CHECK_FALSE(fs::exists(kept));
  try {
    ScratchFolder s(t.path(), ".ccpack-test-", ScratchFolder::OnSignal::remove);
    kept = s.path();
    throw std::runtime_error("unwinding");
  } catch (const std::runtime_error&) {
  }
  CHECK_FALSE(fs::exists(kept));
  CHECK_THROWS_AS(ScratchFolder(t.path() / "none", ".ccpack-test-"), Error);
}
