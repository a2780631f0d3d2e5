// http/http_exchange.cpp, curl's callbacks, through http::Client against a scripted loopback server: a 200 answer
// to a Range request skipped into and cut after the last byte, a 206 from the wrong byte, announced lengths that
// disagree with the resource's size, an error body kept short and never given to the sink, a collected body over
// its bound, response headers over theirs, and a request body sent from memory pieces around a file range.
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "http/http.hpp"
#include "unit/loopback_http.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

using namespace ccpack;
using test::error_of;
using test::http_answer;

namespace {

http::Client client() {
  http::Options o;
  o.plain_http = true;
  o.max_attempts = 1;
  return http::Client(o);
}

http::Request get(const test::LoopbackHttp& server, const std::string& path) {
  http::Request r;
  r.url = server.base() + path;
  return r;
}

}  // namespace

TEST_CASE("http: a 200 answer to a Range request is skipped into and cut after the last byte asked") {
  test::LoopbackHttp server({http_answer(200, {}, "0123456789")});
  http::Client c = client();
  http::Request r = get(server, "/blob");
  r.range_first = 3;
  r.range_last = 6;
  std::string got;
  http::Response resp = c.send(r, [&](const char* p, std::size_t n) { got.append(p, n); });
  CHECK(resp.status == 200);
  CHECK(got == "3456");
  CHECK(resp.body_bytes == 4);
  CHECK(server.requests().at(0).find("\r\nRange: bytes=3-6\r\n") != std::string::npos);
}

TEST_CASE("http: a 206 from another byte than asked, and announced lengths other than the resource's") {
  test::LoopbackHttp server({http_answer(206, {"Content-Range: bytes 0-3/10"}, "0123"), http_answer(200, {}, "01234567890"),
                             http_answer(206, {"Content-Range: bytes 2-5/99"}, "2345")});
  http::Client c = client();
  const std::string url = server.base() + "/blob";
  std::string got;
  auto sink = [&](const char* p, std::size_t n) { got.append(p, n); };
  http::Request r = get(server, "/blob");
  r.range_first = 3;
  CHECK(error_of([&] { (void)c.send(r, sink); }) ==
        "GET " + url + ": the server answered a Range request from byte 3 with Content-Range 'bytes 0-3/10' (after 1 attempts)");
  http::Request whole = get(server, "/blob");
  whole.total_size = 10;
  CHECK(error_of([&] { (void)c.send(whole, sink); }) ==
        url + ": the server announced Content-Length 11 where 10 bytes were due (the resource has 10)");
  http::Request part = get(server, "/blob");
  part.range_first = 2;
  part.range_last = 5;
  part.total_size = 10;
  CHECK(error_of([&] { (void)c.send(part, sink); }) ==
        url + ": the server announced Content-Range 'bytes 2-5/99' for a resource of 10 bytes");
  CHECK(got.empty());  // no byte of a refused answer reaches the sink
}

TEST_CASE("http: an error body is kept short and never given to the sink, a collected body has a bound") {
  const std::string long_error(http::Client::kMaxErrorBody + 5000, 'e');
  test::LoopbackHttp server({http_answer(404, {}, long_error), http_answer(200, {}, std::string(101, 'd'))});
  http::Client c = client();
  bool sink_called = false;
  http::Response resp = c.send(get(server, "/missing"), [&](const char*, std::size_t) { sink_called = true; });
  CHECK(resp.status == 404);
  CHECK(resp.body == long_error.substr(0, http::Client::kMaxErrorBody));
  CHECK_FALSE(sink_called);
  CHECK(error_of([&] { (void)c.send(get(server, "/doc"), {}, 100); }) ==
        "response body of " + server.base() + "/doc exceeds 100 bytes");
}

TEST_CASE("http: response headers over their bound are refused") {
  // 34 lines of 8,000 bytes: past kMaxHeaderBytes (256 KiB), short of what libcurl itself refuses (100 KB a line,
  // 300 KB in all).
  std::vector<std::string> pad(34, "X-Pad: " + std::string(8000 - 9, 'h'));
  test::LoopbackHttp server({http_answer(200, pad, "")});
  http::Client c = client();
  CHECK(error_of([&] { (void)c.send(get(server, "/")); }) == "response headers exceed 262144 bytes");
}

TEST_CASE("http: a request body from memory pieces around a range of a file, sent exactly") {
  test::ScratchDir t;
  test::write_file(t / "data", "0123456789abcdef");
  UniqueFd fd(::open((t / "data").c_str(), O_RDONLY | O_CLOEXEC));
  REQUIRE(fd.valid());
  test::LoopbackHttp server({http_answer(201, {}, "")});
  http::Client c = client();
  http::Request r = get(server, "/upload");
  r.method = "PUT";
  r.file_body = http::FileRange{fd.get(), 4, 6, "<<", ">>"};
  CHECK(c.send(r).status == 201);
  const std::string& sent = server.requests().at(0);
  CHECK(sent.substr(0, sent.find("\r\n")) == "PUT /upload HTTP/1.1");
  CHECK(sent.find("\r\nContent-Length: 10\r\n") != std::string::npos);
  CHECK(sent.substr(sent.find("\r\n\r\n") + 4) == "<<456789>>");
}
