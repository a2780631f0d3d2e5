// registry/auth.cpp: credentials read as docker, podman and skopeo read them (config files, the order of the
// files, credential helpers run as programs), WWW-Authenticate challenges, and base64. Exact fields and exact
// error text; a secret never appears in a message.
#include <catch2/catch.hpp>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "registry/auth.hpp"
#include "unit/support.hpp"
#include "util/base64.hpp"
#include "util/error.hpp"

using namespace ccpack;
using namespace ccpack::registry;
namespace fs = std::filesystem;

namespace {

using test::ScopedEnv;

// A docker-credential-NAME program in `bin` that prints `out` and exits with `code`; it records its stdin.
void write_helper(const fs::path& bin, const std::string& name, const std::string& out, int code = 0) {
  test::write_file(
      bin / ("docker-credential-" + name),
      "#!/bin/sh\n[ \"$1\" = get ] || exit 3\ncat >\"$0.stdin\"\nprintf '%s' '" + out + "'\nexit " + std::to_string(code) + "\n",
      0755);
}

// Only ccpack's own errors: anything else the reader throws fails the test.
using test::ccpack_error;

}  // namespace

TEST_CASE("base64 both ways") {
  CHECK(base64_encode("") == "");
  CHECK(base64_encode("f") == "Zg==");
  CHECK(base64_encode("fo") == "Zm8=");
  CHECK(base64_encode("foo") == "Zm9v");
  CHECK(base64_encode("user:p@ss") == "dXNlcjpwQHNz");
  CHECK(base64_decode("dXNlcjpwQHNz") == "user:p@ss");
  CHECK(base64_decode("Zg==") == "f");
  CHECK(base64_decode("Zm8") == "fo");
  CHECK_FALSE(base64_decode("Zm9v!"));
  CHECK_FALSE(base64_decode("Z"));
}

TEST_CASE("credentials from a config file: auth, username/password, identitytoken, helpers") {
  std::string file = R"({"auths":{
      "127.0.0.1:5000":{"auth":"dXNlcjpwQHNz"},
      "https://index.docker.io/v1/":{"username":"hub","password":"pw"},
      "quay.io":{"auth":"","identitytoken":"refresh-123"}},
    "credHelpers":{"gcr.io":"gcloud"}, "credsStore":"desktop"})";
  std::string helper;
  auto c = credentials_in_config(file, "127.0.0.1:5000", "cfg.json", &helper);
  REQUIRE(c);
  CHECK(c->username == "user");
  CHECK(c->password == "p@ss");
  CHECK(c->source == "cfg.json");
  c = credentials_in_config(file, "docker.io", "cfg.json", &helper);
  REQUIRE(c);
  CHECK(c->username == "hub");
  c = credentials_in_config(file, "quay.io", "cfg.json", &helper);
  REQUIRE(c);
  CHECK(c->identity_token == "refresh-123");
  CHECK_FALSE(credentials_in_config(file, "gcr.io", "cfg.json", &helper));
  CHECK(helper == "gcloud");
  helper.clear();
  CHECK_FALSE(credentials_in_config(file, "other:1", "cfg.json", &helper));
  CHECK(helper == "desktop");
  // Malformed files are named, their secrets are not.
  CHECK_THROWS_WITH(credentials_in_config(R"({"auths":{"h:1":{"auth":"bm9jb2xvbg=="}}})", "h:1", "cfg.json", nullptr),
                    "auth file 'cfg.json': the 'auth' of h:1 is not base64 of user:password");
  CHECK_THROWS_WITH(credentials_in_config("nope", "h:1", "cfg.json", nullptr), "auth file 'cfg.json': is not a JSON object");
}

TEST_CASE("find_credentials: --authfile wins, then REGISTRY_AUTH_FILE, then DOCKER_CONFIG") {
  test::ScratchDir dir;
  test::write_file(dir / "flag.json", R"({"auths":{"r:1":{"username":"flag","password":"x"}}})");
  test::write_file(dir / "env.json", R"({"auths":{"r:1":{"username":"env","password":"x"}}})");
  std::filesystem::create_directories(dir / "docker");
  test::write_file(dir / "docker/config.json", R"({"auths":{"r:1":{"username":"docker","password":"x"}}})");
  const char* home = std::getenv("HOME");
  std::string saved_home = home ? home : "";
  ::setenv("DOCKER_CONFIG", (dir / "docker").c_str(), 1);
  ::setenv("HOME", dir.path().c_str(), 1);
  ::unsetenv("XDG_RUNTIME_DIR");
  ::unsetenv("REGISTRY_AUTH_FILE");
  CHECK(find_credentials("r:1", "")->username == "docker");
  CHECK_FALSE(find_credentials("other:1", ""));
  ::setenv("REGISTRY_AUTH_FILE", (dir / "env.json").c_str(), 1);
  CHECK(find_credentials("r:1", "")->username == "env");
  CHECK(find_credentials("r:1", (dir / "flag.json").string())->username == "flag");
  CHECK_THROWS_WITH(find_credentials("r:1", (dir / "missing.json").string()), Catch::Contains("does not exist"));
  ::unsetenv("REGISTRY_AUTH_FILE");
  ::unsetenv("DOCKER_CONFIG");
  ::setenv("HOME", saved_home.c_str(), 1);
}

