// http/http_url.cpp: the URL rules that keep credentials on their origin (origins, redirects resolved, URLs fit
// for a message) and the retry rules (which statuses are transient, Retry-After read and clamped).
#include <catch2/catch.hpp>
#include <chrono>
#include <string>

#include "http/http.hpp"

using namespace ccpack;

TEST_CASE("origins decide where Authorization may go") {
  using namespace ccpack::http;
  CHECK(origin_of("https://Reg.Example/v2/") == "https://reg.example:443");
  CHECK(origin_of("http://127.0.0.1:5000/v2/x") == "http://127.0.0.1:5000");
  CHECK(origin_of("http://127.0.0.1:5000/a") != origin_of("http://127.0.0.1:5001/a"));
  CHECK(origin_of("https://h/a") != origin_of("http://h:443/a"));
  CHECK_FALSE(origin_of("not a url"));
  CHECK(resolve_url("http://h:1/v2/r/blobs/uploads/", "/v2/r/blobs/uploads/u?_state=x") ==
        "http://h:1/v2/r/blobs/uploads/u?_state=x");
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

TEST_CASE("URL helpers: default ports, relative Locations, fragments, escaping cut short") {
  using namespace ccpack::http;
  CHECK(origin_of("http://h/x") == "http://h:80");
  CHECK(origin_of("https://h:8443") == "https://h:8443");
  CHECK(resolve_url("http://h:1/a/b/c", "d?e=1") == "http://h:1/a/b/d?e=1");
  CHECK(resolve_url("http://h:1/a/b", "../x") == "http://h:1/x");
  CHECK_FALSE(resolve_url("http://h:1/a", ""));
  CHECK(display_url("http://h/a#frag") == "http://h/a");
  CHECK(escape_for_message(std::string(300, 'x')) == std::string(197, 'x') + "...");
  CHECK(is_transient_status(500));
  CHECK_FALSE(is_transient_status(505));
  CHECK_FALSE(is_transient_status(200));
  CHECK(parse_retry_after(" 3 ") == std::chrono::seconds(3));
  CHECK(parse_retry_after("0") == std::chrono::seconds(0));
  CHECK(parse_retry_after("9999999999") == kMaxRetryAfter);
}
