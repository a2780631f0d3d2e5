// registry/session.cpp against a scripted loopback registry: the Bearer challenge flow (a token asked at the
// realm for the repository's pull scope, the request sent again with it), a manifest checked against the digest
// the registry claims or the one asked by, 404 as absence, an upload's POST then PUT at the Location with
// ?digest=, a blob range, and the one-line errors for a denied request and a registry's error body.
// Mirrors: one that fails once is skipped for the rest of the session, and a blob cut on one continues at the origin.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "registry/oci.hpp"
#include "registry/session.hpp"
#include "unit/loopback_http.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"
#include "util/sha256.hpp"

using namespace ccpack;
using test::error_of;
using test::http_answer;

namespace {

using test::NoCredentials;

bool has_header(const std::string& request, const std::string& line) {
  return request.find("\r\n" + line + "\r\n") != std::string::npos;
}

const std::string kManifest = R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json"})";

}  // namespace

TEST_CASE("Session: a Bearer challenge fetches a token for the pull scope, then the manifest is asked again") {
  NoCredentials none;
  test::LoopbackHttp server({
      http_answer(401, {R"(WWW-Authenticate: Bearer realm="{BASE}/token",service="reg svc")"}, ""),
      http_answer(200, {"Content-Type: application/json"}, R"({"token":"tok-1"})"),
      http_answer(
          200,
          {"Content-Type: application/vnd.oci.image.manifest.v1+json", "Docker-Content-Digest: " + test::digest_of(kManifest)},
          kManifest),
  });
  registry::Session s = test::session_for(server);
  std::optional<registry::Document> d = s.get_manifest("v1");
  REQUIRE(d);
  CHECK(d->bytes == kManifest);
  CHECK(d->digest == test::digest_of(kManifest));
  CHECK(d->media_type == "application/vnd.oci.image.manifest.v1+json");
  const auto& r = server.requests();
  REQUIRE(r.size() == 3);
  CHECK(test::first_line(r[0]) == "GET /v2/team/model/manifests/v1 HTTP/1.1");
  CHECK(r[0].find("Authorization:") == std::string::npos);
  CHECK(test::first_line(r[1]) == "GET /token?service=reg%20svc&scope=repository%3Ateam%2Fmodel%3Apull HTTP/1.1");
  CHECK(test::first_line(r[2]) == "GET /v2/team/model/manifests/v1 HTTP/1.1");
  CHECK(has_header(r[2], "Authorization: Bearer tok-1"));
  CHECK(s.served_by() == "127.0.0.1:" + std::to_string(server.port()) + "/team/model");
}

TEST_CASE("Session: a manifest of other bytes than its digest is an integrity error, 404 is absence") {
  NoCredentials none;
  const std::string asked = test::digest_of("something else");
  test::LoopbackHttp server({
      http_answer(200, {"Docker-Content-Digest: " + test::digest_of("claimed")}, kManifest),
      http_answer(200, {}, kManifest),
      http_answer(404, {}, R"({"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]})"),
  });
  registry::Session s = test::session_for(server);
  const std::string where = "127.0.0.1:" + std::to_string(server.port());
  CHECK(error_of([&] { (void)s.get_manifest("v1"); }) == "manifest v1 of " + where + "/team/model:v1 from " + where +
                                                             " has digest " + test::digest_of(kManifest) + ", expected " +
                                                             test::digest_of("claimed"));
  CHECK(error_of([&] { (void)s.get_manifest(asked); }) == "manifest " + asked + " of " + where + "/team/model:v1 from " + where +
                                                              " has digest " + test::digest_of(kManifest) + ", expected " +
                                                              asked);
  CHECK_FALSE(s.get_manifest("v2"));
  CHECK(test::first_line(server.requests()[1]) == "GET /v2/team/model/manifests/" + asked + " HTTP/1.1");
}

TEST_CASE("Session: a blob's existence, its upload at the Location with ?digest=, a range of it") {
  NoCredentials none;
  const std::string blob = "0123456789";
  const std::string digest = test::digest_of(blob);
  test::LoopbackHttp server({
      http_answer(404, {}, ""),
      http_answer(202, {"Location: /v2/team/model/blobs/uploads/u1?_state=s"}, ""),
      http_answer(201, {}, ""),
      http_answer(200, {"Content-Length: 10"}, ""),
      http_answer(206, {"Content-Range: bytes 2-5/10"}, "2345"),
  });
  registry::Session s = test::session_for(server);
  CHECK_FALSE(s.blob_exists(digest));
  s.upload_blob(digest, blob);
  CHECK(s.blob_exists(digest));
  std::string got;
  registry::Session::BlobRead read = s.get_blob(digest, 2, 5, [&](const char* p, std::size_t n) { got.append(p, n); });
  CHECK(got == "2345");
  CHECK(read.bytes == 4);
  CHECK(read.status == 206);
  const auto& r = server.requests();
  REQUIRE(r.size() == 5);
  CHECK(test::first_line(r[0]) == "HEAD /v2/team/model/blobs/" + digest + " HTTP/1.1");
  CHECK(test::first_line(r[1]) == "POST /v2/team/model/blobs/uploads/ HTTP/1.1");
  CHECK(test::first_line(r[2]) ==
        "PUT /v2/team/model/blobs/uploads/u1?_state=s&digest=sha256%3A" + digest.substr(7) + " HTTP/1.1");
  CHECK(has_header(r[2], "Content-Type: application/octet-stream"));
  CHECK(r[2].substr(r[2].size() - blob.size()) == blob);
  CHECK(test::first_line(r[4]) == "GET /v2/team/model/blobs/" + digest + " HTTP/1.1");
  CHECK(has_header(r[4], "Range: bytes=2-5"));
}