TEST_CASE("WWW-Authenticate challenges") {
  auto c = parse_challenge(R"(Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull")");
  REQUIRE(c);
  CHECK(c->scheme == "bearer");
  CHECK(c->realm == "https://auth.example/token");
  CHECK(c->service == "registry.example");
  CHECK(c->scope == "repository:a/b:pull");
  c = parse_challenge(R"(Basic realm="with \"quotes\", and commas")");
  REQUIRE(c);
  CHECK(c->scheme == "basic");
  CHECK(c->realm == R"(with "quotes", and commas)");
  CHECK_FALSE(parse_challenge(""));
  CHECK_FALSE(parse_challenge(R"(Bearer realm="unterminated)"));
  CHECK_FALSE(parse_challenge("Bearer realm=\"" + std::string(5000, 'x') + "\""));
}

TEST_CASE("base64: the URL-safe alphabet decodes too, and bytes above 0x7f round-trip") {
  CHECK(base64_decode("-_-_") == std::string("\xfb\xff\xbf", 3));
  CHECK(base64_decode("+/+/") == std::string("\xfb\xff\xbf", 3));
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  CHECK(base64_decode(base64_encode(all)) == all);
  CHECK(base64_encode(std::string("\0\0\0", 3)) == "AAAA");
  CHECK_FALSE(base64_decode("Zm9v Zm9v"));  // no blanks inside
}

TEST_CASE("credentials_in_config: aliases of Docker Hub, empty entries, and malformed entries named") {
  std::string hub = R"({"auths":{"registry-1.docker.io":{"username":"u","password":"p"}}})";
  for (const char* name : {"docker.io", "index.docker.io", "registry-1.docker.io"}) {
    auto c = credentials_in_config(hub, name, "cfg.json", nullptr);
    REQUIRE(c);
    CHECK(c->username == "u");
    CHECK(c->password == "p");
    CHECK(c->identity_token.empty());
  }
  // A key with a scheme and a path names its host; another port is another registry.
  std::string keyed = R"({"auths":{"https://r.example:5000/v1/":{"username":"k","password":"p"}}})";
  CHECK(credentials_in_config(keyed, "r.example:5000", "cfg.json", nullptr)->username == "k");
  CHECK_FALSE(credentials_in_config(keyed, "r.example:5001", "cfg.json", nullptr));
  CHECK_FALSE(credentials_in_config(keyed, "r.example", "cfg.json", nullptr));
  // An entry without a user name or token is no credential (a docker logout leaves {}), and no helper is named.
  std::string helper = "unchanged";
  CHECK_FALSE(credentials_in_config(R"({"auths":{"h:1":{}}})", "h:1", "cfg.json", &helper));
  CHECK(helper == "unchanged");
  CHECK(ccpack_error([] { (void)credentials_in_config(R"({"auths":{"h:1":"dXNlcjpw"}})", "h:1", "cfg.json", nullptr); }) ==
        "auth file 'cfg.json': the entry for h:1 is not an object");
  CHECK(ccpack_error([] { (void)credentials_in_config(R"({"auths":{"h:1":{"auth":"!!"}}})", "h:1", "c.json", nullptr); }) ==
        "auth file 'c.json': the 'auth' of h:1 is not base64 of user:password");
  CHECK(ccpack_error([] { (void)credentials_in_config("[1]", "h:1", "c.json", nullptr); }) ==
        "auth file 'c.json': is not a JSON object");
  // A password may hold a colon: only the first one splits.
  auto c = credentials_in_config(R"({"auths":{"h:1":{"auth":")" + base64_encode("me:a:b") + R"("}}})", "h:1", "c", nullptr);
  REQUIRE(c);
  CHECK(c->username == "me");
  CHECK(c->password == "a:b");
}

TEST_CASE("find_credentials: XDG_RUNTIME_DIR's containers/auth.json last, the first file with an entry wins") {
  test::ScratchDir dir;
  test::write_file(dir / "home/.docker/config.json", R"({"auths":{"a:1":{"username":"home","password":"x"}}})");
  test::write_file(dir / "run/containers/auth.json",
                   R"({"auths":{"a:1":{"username":"podman","password":"x"},"b:1":{"username":"podman-b","password":"y"}}})");
  ScopedEnv home("HOME", (dir / "home").string());
  ScopedEnv xdg("XDG_RUNTIME_DIR", (dir / "run").string());
  ScopedEnv docker("DOCKER_CONFIG", std::nullopt);
  ScopedEnv file("REGISTRY_AUTH_FILE", std::nullopt);
  CHECK(find_credentials("a:1", "")->username == "home");
  auto b = find_credentials("b:1", "");
  REQUIRE(b);
  CHECK(b->username == "podman-b");
  CHECK(b->source == (dir / "run/containers/auth.json").string());
  CHECK_FALSE(find_credentials("c:1", ""));
  // A file named by the variable must exist, and its absence is an error even when another file would answer.
  ScopedEnv named("REGISTRY_AUTH_FILE", (dir / "none.json").string());
  CHECK(ccpack_error([] { (void)find_credentials("a:1", ""); }) ==
        "auth file '" + (dir / "none.json").string() + "' does not exist");
}

TEST_CASE("find_credentials: a file over 1 MiB is refused by name") {
  test::ScratchDir dir;
  test::write_file(dir / "big.json", std::string((1u << 20) + 1, ' '));
  CHECK(ccpack_error([&] { (void)find_credentials("h:1", (dir / "big.json").string()); }) ==
        "auth file '" + (dir / "big.json").string() + "' is larger than 1 MiB");
  test::write_file(dir / "edge.json", R"({"auths":{"h:1":{"username":"u","password":"p"}}})" + std::string((1u << 20) - 50, ' '));
  CHECK(find_credentials("h:1", (dir / "edge.json").string())->username == "u");
}

TEST_CASE("credential helpers: run as docker-credential-NAME get, the server on stdin, a token user, failures") {
  // As in the tool (cli/main.cpp ignores SIGPIPE once for the process): a helper that exits before reading its
  // stdin gives EPIPE to the write, not a signal.
  (void)std::signal(SIGPIPE, SIG_IGN);
  test::ScratchDir dir;
  ScopedEnv path("PATH", (dir / "bin").string() + ":/usr/bin:/bin");
  write_helper(dir / "bin", "pass", R"({"ServerURL":"h:1","Username":"robot","Secret":"s3cret"})");
  write_helper(dir / "bin", "token", R"({"Username":"<token>","Secret":"refresh"})");
  write_helper(dir / "bin", "fails", "", 1);
  write_helper(dir / "bin", "garbage", "not json");
  test::write_file(dir / "cfg.json", R"({"credHelpers":{"h:1":"pass","t:1":"token","f:1":"fails","g:1":"garbage",
      "bad:1":"x;rm"}, "credsStore":"token"})");
  const std::string cfg = (dir / "cfg.json").string();
  auto c = find_credentials("h:1", cfg);
  REQUIRE(c);
  CHECK(c->username == "robot");
  CHECK(c->password == "s3cret");
  CHECK(c->identity_token.empty());
  CHECK(c->source == "docker-credential-pass");
  CHECK(test::slurp(dir / "bin/docker-credential-pass.stdin") == "h:1");
  c = find_credentials("t:1", cfg);
  REQUIRE(c);
  CHECK(c->username.empty());
  CHECK(c->password.empty());
  CHECK(c->identity_token == "refresh");
  // credsStore answers for a registry that credHelpers does not name.
  c = find_credentials("other:1", cfg);
  REQUIRE(c);
  CHECK(c->identity_token == "refresh");
  CHECK(test::slurp(dir / "bin/docker-credential-token.stdin") == "other:1");
  // A helper that fails has no credentials (anonymous access); one that answers nonsense is an error, without its
  // output; a name that is not a plain word is never run.
  CHECK_FALSE(find_credentials("f:1", cfg));
  CHECK(ccpack_error([&] { (void)find_credentials("g:1", cfg); }) ==
        "docker-credential-garbage answered something other than credentials for g:1");
  CHECK(ccpack_error([&] { (void)find_credentials("bad:1", cfg); }) == "credential helper name for bad:1 has invalid characters");
  // A helper that is not installed: the exec fails (127), no credentials.
  test::write_file(dir / "missing.json", R"({"credsStore":"absent"})");
  CHECK_FALSE(find_credentials("h:1", (dir / "missing.json").string()));
}

