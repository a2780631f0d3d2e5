// manifest::build_dirs: the folders an archive's components were packed from, for restore --at-build-paths. A
// hostile manifest may name any source, so a relative one is refused, naming the component, and an absolute one
// is normalised before anything is written there.
#include <catch2/catch.hpp>

#include "manifest/cache_dir.hpp"
#include "util/error.hpp"

using namespace ccpack;

namespace {

manifest::Manifest with_sources(const std::vector<std::pair<std::string, std::string>>& sources) {
  manifest::Manifest m;
  for (const auto& [name, source] : sources) {
    manifest::Component c;
    c.name = name;
    c.kind = name == "inductor" ? manifest::ComponentKind::inductor
             : name == "triton" ? manifest::ComponentKind::triton
                                : manifest::ComponentKind::extra;
    c.source = source;
    m.components.push_back(c);
  }
  return m;
}

}  // namespace

TEST_CASE("build_dirs: each component's build folder, in manifest order, normalised, with its kind") {
  auto dirs = manifest::build_dirs(with_sources({{"inductor", "/b/x/../ind/"}, {"triton", "/b/tri"}, {"ext", "/b/ext"}}));
  REQUIRE(dirs.size() == 3);
  CHECK(dirs[0].name == "inductor");
  CHECK(dirs[0].kind == manifest::ComponentKind::inductor);
  CHECK(dirs[0].dir == "/b/ind");  // the one rule (manifest::normal_folder): no trailing slash
  CHECK(dirs[1].dir == "/b/tri");
  CHECK(dirs[2].kind == manifest::ComponentKind::extra);
  CHECK(dirs[2].origin == "--at-build-paths");
}

TEST_CASE("build_dirs: a relative or empty source is refused, naming the component") {
  CHECK_THROWS_WITH(manifest::build_dirs(with_sources({{"inductor", "/b/ind"}, {"triton", "rel/tri"}})),
                    "manifest field 'components' does not record an absolute build folder for 'triton'");
  CHECK_THROWS_AS(manifest::build_dirs(with_sources({{"inductor", ""}})), IntegrityError);
}
