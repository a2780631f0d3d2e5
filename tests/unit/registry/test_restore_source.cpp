// registry/restore_source.cpp: an ArchiveStream as restore's StreamedArchive. `choose` asks for the tag alone; `open`
// runs the caller's check first (a refusal there fetches no header byte), then hands on the header, the payload's
// offset and a producer of the payload.
#include <atomic>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "registry/restore_source.hpp"
#include "unit/loopback_http.hpp"
#include "unit/served_archive.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"

using namespace ccpack;
namespace oci = ccpack::registry::oci;

namespace {

// A stream of 127.0.0.1:PORT/team/model:v1 (plain HTTP, one attempt).
registry::ArchiveStream source_stream(const test::LoopbackHttp& server) {
  registry::SessionOptions o;
  o.http.plain_http = true;
  o.http.max_attempts = 1;
  return {oci::parse_reference("127.0.0.1:" + std::to_string(server.port()) + "/team/model:v1"), o, [](const std::string&) {},
          false};
}

std::vector<std::string> request_lines(test::LoopbackHttp& server) {
  std::vector<std::string> lines;
  for (const std::string& r : server.requests()) lines.push_back(test::first_line(r));
  return lines;
}

}  // namespace

TEST_CASE("restore source: choose, then the caller's check, then the header and the payload") {
  test::NoCredentials none;
  test::ServedArchive a;
  test::LoopbackHttp server({a.manifest_answer(), a.header_answer(), a.payload_answer()});
  registry::ArchiveStream stream = source_stream(server);
  std::vector<std::string> order;
  unpack::StreamedArchive source =
      registry::restore_source(stream, false, [&] { order.push_back("check " + stream.chosen().layer.digest); });
  source.choose(test::served_machine());
  CHECK(order.empty());
  unpack::OpenedStream opened = source.open();
  CHECK(order == std::vector<std::string>{"check " + a.layer_digest});
  CHECK(opened.name == stream.what());
  CHECK(opened.payload_start == a.header_size);
  CHECK(to_hex(opened.header.manifest_sha256) == a.manifest_sha256);
  std::string pushed;
  std::atomic<bool> cancelled{false};
  opened.produce([&](const char* data, std::size_t size) { pushed.append(data, size); }, cancelled);
  CHECK(pushed == a.bytes.substr(a.header_size));
  std::string blob = test::blob_request_line(a.layer_digest);
  CHECK(request_lines(server) == std::vector<std::string>{test::kTagRequestLine, blob, blob});
}

TEST_CASE("restore source: a check that refuses fetches no header, and a single archive may differ when asked") {
  test::NoCredentials none;
  test::ServedArchive a;
  manifest::Fingerprint a100 = test::served_machine();
  a100.set(manifest::field::gpu_arch, "sm_80", "nvml");
  test::LoopbackHttp server({a.manifest_answer()});
  registry::ArchiveStream stream = source_stream(server);
  unpack::StreamedArchive source =
      registry::restore_source(stream, true, [] { throw IntegrityError("no cosign signature of the chosen archive"); });
  source.choose(a100);  // does not fit, offered all the same (single_may_differ)
  CHECK(stream.chosen().layer.digest == a.layer_digest);
  CHECK(test::integrity_error([&] { (void)source.open(); }) == "no cosign signature of the chosen archive");
  CHECK(request_lines(server) == std::vector<std::string>{test::kTagRequestLine});
}
