// registry/push.cpp against a scripted loopback registry: the documents go by digest, the signature manifest next,
// and the tag last; a signature that cannot be written leaves the tag unput. (A key that signed the payload already
// adds nothing: the cosign suite, whose registry port is known before the payload is made.)
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "manifest/keys.hpp"
#include "registry/cosign.hpp"
#include "registry/push.hpp"
#include "unit/loopback_http.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"

using namespace ccpack;
using test::http_answer;
namespace oci = ccpack::registry::oci;
namespace cosign = ccpack::registry::cosign;

namespace {

std::string request_line(const std::string& request) { return request.substr(0, request.find("\r\n")); }

// The archive's bytes in a file, open for the request.
struct ArchiveFile {
  test::ScratchDir dir;
  int fd = -1;
  ArchiveFile() {
    test::write_file(dir / "a.ccpack", "archive bytes");
    fd = ::open((dir / "a.ccpack").c_str(), O_RDONLY | O_CLOEXEC);
  }
  ~ArchiveFile() { ::close(fd); }
  ArchiveFile(const ArchiveFile&) = delete;
  ArchiveFile& operator=(const ArchiveFile&) = delete;
};

registry::PushRequest request_for(const ArchiveFile& f, const manifest::PrivateKey& key) {
  registry::PushRequest q;
  q.fd = f.fd;
  q.size = 13;
  q.file_name = "a.ccpack";
  q.what = "'a.ccpack'";
  q.keys = {&key};
  return q;
}

// Pushes to 127.0.0.1:PORT/team/model:v1 with the server's answers; returns the request lines.
std::vector<std::string> push_with(const registry::PushRequest& q, const std::vector<std::string>& answers,
                                   registry::PushResult& r, std::string* error = nullptr) {
  test::LoopbackHttp server(answers);
  registry::SessionOptions o;
  o.http.plain_http = true;
  o.http.max_attempts = 1;
  registry::Session s(oci::parse_reference("127.0.0.1:" + std::to_string(server.port()) + "/team/model:v1"), o);
  try {
    registry::push(s, q, r);
  } catch (const Error& e) {
    if (error == nullptr) throw;
    *error = e.what();
  }
  std::vector<std::string> lines;
  for (const std::string& req : server.requests()) lines.push_back(request_line(req));
  return lines;
}

const std::string kHere = http_answer(200, {}, "");
const std::string kStored = http_answer(201, {}, "");
const std::string kAbsentAnswer = http_answer(404, {}, "");

}  // namespace

TEST_CASE("push: documents by digest, then the signature, then the tag") {
  test::NoCredentials none;
  ArchiveFile f;
  manifest::PrivateKey key = manifest::PrivateKey::generate();
  registry::PushResult r;
  registry::PushRequest q = request_for(f, key);
  q.format = registry::CosignFormat::legacy;
  std::vector<std::string> lines = push_with(q, {kHere, kHere, kStored, kAbsentAnswer, kHere, kHere, kStored, kStored}, r);
  const std::string sig = cosign::signature_tag(r.manifest_digest);
  CHECK(lines == std::vector<std::string>{"HEAD /v2/team/model/blobs/" + std::string(oci::kEmptyConfigDigest) + " HTTP/1.1",
                                          "HEAD /v2/team/model/blobs/" + r.layer_digest + " HTTP/1.1",
                                          "PUT /v2/team/model/manifests/" + r.manifest_digest + " HTTP/1.1",
                                          "GET /v2/team/model/manifests/" + sig + " HTTP/1.1", lines.at(4),
                                          lines.at(5),  // the payload and config blobs (HEAD: present)
                                          "PUT /v2/team/model/manifests/" + sig + " HTTP/1.1",
                                          "PUT /v2/team/model/manifests/v1 HTTP/1.1"});
  REQUIRE(r.signed_documents.size() == 1);
  REQUIRE(r.signed_documents[0].attach);
  CHECK(r.signed_documents[0].attach->added == 1);
  CHECK_FALSE(r.signed_documents[0].bundle);
}

TEST_CASE("push: a signature that cannot be written leaves the tag where it was") {
  test::NoCredentials none;
  ArchiveFile f;
  manifest::PrivateKey key = manifest::PrivateKey::generate();
  std::string many = R"({"schemaVersion":2,"layers":[)";
  for (std::size_t i = 0; i < cosign::kMaxSignatureLayers; ++i) many += std::string(i == 0 ? "" : ",") + "{}";
  many += "]}";
  const std::string full = http_answer(200, {"Content-Type: application/vnd.oci.image.manifest.v1+json"}, many);
  registry::PushResult r;
  std::string error;
  std::vector<std::string> lines = push_with(request_for(f, key), {kHere, kHere, kStored, full}, r, &error);
  CHECK(error == "signature manifest " + cosign::signature_tag(r.manifest_digest) + " is full (1000 signatures)");
  REQUIRE(lines.size() == 4);
  CHECK(lines.back() == "GET /v2/team/model/manifests/" + cosign::signature_tag(r.manifest_digest) + " HTTP/1.1");
}

