// http/http.cpp's Client against scripted loopback servers: Authorization kept to its origin across a redirect,
// a redirect to another scheme refused (libcurl before 7.85 ignores CURLOPT_PROTOCOLS_STR), a transient status
// retried, and a cut transfer resumed with Range from the last byte delivered (or given back as Interrupted).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>
#include <thread>

#include "http/http.hpp"
#include "unit/loopback_http.hpp"
#include "util/error.hpp"

using namespace ccpack;
using test::http_answer;

namespace {

http::Options plain(int attempts) {
  http::Options o;
  o.plain_http = true;
  o.max_attempts = attempts;
  o.backoff_base = std::chrono::milliseconds(1);
  o.backoff_cap = std::chrono::milliseconds(1);
  return o;
}

bool has_header(const std::string& request, const std::string& line) {
  return request.find("\r\n" + line + "\r\n") != std::string::npos;
}

}  // namespace

TEST_CASE("a redirect to a scheme other than http(s) is refused by the client") {
  test::LoopbackHttp server({http_answer(302, {"Location: file:///etc/passwd"}, "")});
  http::Client client(plain(1));
  http::Request r;
  r.url = server.base() + "/v2/";
  std::string what;
  try {
    (void)client.send(r);
  } catch (const Error& e) {
    what = e.what();
  }
  CHECK(what ==
        "GET " + server.base() + "/v2/: refusing a redirect to file:///etc/passwd (not http or https) (after 1 attempts)");
}

TEST_CASE("Authorization goes to the origin it was given for, not to the origin a redirect leads to") {
  test::LoopbackHttp other({http_answer(200, {}, "blob")});
  test::LoopbackHttp home({http_answer(307, {"Location: {BASE}/v2/moved"}, ""),
                           http_answer(302, {"Location: " + other.base() + "/bucket/blob?X-Sig=secret"}, "")});
  http::Client client(plain(1));
  http::Request r;
  r.url = home.base() + "/v2/blob";
  r.authorization = "Bearer tok";
  http::Response resp = client.send(r);
  CHECK(resp.status == 200);
  CHECK(resp.body == "blob");
  CHECK(resp.url == other.base() + "/bucket/blob?X-Sig=secret");
  REQUIRE(home.requests().size() == 2);
  CHECK(has_header(home.requests()[0], "Authorization: Bearer tok"));
  CHECK(has_header(home.requests()[1], "Authorization: Bearer tok"));
  REQUIRE(other.requests().size() == 1);
  CHECK(other.requests()[0].find("Authorization") == std::string::npos);
}

TEST_CASE("a transient status is retried, the last answer is returned whatever its status") {
  test::LoopbackHttp server({http_answer(503, {"Retry-After: 0"}, ""), http_answer(200, {}, "ok"),
                             http_answer(429, {"Retry-After: 0"}, ""), http_answer(503, {}, "busy")});
  http::Client client(plain(2));
  http::Request r;
  r.url = server.base() + "/x";
  http::Response first = client.send(r);
  CHECK(first.status == 200);
  CHECK(first.body == "ok");
  http::Response second = client.send(r);
  CHECK(second.status == 503);
  CHECK(second.body == "busy");
  CHECK(server.requests().size() == 4);
}

TEST_CASE("a cut transfer resumes with Range from the last byte delivered, or is given back as Interrupted") {
  test::LoopbackHttp server({http_answer(200, {"Content-Length: 10"}, "0123"),
                             http_answer(206, {"Content-Range: bytes 4-9/10"}, "456789"),
                             http_answer(200, {"Content-Length: 10"}, "012")});
  http::Client client(plain(2));
  http::Request r;
  r.url = server.base() + "/blob";
  std::string got;
  auto sink = [&](const char* p, std::size_t n) { got.append(p, n); };
  http::Response resp = client.send(r, sink);
  CHECK(got == "0123456789");
  CHECK(resp.body_bytes == 10);
  r.resume_at_byte = false;
  got.clear();
  std::uint64_t delivered = 0;
  try {
    (void)client.send(r, sink);
  } catch (const http::Interrupted& e) {
    delivered = e.delivered();
  }
  CHECK(delivered == 3);
  CHECK(got == "012");
  const auto& q = server.requests();
  REQUIRE(q.size() == 3);
  CHECK(q[0].find("Range:") == std::string::npos);
  CHECK(has_header(q[1], "Range: bytes=4-"));
}

namespace {

// A plain-HTTP server as it meets a TLS client: it reads whatever arrives first (the TLS hello), answers 400 as
// docker-registry does, and closes. One connection.
class PlainAnswerer {
 public:
  PlainAnswerer() {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    REQUIRE(::bind(listener_, reinterpret_cast<sockaddr*>(&addr), len) == 0);
    REQUIRE(::listen(listener_, 1) == 0);
    REQUIRE(::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] {
      int c = ::accept(listener_, nullptr, nullptr);
      if (c < 0) return;
      char buf[4096];
      (void)::recv(c, buf, sizeof buf, 0);
      const std::string answer = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
      (void)::send(c, answer.data(), answer.size(), MSG_NOSIGNAL);
      ::close(c);
    });
  }
  ~PlainAnswerer() {
    ::shutdown(listener_, SHUT_RDWR);
    thread_.join();
    ::close(listener_);
  }
  PlainAnswerer(const PlainAnswerer&) = delete;
  PlainAnswerer& operator=(const PlainAnswerer&) = delete;
  [[nodiscard]] int port() const { return port_; }

 private:
  int listener_ = -1;
  int port_ = 0;
  std::thread thread_;
};

std::string failure_of(http::Client& client, const std::string& url) {
  http::Request r;
  r.url = url;
  try {
    (void)client.send(r);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("a TLS handshake with a plain-HTTP server fails with the caller's hint, other failures without it") {
  http::Options o = plain(1);
  o.plain_http = false;
  o.tls_failure_hint = "if 127.0.0.1 serves plain HTTP, pass --plain-http";
  http::Client client(o);
  PlainAnswerer server;
  std::string url = "https://127.0.0.1:" + std::to_string(server.port()) + "/v2/";
  CHECK_THAT(failure_of(client, url),
             Catch::StartsWith("GET " + url + ": ") &&
                 Catch::EndsWith(" (after 1 attempts); if 127.0.0.1 serves plain HTTP, pass --plain-http"));
  // A refused connection is no TLS failure: no hint.
  CHECK_THAT(failure_of(client, "https://127.0.0.1:1/v2/"),
             !Catch::Contains("plain HTTP") && Catch::EndsWith("(after 1 attempts)"));
}
