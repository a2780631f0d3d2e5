// converge/registry_inputs.cpp against a scripted loopback registry: the base pulled from its tag, the repository's
// tags listed, and each delta tag of the base (sorted; other tags ignored) pulled through a session of its own, all
// into the given folder byte for byte; a base named by digest alone is a usage error before any request.
#include <catch2/catch.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "converge/registry_inputs.hpp"
#include "unit/loopback_http.hpp"
#include "unit/served_archive.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"

using namespace ccpack;
namespace fs = std::filesystem;
namespace oci = ccpack::registry::oci;

namespace {

// Sessions to `server` for any reference, plain HTTP, one attempt; `opened` gets each reference's tag.
std::function<std::unique_ptr<registry::Session>(const oci::Reference&)> sessions_of(std::vector<std::string>& opened) {
  return [&opened](const oci::Reference& ref) {
    opened.push_back(ref.tag);
    registry::SessionOptions o;
    o.http.plain_http = true;
    o.http.max_attempts = 1;
    return std::make_unique<registry::Session>(ref, o);
  };
}

}  // namespace

TEST_CASE("registry inputs: the base, then each delta tag of it in order, each pulled whole") {
  test::NoCredentials none;
  test::ServedArchive base;
  manifest::Fingerprint other = test::served_machine();
  other.set(manifest::field::gpu_arch, "sm_80", "nvml");
  test::ServedArchive delta(other);  // fit is not judged here: the merge's gate does that
  std::string tags =
      R"({"name":"team/model","tags":["v1","v1.delta-bbbbbbbbbbbb","v1.delta-aaaaaaaaaaaa","v1.delta-short","v2.delta-cccccccccccc"]})";
  std::vector<std::string> answers = {base.manifest_answer(),  base.header_answer(),
                                      base.payload_answer(),   test::http_answer(200, {"Content-Type: application/json"}, tags),
                                      delta.manifest_answer(), delta.header_answer(),
                                      delta.payload_answer(),  base.manifest_answer(),
                                      base.header_answer(),    base.payload_answer()};
  test::LoopbackHttp server(answers);
  test::ScratchDir t;
  std::vector<std::string> opened;
  oci::Reference ref = oci::parse_reference("127.0.0.1:" + std::to_string(server.port()) + "/team/model:v1");
  converge::RegistryInputs in = converge::pull_inputs(ref, sessions_of(opened), t.path());
  CHECK(opened == std::vector<std::string>{"v1", "v1.delta-aaaaaaaaaaaa", "v1.delta-bbbbbbbbbbbb"});
  CHECK(in.base == t / "base.ccpack");
  CHECK(in.delta_tags == std::vector<std::string>{"v1.delta-aaaaaaaaaaaa", "v1.delta-bbbbbbbbbbbb"});
  CHECK(in.deltas == std::vector<fs::path>{t / "v1.delta-aaaaaaaaaaaa.ccpack", t / "v1.delta-bbbbbbbbbbbb.ccpack"});
  CHECK(test::slurp(in.base) == base.bytes);
  CHECK(test::slurp(in.deltas[0]) == delta.bytes);
  CHECK(test::slurp(in.deltas[1]) == base.bytes);
  std::vector<std::string> lines;
  for (const std::string& r : server.requests()) lines.push_back(test::first_line(r));
  REQUIRE(lines.size() == 10);
  CHECK(lines[3] == "GET /v2/team/model/tags/list?n=1000 HTTP/1.1");
  CHECK(lines[4] == "GET /v2/team/model/manifests/v1.delta-aaaaaaaaaaaa HTTP/1.1");
  CHECK(lines[7] == "GET /v2/team/model/manifests/v1.delta-bbbbbbbbbbbb HTTP/1.1");
}

TEST_CASE("registry inputs: a base without a tag is a usage error, and nothing is asked of the registry") {
  std::vector<std::string> opened;
  oci::Reference ref = oci::parse_reference("127.0.0.1:1/team/model@sha256:" + std::string(64, 'a'));
  test::ScratchDir t;
  CHECK(test::usage_error([&] { (void)converge::pull_inputs(ref, sessions_of(opened), t.path()); }) ==
        "--deltas-from-registry needs the base's tag (its deltas are named after it), not only a digest");
  CHECK(opened.empty());
  CHECK(fs::is_empty(t.path()));
}
