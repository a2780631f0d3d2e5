// registry/payload_fetch.cpp against a scripted loopback registry: a blob of a 4-byte header frame and two payload
// frames, fetched frame by frame. A cut inside the second frame resumes with Range from the end of the first
// (the staged bytes dropped, the frame fetched again whole); a registry that ignores Range is skipped into; too
// many cuts in one frame, a tampered frame and a layer that hashes wrong each stop with their exact message, and a
// consumer never sees an unverified frame.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "registry/oci.hpp"
#include "registry/payload_fetch.hpp"
#include "registry/session.hpp"
#include "unit/loopback_http.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"

using namespace ccpack;
using test::http_answer;

namespace {

const std::string kHeader = "HDR!";
const std::string kFrame0 = "aaaaaaaa";
const std::string kFrame1 = "bbbbbbbbbbbb";
const std::string kBlob = kHeader + kFrame0 + kFrame1;

registry::PayloadPlan plan_for(const std::string& layer_digest, const std::string& frame1 = kFrame1) {
  registry::PayloadPlan p;
  p.digest = layer_digest;
  p.layer_size = kBlob.size();
  p.payload_start = kHeader.size();
  manifest::Frame f0;
  f0.compressed_size = kFrame0.size();
  f0.sha256 = Sha256::of(kFrame0);
  manifest::Frame f1;
  f1.offset = kFrame0.size();
  f1.compressed_size = frame1.size();
  f1.sha256 = Sha256::of(frame1);
  p.frames = {f0, f1};
  return p;
}

// An answer for bytes [first, 24) of the blob that announces them all but sends only `sent` of them, then closes.
std::string cut_answer(std::size_t first, std::size_t sent, int status = 206) {
  std::vector<std::string> headers = {"Content-Length: " + std::to_string(kBlob.size() - first)};
  if (status == 206) headers.push_back("Content-Range: bytes " + std::to_string(first) + "-23/24");
  return http_answer(status, headers, kBlob.substr(first, sent));
}

std::string whole_answer(std::size_t first) {
  return http_answer(206, {"Content-Range: bytes " + std::to_string(first) + "-23/24"}, kBlob.substr(first));
}

struct Fetched {
  std::vector<std::string> delivered;  // "offset:bytes"
  std::vector<std::string> noted;      // describe() of each resume, as told
  std::vector<std::string> ranges;     // the Range header of each request
  std::string error;                   // what it threw, or ""
  registry::FetchLog log;
};

void fetch(test::LoopbackHttp& server, const registry::PayloadPlan& plan, Fetched& out) {
  test::ScratchDir home;
  test::ScopedEnv h("HOME", home.path().string());
  test::ScopedEnv d("DOCKER_CONFIG", home.path().string());
  test::ScopedEnv a("REGISTRY_AUTH_FILE", std::nullopt);
  test::ScopedEnv x("XDG_RUNTIME_DIR", std::nullopt);
  registry::SessionOptions o;
  o.http.plain_http = true;
  o.http.max_attempts = 1;
  registry::Session s(registry::oci::parse_reference("127.0.0.1:" + std::to_string(server.port()) + "/team/model:v1"), o);
  Sha256 layer;
  layer.update(kHeader);
  try {
    registry::fetch_payload(
        s, plan, layer,
        [&](const char* p, std::size_t n, std::uint64_t at) {
          out.delivered.push_back(std::to_string(at) + ":" + std::string(p, n));
        },
        out.log, [&](const registry::Resume& r) { out.noted.push_back(registry::describe(r)); });
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  for (const std::string& r : server.requests()) {
    std::size_t at = r.find("\r\nRange: ");
    out.ranges.push_back(at == std::string::npos ? "(none)" : r.substr(at + 9, r.find("\r\n", at + 2) - at - 9));
  }
}

}  // namespace

TEST_CASE("payload fetch: a cut in frame 1 resumes from the end of frame 0, which is not fetched again", "[payload-fetch]") {
  test::LoopbackHttp server({cut_answer(4, 11), whole_answer(12)});
  Fetched f;
  fetch(server, plan_for(test::digest_of(kBlob)), f);
  CHECK(f.error.empty());
  CHECK(f.delivered == std::vector<std::string>{"4:" + kFrame0, "12:" + kFrame1});
  CHECK(f.ranges == std::vector<std::string>{"bytes=4-23", "bytes=12-23"});
  std::vector<registry::Resume> resumes = f.log.resumes();
  REQUIRE(resumes.size() == 1);
  CHECK(resumes[0].cut_at == 15);
  CHECK(resumes[0].resumed_from == 12);
  CHECK(resumes[0].frame == 1);
  CHECK(resumes[0].dropped == 3);
  CHECK_FALSE(resumes[0].range_ignored);
  CHECK_FALSE(resumes[0].why.empty());
  CHECK(f.noted ==
        std::vector<std::string>{"cut at byte 15 in frame 1 (" + resumes[0].why +
                                 "); resumed at byte 12, the end of the last verified frame (3 staged bytes dropped)"});
  CHECK(registry::resumes_json(f.log).dump() ==
        R"([{"cut_at":15,"resumed_from":12,"frame":1,"dropped":3,"range_ignored":false,"why":)" +
            nlohmann::json(resumes[0].why).dump() + "}]");
}

TEST_CASE("payload fetch: a registry that ignores Range is skipped into, and the resume says so", "[payload-fetch]") {
  test::LoopbackHttp server({cut_answer(0, 15, 200), http_answer(200, {}, kBlob)});
  Fetched f;
  fetch(server, plan_for(test::digest_of(kBlob)), f);
  CHECK(f.error.empty());
  CHECK(f.delivered == std::vector<std::string>{"4:" + kFrame0, "12:" + kFrame1});
  REQUIRE(f.log.resumes().size() == 1);
  registry::Resume r = f.log.resumes()[0];
  CHECK(r.range_ignored);
  CHECK(r.cut_at == 15);
  CHECK(r.resumed_from == 12);
  CHECK_THAT(
      f.noted.at(0),
      Catch::EndsWith("(3 staged bytes dropped); the registry ignores Range: its answers start at byte 0 and are skipped into"));
}

TEST_CASE("payload fetch: cut five times in a row in one frame is an error naming the frame and the byte", "[payload-fetch]") {
  test::LoopbackHttp server({cut_answer(4, 11), cut_answer(12, 3), cut_answer(12, 3), cut_answer(12, 3), cut_answer(12, 3)});
  Fetched f;
  const std::string digest = test::digest_of(kBlob);
  fetch(server, plan_for(digest), f);
  CHECK_THAT(f.error, Catch::StartsWith("blob " + digest + ": the transfer was cut 5 times in frame 1 (last at byte 15: "));
  CHECK(f.delivered == std::vector<std::string>{"4:" + kFrame0});
  CHECK(f.log.resumes().size() == 4);  // the fifth cut is the error, not a resume
  CHECK(f.ranges == std::vector<std::string>{"bytes=4-23", "bytes=12-23", "bytes=12-23", "bytes=12-23", "bytes=12-23"});
}

TEST_CASE("payload fetch: a tampered frame stops at that frame, its bytes never reach the consumer", "[payload-fetch]") {
  test::LoopbackHttp server({whole_answer(4)});
  Fetched f;
  const std::string digest = test::digest_of(kBlob);
  fetch(server, plan_for(digest, "cccccccccccc"), f);
  CHECK(f.error == "blob " + digest + ": frame 1 does not match the SHA-256 its manifest gives (corrupt or tampered blob)");
  CHECK(f.delivered == std::vector<std::string>{"4:" + kFrame0});
  CHECK(f.log.resumes().empty());
}

TEST_CASE("payload fetch: frames that check but a layer that does not: the last frame is held back", "[payload-fetch]") {
  test::LoopbackHttp server({whole_answer(4)});
  Fetched f;
  const std::string claimed = test::digest_of("another blob");
  fetch(server, plan_for(claimed), f);
  CHECK(f.error ==
        "blob " + claimed + ": the downloaded bytes hash to " + test::digest_of(kBlob) + " (corrupt or tampered blob)");
  CHECK(f.delivered == std::vector<std::string>{"4:" + kFrame0});
}

TEST_CASE("describe: the resume in words, with or without the Range note", "[payload-fetch]") {
  registry::Resume r{1000, 900, 3, 100, false, "Connection reset"};
  CHECK(
      registry::describe(r) ==
      "cut at byte 1000 in frame 3 (Connection reset); resumed at byte 900, the end of the last verified frame (100 staged bytes dropped)");
  r.range_ignored = true;
  CHECK(
      registry::describe(r) ==
      "cut at byte 1000 in frame 3 (Connection reset); resumed at byte 900, the end of the last verified frame (100 staged bytes dropped)"
      "; the registry ignores Range: its answers start at byte 0 and are skipped into");
  registry::FetchLog empty;
  CHECK(registry::resumes_json(empty).dump() == "[]");
}