TEST_CASE("WWW-Authenticate: unquoted values, lower-cased names, only the first challenge, at most 16 parameters") {
  auto c = parse_challenge("  BEARER Realm=https://a/t, SERVICE=reg ,scope=\"repository:x:pull,push\"");
  REQUIRE(c);
  CHECK(c->scheme == "bearer");
  CHECK(c->realm == "https://a/t");
  CHECK(c->service == "reg");
  CHECK(c->scope == "repository:x:pull,push");
  c = parse_challenge(R"(Basic realm="first", Bearer realm="second")");
  REQUIRE(c);
  CHECK(c->scheme == "basic");
  CHECK(c->realm == "first");
  // Unknown parameters are stepped over; the 17th parameter is never read.
  std::string many = "Bearer ";
  for (int i = 0; i < 16; ++i) many += "x" + std::to_string(i) + "=1,";
  c = parse_challenge(many + "realm=\"late\"");
  REQUIRE(c);
  CHECK(c->realm.empty());
  c = parse_challenge("Bearer x=1,realm=\"early\"");
  REQUIRE(c);
  CHECK(c->realm == "early");
  CHECK(parse_challenge(std::string(4096, 'B')));
  CHECK_FALSE(parse_challenge(std::string(4097, 'B')));
  CHECK_FALSE(parse_challenge("   "));
}
