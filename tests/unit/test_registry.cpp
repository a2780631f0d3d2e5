// Registry auth pieces (registry/auth.hpp) and the pure HTTP helpers (util/http.hpp): credential files as
// docker and podman write them, challenge parsing, and the URL rules that keep credentials on their origin.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>
#include <thread>

#include "registry/auth.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"
#include "util/http.hpp"

using namespace ccpack;
using namespace ccpack::registry;

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

TEST_CASE("origins decide where Authorization may go") {
  using namespace ccpack::http;
  CHECK(origin_of("https://Reg.Example/v2/") == "https://reg.example:443");
  CHECK(origin_of("http://127.0.0.1:5000/v2/x") == "http://127.0.0.1:5000");
  CHECK(origin_of("http://127.0.0.1:5000/a") != origin_of("http://127.0.0.1:5001/a"));
  CHECK(origin_of("https://h/a") != origin_of("http://h:443/a"));
  CHECK_FALSE(origin_of("not a url"));
  CHECK(resolve_url("http://h:1/v2/r/blobs/uploads/", "/v2/r/blobs/uploads/u?_state=x") == "http://h:1/v2/r/blobs/uploads/u?_state=x");
  CHECK(resolve_url("http://h:1/a/b", "http://other:2/c") == "http://other:2/c");
  CHECK(display_url("https://s3/bucket/blob?X-Amz-Signature=secret") == "https://s3/bucket/blob");
  CHECK(escape_for_message("a\nb\x01") == "a\\nb\\x01");
}

TEST_CASE("retry rules") {
  using namespace ccpack::http;
  CHECK(is_transient_status(408));
  CHECK(is_transient_status(429));
  CHECK(is_transient_status(503));
  CHECK_FALSE(is_transient_status(501));
  CHECK_FALSE(is_transient_status(404));
  CHECK_FALSE(is_transient_status(401));
  CHECK(parse_retry_after("7") == std::chrono::seconds(7));
  CHECK(parse_retry_after("100000") == kMaxRetryAfter);
  CHECK(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == std::chrono::seconds(0));  // in the past
  CHECK_FALSE(parse_retry_after(""));
  CHECK_FALSE(parse_retry_after("soon"));
}

namespace {

// A one-shot HTTP server on 127.0.0.1: answers the first request with `answer`, then closes. Returns its port.
int serve_once(std::thread& server, const std::string& answer) {
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(listener >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&addr), len) == 0);
  REQUIRE(::listen(listener, 1) == 0);
  REQUIRE(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  server = std::thread([listener, answer] {
    int c = ::accept(listener, nullptr, nullptr);
    if (c >= 0) {
      char buf[4096];
      (void)::recv(c, buf, sizeof buf, 0);  // the request line and headers fit in one read here
      (void)::send(c, answer.data(), answer.size(), MSG_NOSIGNAL);
      ::close(c);
    }
    ::close(listener);
  });
  return ntohs(addr.sin_port);
}

}  // namespace

// libcurl before 7.85 ignores CURLOPT_PROTOCOLS_STR, so the client itself refuses a redirect to another scheme.
TEST_CASE("a redirect to a scheme other than http(s) is refused by the client") {
  std::thread server;
  int port = serve_once(server, "HTTP/1.1 302 Found\r\nLocation: file:///etc/passwd\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  http::Options options;
  options.plain_http = true;
  options.max_attempts = 1;
  http::Client client(options);
  http::Request r;
  r.url = "http://127.0.0.1:" + std::to_string(port) + "/v2/";
  std::string what;
  try {
    (void)client.send(r);
  } catch (const Error& e) {
    what = e.what();
  }
  server.join();
  CHECK(what == "GET http://127.0.0.1:" + std::to_string(port) + "/v2/: refusing a redirect to file:///etc/passwd (not http or https) (after 1 attempts)");
}
