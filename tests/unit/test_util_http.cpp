// util/http.hpp: the URL rules that keep credentials on their origin, the retry rules (util/http_url.cpp), and
// the client's own refusal of a redirect to another scheme (util/http.cpp), against a one-shot loopback server.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>
#include <thread>

#include "unit/support.hpp"
#include "util/error.hpp"
#include "util/http.hpp"

using namespace ccpack;

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
