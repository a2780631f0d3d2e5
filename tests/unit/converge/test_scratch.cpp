// converge/scratch.cpp's Scratch: merge's scratch folder is made beside the output (a relative output is taken from
// the working folder), its name is the reserved ".ccpack-merge-" prefix and six characters, it is removed with its
// content when the object goes, and a parent that cannot hold it is refused naming that parent.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "converge/scratch.hpp"
#include "unit/support.hpp"

using namespace ccpack;
namespace fs = std::filesystem;

TEST_CASE("converge::Scratch is a reserved-name folder beside the output, removed at scope exit", "[converge][scratch]") {
  test::ScratchDir t;
  fs::path made;
  {
    converge::Scratch s(t / "merged.ccpack");
    made = s.path();
    CHECK(made.parent_path() == t.path());
    std::string name = made.filename().string();
    CHECK(name.starts_with(".ccpack-merge-"));
    CHECK(name.size() == std::string(".ccpack-merge-").size() + 6);
    CHECK(fs::is_directory(made));
    test::write_file(made / "sub/file", "x");
  }
  CHECK_FALSE(fs::exists(made));
}

TEST_CASE("converge::Scratch takes a relative output from the working folder", "[converge][scratch]") {
  test::ScratchDir t;
  fs::path old = fs::current_path();
  fs::current_path(t.path());
  fs::path parent;
  try {
    converge::Scratch s("out.ccpack");
    parent = s.path().parent_path();
  } catch (...) {
    fs::current_path(old);
    throw;
  }
  fs::current_path(old);
  CHECK(fs::equivalent(parent, t.path()));
}

TEST_CASE("converge::Scratch refuses an output whose folder is missing, naming the folder", "[converge][scratch]") {
  test::ScratchDir t;
  std::string message = test::ccpack_error([&] { converge::Scratch s(t / "missing/out.ccpack"); });
  CHECK(message.starts_with("cannot make a scratch folder in "));
  CHECK(message.find((t / "missing").string()) != std::string::npos);
}
