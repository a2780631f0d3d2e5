// registry/session.cpp's tag list against a scripted loopback registry that ignores `n`: every bound holds before
// the tags are kept (a page's bytes, its count, the total, each tag's form), each refusal named exactly.
#include <catch2/catch.hpp>
#include <string>

#include "registry/oci.hpp"
#include "registry/session.hpp"
#include "unit/loopback_http.hpp"
#include "unit/support.hpp"

using namespace ccpack;
using test::error_of;
using test::http_answer;

namespace {

// A tags/list answer holding tags t<first> .. t<first + count - 1>, each seven characters.
std::string page(std::size_t first, std::size_t count) {
  std::string body = R"({"name":"team/model","tags":[)";
  for (std::size_t i = first; i < first + count; ++i) {
    std::string n = std::to_string(i);
    body += (i == first ? "\"t" : ",\"t") + std::string(6 - n.size(), '0') + n + "\"";
  }
  return http_answer(200, {"Content-Type: application/json"}, body + "]}");
}

}  // namespace

TEST_CASE("tag lists: a page with more tags than asked for is refused before it is kept") {
  test::NoCredentials none;
  test::LoopbackHttp server({page(0, registry::Session::kTagPage + 1)});
  registry::Session s = test::session_for(server);
  CHECK(error_of([&] { (void)s.list_tags(); }) ==
        "the tag list of " + s.reference().str() + " sent 1001 tags in one page, more than the 1000 asked for");
}

TEST_CASE("tag lists: a page's body is read only to its byte bound") {
  test::NoCredentials none;
  test::LoopbackHttp server({page(0, 60000)});  // 600 kB: a registry that ignores n
  registry::Session s = test::session_for(server);
  CHECK(error_of([&] { (void)s.list_tags(); }) == "response body of http://127.0.0.1:" + std::to_string(server.port()) +
                                                      "/v2/team/model/tags/list exceeds " +
                                                      std::to_string(registry::Session::kTagPageBytes) + " bytes");
}

TEST_CASE("tag lists: past the total bound the list is refused, never cut off") {
  test::NoCredentials none;
  std::vector<std::string> pages;
  for (std::size_t p = 0; p <= registry::Session::kMaxTagPages; ++p) pages.push_back(page(p * 1000, 1000));
  test::LoopbackHttp server(pages);
  registry::Session s = test::session_for(server);
  CHECK(error_of([&] { (void)s.list_tags(); }) == "the tag list of " + s.reference().str() + " has more than 100000 tags");
  // A list that ends at the bound is whole.
  test::LoopbackHttp exact([&] {
    std::vector<std::string> v(pages.begin(), pages.end() - 1);
    v.push_back(page(0, 0));
    return v;
  }());
  registry::Session e = test::session_for(exact);
  CHECK(e.list_tags().size() == 100000);
}

TEST_CASE("tag lists: a tag that is no valid tag is refused, named escaped") {
  test::NoCredentials none;
  test::LoopbackHttp server({http_answer(200, {}, R"({"tags":["v1","a\u202eb"]})"),
                             http_answer(200, {}, R"({"tags":["v1",")" + std::string(129, 'x') + "\"]}")});
  registry::Session s = test::session_for(server);
  CHECK(error_of([&] { (void)s.list_tags(); }) ==
        "the tag list of " + s.reference().str() + " holds 'a\\u{202e}b', not a valid tag");
  registry::Session t = test::session_for(server);
  CHECK(error_of([&] { (void)t.list_tags(); }) ==
        "the tag list of " + s.reference().str() + " holds '" + std::string(129, 'x') + "', not a valid tag");
}
