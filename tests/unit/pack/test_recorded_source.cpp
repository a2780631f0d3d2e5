// pack/recorded_source.cpp: the files come from the folders read, the components name the folders recorded (same
// names), and a component with no recorded folder keeps the folder it was read from.
#include <catch2/catch.hpp>
#include <filesystem>

#include "pack/recorded_source.hpp"
#include "unit/support.hpp"

using namespace ccpack;
namespace fs = std::filesystem;

TEST_CASE("recorded source: bytes from the folders read, build folders from the folders recorded", "[recorded_source]") {
  test::ScratchDir t;
  test::write_file(t / "scratch/inductor/a.py", "a");
  test::write_file(t / "scratch/triton/K/k.json", "{}");
  const manifest::CacheDir read_inductor{"inductor", manifest::ComponentKind::inductor, t / "scratch/inductor", "test"};
  const manifest::CacheDir read_triton{"triton", manifest::ComponentKind::triton, t / "scratch/triton", "test"};
  const manifest::CacheDir user_inductor{"inductor", manifest::ComponentKind::inductor, "/home/u/inductor", "test"};
  pack::RecordedSource source({read_inductor, read_triton}, {user_inductor});
  source.open();
  std::vector<manifest::Component> components = source.components();
  REQUIRE(components.size() == 2);
  CHECK(components[0].name == "inductor");
  CHECK(components[0].source == "/home/u/inductor");
  CHECK(components[1].name == "triton");
  CHECK(components[1].source == (t / "scratch/triton").string());
  bool found = false;
  for (std::size_t i = 0; i < source.entries().size(); ++i) {
    if (source.source_of(i) == t / "scratch/inductor/a.py") found = true;
  }
  CHECK(found);
}
