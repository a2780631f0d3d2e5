// registries.conf (registry/mirrors.hpp): the TOML subset podman's files use, the longest-prefix match, the
// rewritten locations, and errors that name the file and line.
#include <catch2/catch.hpp>

#include "registry/mirrors.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"
#include "util/fs.hpp"

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
  CHECK_THROWS_WITH(
      registry::pull_endpoints(conf(), registry::oci::parse_reference("registry.example.com/ml/private/x:1"), false),
      Catch::Contains("is blocked"));
  auto other = registry::pull_endpoints(conf(), registry::oci::parse_reference("registry.example.community/x:1"), true);
  REQUIRE(other.size() == 1);
  CHECK(other[0].host == "registry.example.community");
  CHECK(other[0].insecure);  // --plain-http
}

TEST_CASE("registries.conf: errors name the file and line") {
  CHECK_THROWS_WITH(registry::parse_registries_conf("[[registry]]\nprefix = \"x\n", "a.conf"),
                    Catch::Contains("a.conf:2: unterminated string"));
  CHECK_THROWS_WITH(registry::parse_registries_conf("[[registry.mirror]]\nlocation = \"m\"\n", "b.conf"),
                    Catch::Contains("b.conf:1: [[registry.mirror]] before any [[registry]]"));
  CHECK_THROWS_WITH(registry::parse_registries_conf("[[registry]]\nprefix = \"x\"\ninsecure = yes\n", "c.conf"),
                    Catch::Contains("c.conf:3: expected a quoted string, true or false"));
}

TEST_CASE("registries.conf: a device is read only to its size limit, and a folder is refused") {
  std::string zero = test::ccpack_error([] { (void)registry::load_registries_conf("/dev/zero"); });
  CHECK(zero == "registries configuration '/dev/zero' is larger than 1 MiB");
  test::ScratchDir dir;
  CHECK(test::ccpack_error([&] { (void)registry::load_registries_conf(dir.path().string()); }) ==
        "registries configuration " + quoted_path(dir.path()) + " is a folder, not a file");
  test::ScopedEnv env("CONTAINERS_REGISTRIES_CONF", dir.path().string());
  CHECK(test::ccpack_error([&] { (void)registry::load_registries_conf(""); }) ==
        "registries configuration " + quoted_path(dir.path()) + " is a folder, not a file");
}

TEST_CASE("registries.conf: a parse error escapes the file's name onto one line") {
  test::ScratchDir dir;
  std::filesystem::path file = dir / "a\nccpack: error: \x1b[2Jforged.conf";
  test::write_file(file, "[[registry]]\nprefix = \"x\n");
  std::string message = test::ccpack_error([&] { (void)registry::load_registries_conf(file.string()); });
  CHECK(message.find('\n') == std::string::npos);
  CHECK(message.find('\x1b') == std::string::npos);
  CHECK(message == escaped(file.string()) + ":2: unterminated string (containers-registries.conf(5))");
}

TEST_CASE("registries.conf: a location with a scheme is a configuration error naming the entry") {
  auto usage = [](const char* text) { return test::usage_error([&] { (void)registry::parse_registries_conf(text, "s.conf"); }); };
  CHECK(usage("[[registry]]\nprefix = \"r.example\"\nlocation = \"http://r.example\"\n") ==
        "s.conf: the [[registry]] 'r.example' has location 'http://r.example': write host[:port][/path] without http:// or "
        "https:// (insecure = true for plain HTTP)");
  CHECK(usage("[[registry]]\nprefix = \"r.example\"\n[[registry.mirror]]\nlocation = \"https://m.local/c\"\n") ==
        "s.conf: the [[registry]] 'r.example' has [[registry.mirror]] location 'https://m.local/c': write host[:port][/path] "
        "without http:// or https:// (insecure = true for plain HTTP)");
  CHECK(usage("[[registry]]\nlocation = \"httpd.example/x\"\n") == "(no UsageError)");
}
