// registries.conf (registry/mirrors.hpp): the TOML subset podman's files use, the longest-prefix match, the
// rewritten locations, and errors that name the file and line.
#include <catch2/catch.hpp>

#include "registry/mirrors.hpp"
#include "util/error.hpp"

using namespace ccpack;

namespace {

const char* kConf = R"(# comment
unqualified-search-registries = [
  "registry.fedoraproject.org", # an array over lines
  "docker.io",
]
[aliases]
"fedora" = "registry.fedoraproject.org/fedora"

[[registry]]
prefix = "registry.example.com"
location = 'registry.example.com'
mirror-by-digest-only = false

[[registry.mirror]]
location = "mirror-a.local:5000/cache"   # a path under the mirror
insecure = true

[[registry.mirror]]
location = "mirror-b.local"

[[registry]]
prefix = "registry.example.com/ml/private"
blocked = true
)";

registry::RegistriesConf conf() {
  registry::RegistriesConf c;
  c.registries = registry::parse_registries_conf(kConf, "test.conf");
  return c;
}

}  // namespace

TEST_CASE("registries.conf: mirrors in order then the origin the rest of the name appended") {
  auto eps = registry::pull_endpoints(conf(), registry::oci::parse_reference("registry.example.com/ml/model:v1"), false);
  REQUIRE(eps.size() == 3);
  CHECK(eps[0].host == "mirror-a.local:5000");
  CHECK(eps[0].repository == "cache/ml/model");
  CHECK(eps[0].insecure);
  CHECK(eps[0].mirror);
  CHECK(eps[1].host == "mirror-b.local");
  CHECK(eps[1].repository == "ml/model");
  CHECK_FALSE(eps[1].insecure);
  CHECK(eps[2].host == "registry.example.com");
  CHECK(eps[2].repository == "ml/model");
  CHECK_FALSE(eps[2].mirror);
}

TEST_CASE("registries.conf: the longest prefix decides and a blocked one refuses and no match: the origin alone") {
  CHECK_THROWS_WITH(registry::pull_endpoints(conf(), registry::oci::parse_reference("registry.example.com/ml/private/x:1"), false),
                    Catch::Contains("is blocked"));
  auto other = registry::pull_endpoints(conf(), registry::oci::parse_reference("registry.example.community/x:1"), true);
  REQUIRE(other.size() == 1);
  CHECK(other[0].host == "registry.example.community");
  CHECK(other[0].insecure);  // --plain-http
}

TEST_CASE("registries.conf: errors name the file and line") {
  CHECK_THROWS_WITH(registry::parse_registries_conf("[[registry]]\nprefix = \"x\n", "a.conf"), Catch::Contains("a.conf:2: unterminated string"));
  CHECK_THROWS_WITH(registry::parse_registries_conf("[[registry.mirror]]\nlocation = \"m\"\n", "b.conf"),
                    Catch::Contains("b.conf:1: [[registry.mirror]] before any [[registry]]"));
  CHECK_THROWS_WITH(registry::parse_registries_conf("[[registry]]\nprefix = \"x\"\ninsecure = yes\n", "c.conf"),
                    Catch::Contains("c.conf:3: expected a quoted string, true or false"));
}
