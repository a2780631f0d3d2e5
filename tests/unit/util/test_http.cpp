// util/http.cpp's Client against scripted loopback servers: Authorization kept to its origin across a redirect,
// a redirect to another scheme refused (libcurl before 7.85 ignores CURLOPT_PROTOCOLS_STR), a transient status
// retried, and a cut transfer resumed with Range from the last byte delivered (or given back as Interrupted).
#include <catch2/catch.hpp>
#include <string>

#include "unit/loopback_http.hpp"
#include "util/error.hpp"
#include "util/http.hpp"

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

bool has_header(const std::string& request, const std::string& line) { return request.find("\r\n" + line + "\r\n") != std::string::npos; }

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
  CHECK(what == "GET " + server.base() + "/v2/: refusing a redirect to file:///etc/passwd (not http or https) (after 1 attempts)");
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
