// registry/archive_stream.cpp, restore oci://'s registry side, against a scripted loopback registry serving a real
// archive (unit/served_archive.hpp): choose asks for the tag alone, fetch_header for the header frame, produce hands
// on the payload's verified frames in order and nothing of a frame that fails its hash; json() is the report's
// "registry" object.
#include <atomic>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "registry/archive_stream.hpp"
#include "unit/loopback_http.hpp"
#include "unit/served_archive.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"

using namespace ccpack;
namespace oci = ccpack::registry::oci;

namespace {

registry::SessionOptions stream_options() {
  registry::SessionOptions o;
  o.http.plain_http = true;
  o.http.max_attempts = 1;
  return o;
}

std::string reference_of(const test::LoopbackHttp& server) {
  return "127.0.0.1:" + std::to_string(server.port()) + "/team/model:v1";
}

}  // namespace

TEST_CASE("archive stream: the tag, then the header frame, then the payload's frames in order") {
  test::NoCredentials none;
  test::ServedArchive a;
  test::LoopbackHttp server({a.manifest_answer(), a.header_answer(), a.payload_answer()});
  std::vector<std::string> warned;
  registry::ArchiveStream stream(
      oci::parse_reference(reference_of(server)), stream_options(), [&](const std::string& line) { warned.push_back(line); },
      false);
  stream.choose(test::served_machine(), false);
  CHECK(stream.what() == "archive " + a.layer_digest + " of " + reference_of(server));
  CHECK(stream.payload_start() == a.header_size);
  CHECK(stream.chosen().layer.digest == a.layer_digest);
  manifest::ArchiveHeader h = stream.fetch_header();
  CHECK(h.header_size == a.header_size);
  CHECK(to_hex(h.manifest_sha256) == a.manifest_sha256);
  std::string pushed;
  std::atomic<bool> cancelled{false};
  stream.produce([&](const char* data, std::size_t size) { pushed.append(data, size); }, cancelled);
  CHECK(pushed == a.bytes.substr(a.header_size));
  CHECK(warned.empty());
  nlohmann::ordered_json j = stream.json();
  CHECK(j["reference"] == reference_of(server));
  CHECK(j["manifest_digest"] == oci::digest_of(oci::to_json(a.manifest)));
  CHECK(j["layer_digest"] == a.layer_digest);
  CHECK(j["selection"] == oci::describe(oci::selection_of(test::served_machine())));
  CHECK(j["resumes"] == nlohmann::ordered_json::array());
  std::vector<std::string> lines;
  for (const std::string& r : server.requests()) lines.push_back(test::first_line(r));
  std::string blob = test::blob_request_line(a.layer_digest);
  CHECK(lines == std::vector<std::string>{test::kTagRequestLine, blob, blob});
}

TEST_CASE("archive stream: a payload frame that fails its hash is not handed on") {
  test::NoCredentials none;
  test::ServedArchive a;
  std::string payload = a.bytes.substr(a.header_size);
  payload[0] = static_cast<char>(payload[0] ^ 0x01);
  test::LoopbackHttp server({a.manifest_answer(), a.header_answer(), a.payload_answer(payload)});
  registry::ArchiveStream stream(
      oci::parse_reference(reference_of(server)), stream_options(), [](const std::string&) {}, false);
  stream.choose(test::served_machine(), false);
  (void)stream.fetch_header();
  std::string pushed;
  std::atomic<bool> cancelled{false};
  std::string error = test::integrity_error(
      [&] { stream.produce([&](const char* data, std::size_t size) { pushed.append(data, size); }, cancelled); });
  CHECK(error.find("frame 0") != std::string::npos);
  CHECK(pushed.empty());
}