TEST_CASE("push: the bundle referrer, then the fallback tag's index, then the tag") {
  test::NoCredentials none;
  ArchiveFile f;
  manifest::PrivateKey key = manifest::PrivateKey::generate();
  registry::PushRequest q = request_for(f, key);
  q.format = registry::CosignFormat::bundle;
  registry::PushResult r;
  // No referrers API (404) and no fallback tag yet: the referrer by digest, the tag's index created, then v1.
  std::vector<std::string> lines = push_with(
      q, {kHere, kHere, kStored, kAbsentAnswer, kAbsentAnswer, kHere, kHere, kStored, kAbsentAnswer, kStored, kStored}, r);
  REQUIRE(r.signed_documents.size() == 1);
  REQUIRE(r.signed_documents[0].bundle);
  CHECK_FALSE(r.signed_documents[0].attach);
  const registry::BundleAttach& b = *r.signed_documents[0].bundle;
  REQUIRE(b.written.size() == 1);
  const std::string fallback = "sha256-" + r.manifest_digest.substr(7);
  CHECK(b.index == "tag " + fallback);
  REQUIRE(lines.size() == 11);
  CHECK(lines[3] == "GET /v2/team/model/referrers/" + r.manifest_digest + " HTTP/1.1");
  CHECK(lines[4] == "GET /v2/team/model/manifests/" + fallback + " HTTP/1.1");
  CHECK(lines[7] == "PUT /v2/team/model/manifests/" + b.written[0] + " HTTP/1.1");
  CHECK(lines[8] == "GET /v2/team/model/manifests/" + fallback + " HTTP/1.1");
  CHECK(lines[9] == "PUT /v2/team/model/manifests/" + fallback + " HTTP/1.1");
  CHECK(lines[10] == "PUT /v2/team/model/manifests/v1 HTTP/1.1");
}

TEST_CASE("push: a registry that indexes the subject itself (OCI-Subject) gets no fallback tag") {
  test::NoCredentials none;
  ArchiveFile f;
  manifest::PrivateKey key = manifest::PrivateKey::generate();
  registry::PushRequest q = request_for(f, key);
  q.format = registry::CosignFormat::bundle;
  registry::PushResult r;
  const std::string empty_index =
      http_answer(200, {"Content-Type: application/vnd.oci.image.index.v1+json"},
                  R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[]})");
  const std::string indexed = http_answer(201, {"OCI-Subject: sha256:" + std::string(64, 'a')}, "");
  std::vector<std::string> lines = push_with(q, {kHere, kHere, kStored, empty_index, kHere, kHere, indexed, kStored}, r);
  REQUIRE(r.signed_documents.size() == 1);
  const registry::BundleAttach& b = *r.signed_documents.at(0).bundle;
  CHECK(b.index == "the referrers API");
  REQUIRE(lines.size() == 8);
  CHECK(lines[3] == "GET /v2/team/model/referrers/" + r.manifest_digest + " HTTP/1.1");
  CHECK(lines[6] == "PUT /v2/team/model/manifests/" + b.written.at(0) + " HTTP/1.1");
  CHECK(lines[7] == "PUT /v2/team/model/manifests/v1 HTTP/1.1");
}

TEST_CASE("push: a fallback tag that holds something other than an index fails the push, the tag unmoved") {
  test::NoCredentials none;
  ArchiveFile f;
  manifest::PrivateKey key = manifest::PrivateKey::generate();
  registry::PushRequest q = request_for(f, key);
  q.format = registry::CosignFormat::bundle;
  registry::PushResult r;
  std::string error;
  const std::string image =
      http_answer(200, {"Content-Type: application/vnd.oci.image.manifest.v1+json"}, R"({"schemaVersion":2,"layers":[]})");
  std::vector<std::string> lines = push_with(q, {kHere, kHere, kStored, kAbsentAnswer, image}, r, &error);
  CHECK(error.starts_with("cannot add a bundle referrer: referrers tag 127.0.0.1:"));
  CHECK(error.ends_with(":sha256-" + r.manifest_digest.substr(7) +
                        " holds application/vnd.oci.image.manifest.v1+json, not an image index"));
  CHECK(lines.size() == 5);
}