TEST_CASE("Session: denied and failed requests are one line naming the repository, the registry and its error") {
  NoCredentials none;
  test::LoopbackHttp server({
      http_answer(403, {}, R"({"errors":[{"code":"DENIED","message":"no\nway"}]})"),
      http_answer(500, {}, ""),
  });
  registry::Session s = test::session_for(server);
  const std::string where = "127.0.0.1:" + std::to_string(server.port());
  CHECK(error_of([&] { (void)s.get_manifest("v1"); }) ==
        "reading manifest v1 of team/model on " + where +
            ": access denied (HTTP 403); check the credentials (--authfile, REGISTRY_AUTH_FILE, ~/.docker/config.json) "
            "[DENIED: no\\nway]");
  // A HEAD answer has no body, so no registry error to show.
  const std::string blob = "sha256:" + std::string(64, 'a');
  CHECK(error_of([&] { (void)s.blob_exists(blob); }) == "checking blob " + blob + " of team/model on " + where +
                                                            ": HEAD http://" + where + "/v2/team/model/blobs/" + blob +
                                                            " answered HTTP 500");
}

namespace {

// A session that pulls through `mirror` first, then `origin`.
registry::Session mirrored(const test::LoopbackHttp& mirror, const test::LoopbackHttp& origin) {
  registry::SessionOptions o;
  o.http.plain_http = true;
  o.http.max_attempts = 1;
  std::string m = "127.0.0.1:" + std::to_string(mirror.port());
  std::string r = "127.0.0.1:" + std::to_string(origin.port());
  o.endpoints = {registry::Endpoint{m, "team/model", true, true, false}, registry::Endpoint{r, "team/model", true, false, false}};
  return {registry::oci::parse_reference(r + "/team/model:v1"), o};
}

}  // namespace

TEST_CASE("Session: a mirror that fails once is skipped for the rest of the session, with one warning") {
  NoCredentials none;
  test::LoopbackHttp mirror({http_answer(500, {}, ""), http_answer(500, {}, "")});
  test::LoopbackHttp origin({http_answer(200, {"Content-Type: application/vnd.oci.image.manifest.v1+json"}, kManifest),
                             http_answer(200, {"Content-Type: application/vnd.oci.image.manifest.v1+json"}, kManifest)});
  registry::Session s = mirrored(mirror, origin);
  std::vector<std::string> warnings;
  s.on_fallback = [&](const std::string& line) { warnings.push_back(line); };
  CHECK(s.get_manifest("v1")->bytes == kManifest);
  CHECK(s.get_manifest("v1")->bytes == kManifest);
  CHECK(s.served_by() == "127.0.0.1:" + std::to_string(origin.port()) + "/team/model");
  CHECK(mirror.requests().size() == 1);
  CHECK(origin.requests().size() == 2);
  REQUIRE(warnings.size() == 1);
  CHECK_THAT(warnings[0], Catch::Matchers::StartsWith("mirror 127.0.0.1:" + std::to_string(mirror.port()) + " failed (") &&
                              Catch::Matchers::EndsWith("); trying the next endpoint, without this mirror from now on"));
}

TEST_CASE("Session: a blob cut on a mirror continues at the origin from the byte where it stopped") {
  NoCredentials none;
  const std::string blob = "0123456789";
  test::LoopbackHttp mirror({http_answer(206, {"Content-Range: bytes 0-9/10", "Content-Length: 10"}, "0123")});
  test::LoopbackHttp origin({http_answer(206, {"Content-Range: bytes 4-9/10"}, "456789")});
  registry::Session s = mirrored(mirror, origin);
  std::string got;
  registry::Session::BlobRead read =
      s.get_blob(test::digest_of(blob), 0, 9, [&](const char* p, std::size_t n) { got.append(p, n); });
  CHECK(got == blob);
  CHECK(read.bytes == 10);
  const auto& r = origin.requests();
  REQUIRE(r.size() == 1);
  CHECK(has_header(r[0], "Range: bytes=4-9"));
  CHECK(mirror.requests().size() == 1);
}
