// Cache folders (cli/cache_dirs): the rules torch and triton use, in their order of precedence (flag, variable, default).
#include <catch2/catch.hpp>
#include <cstdlib>

#include "cli/cache_dirs.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"

using namespace ccpack;
namespace fs = std::filesystem;

namespace {

using test::ScopedEnv;

}  // namespace

TEST_CASE("locations: defaults follow tempfile.gettempdir, getpass.getuser and TRITON_HOME") {
  ScopedEnv a("TORCHINDUCTOR_CACHE_DIR", std::nullopt), b("TRITON_CACHE_DIR", std::nullopt), c("TMPDIR", "/scratch/t"),
      d("LOGNAME", "alice"), e("TRITON_HOME", std::nullopt), f("HOME", "/home/alice");
  auto dirs = cli::resolve_cache_dirs({});
  REQUIRE(dirs.size() == 2);
  CHECK(dirs[0].dir == "/scratch/t/torchinductor_alice");
  CHECK(dirs[0].origin == "default");
  CHECK(dirs[1].dir == "/home/alice/.triton/cache");
  ScopedEnv g("TRITON_HOME", "/opt/th");
  CHECK(cli::resolve_cache_dirs({})[1].dir == "/opt/th/.triton/cache");
}

TEST_CASE("locations: variables beat defaults, flags beat variables, paths are made absolute and normal") {
  ScopedEnv a("TORCHINDUCTOR_CACHE_DIR", "/v/ind/"), b("TRITON_CACHE_DIR", "/v/x/../tri");
  auto dirs = cli::resolve_cache_dirs({});
  CHECK(dirs[0].dir == "/v/ind");  // no trailing slash: the one rule, manifest::normal_folder
  CHECK(dirs[0].origin == "TORCHINDUCTOR_CACHE_DIR");
  CHECK(dirs[1].dir == "/v/tri");
  cli::CacheDirOptions o;
  o.triton_dir = "/f/tri";
  o.extras.push_back({"ext", "rel/ext"});
  dirs = cli::resolve_cache_dirs(o);
  CHECK(dirs[1].dir == "/f/tri");
  CHECK(dirs[1].origin == "--triton-dir");
  REQUIRE(dirs.size() == 3);
  CHECK(dirs[2].kind == manifest::ComponentKind::extra);
  CHECK(dirs[2].dir == fs::current_path() / "rel/ext");
  o.inductor_dir = "/f/./ind/";
  o.extras = {{"ext", "/e/x/..//ext//"}};
  dirs = cli::resolve_cache_dirs(o);
  CHECK(dirs[0].dir.string() == "/f/ind");
  CHECK(dirs[2].dir.string() == "/e/ext");
}

TEST_CASE("locations: one rule for a folder path: . and .. lexically, no trailing slash, the root kept") {
  CHECK(manifest::normal_folder("/p/ind/").string() == "/p/ind");
  CHECK(manifest::normal_folder("/p/ind//").string() == "/p/ind");
  CHECK(manifest::normal_folder("/p/./x/../ind/.").string() == "/p/ind");
  CHECK(manifest::normal_folder("/").string() == "/");
  CHECK(manifest::normal_folder("//").string() == "/");
  CHECK(manifest::normal_folder("rel/").string() == (fs::current_path() / "rel").string());
}

TEST_CASE("locations: --add values are checked") {
  CHECK(cli::parse_named_dir("ext=/x").first == "ext");
  CHECK_THROWS_WITH(cli::parse_named_dir("nodir"), "--add expects NAME=DIR, got 'nodir'");
  CHECK_THROWS_AS(cli::parse_named_dir("triton=/x"), UsageError);
  CHECK_THROWS_AS(cli::parse_named_dir("../x=/x"), UsageError);
  cli::CacheDirOptions o;
  o.extras = {{"ext", "/a"}, {"ext", "/b"}};
  CHECK_THROWS_WITH(cli::resolve_cache_dirs(o), "--add ext is given twice");
}
