// registry/pull.cpp against a scripted loopback registry serving a real archive (unit/served_archive.hpp): the file
// is the layer byte for byte after three requests (the tag, the header frame, the payload), and every refusal
// leaves no file; a refusal before the payload is decided on the requests already made, the server holding no
// answer for a payload request.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "registry/pull.hpp"
#include "unit/loopback_http.hpp"
#include "unit/served_archive.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"

using namespace ccpack;
namespace fs = std::filesystem;
namespace oci = ccpack::registry::oci;

namespace {

struct Pulled {
  registry::PullResult result;
  std::string error;                // "" or "exit N: MESSAGE"
  std::string ref;                  // "127.0.0.1:PORT/team/model:v1"
  std::vector<std::string> lines;   // the request line of each request made
  std::vector<std::string> ranges;  // the Range header of each, "" for none
  std::vector<std::string> calls;   // the request's callbacks, in order
};

// Pulls 127.0.0.1:PORT/team/model:v1 into `out` with the server's answers.
void pull_with(const std::vector<std::string>& answers, const fs::path& out, registry::PullRequest q, Pulled& p) {
  test::NoCredentials none;
  test::LoopbackHttp server(answers);
  p.ref = "127.0.0.1:" + std::to_string(server.port()) + "/team/model:v1";
  q.output = out;
  std::uint64_t bytes = 0;
  if (!q.check_signature) {
    q.check_signature = [&](const manifest::ArchiveHeader& h, const std::string& what) {
      p.calls.push_back("signature " + std::to_string(h.header_size) + " " + what);
      return std::string("signed by test");
    };
  }
  q.on_start = [&](std::uint64_t total) { p.calls.push_back("start " + std::to_string(total)); };
  q.on_bytes = [&](std::size_t n) { bytes += n; };
  registry::Session s = test::session_for(server);
  try {
    registry::pull(s, q, p.result);
  } catch (const Error& e) {
    p.error = "exit " + std::to_string(static_cast<int>(e.code())) + ": " + e.what();
  }
  p.calls.push_back("bytes " + std::to_string(bytes));
  for (const std::string& r : server.requests()) {
    p.lines.push_back(test::first_line(r));
    std::size_t at = r.find("\r\nRange: ");
    p.ranges.push_back(at == std::string::npos ? "" : r.substr(at + 9, r.find("\r\n", at + 2) - at - 9));
  }
}

registry::PullRequest request_for(const manifest::Fingerprint& machine) {
  registry::PullRequest q;
  q.machine = machine;
  return q;
}

}  // namespace

TEST_CASE("pull: the file is the layer byte for byte, after the tag, the header frame and the payload") {
  test::ServedArchive a;
  test::ScratchDir t;
  Pulled p;
  pull_with({a.manifest_answer(), a.header_answer(), a.payload_answer()}, t / "out.ccpack", request_for(test::served_machine()),
            p);
  REQUIRE(p.error == "");
  CHECK(test::slurp(t / "out.ccpack") == a.bytes);
  CHECK(p.lines == std::vector<std::string>{test::kTagRequestLine, test::blob_request_line(a.layer_digest),
                                            test::blob_request_line(a.layer_digest)});
  CHECK(p.ranges ==
        std::vector<std::string>{"", "bytes=0-" + std::to_string(a.header_size - 1),
                                 "bytes=" + std::to_string(a.header_size) + "-" + std::to_string(a.bytes.size() - 1)});
  CHECK(p.result.remote.what == "archive " + a.layer_digest + " of " + p.ref);
  CHECK(p.calls == std::vector<std::string>{"start " + std::to_string(a.bytes.size()),
                                            "signature " + std::to_string(a.header_size) + " " + p.result.remote.what,
                                            "bytes " + std::to_string(a.bytes.size())});
  CHECK(p.result.signature == "signed by test");
  CHECK(p.result.artifact == "");
  CHECK(p.result.remote.layer.digest == a.layer_digest);
  CHECK(p.result.remote.header_size == a.header_size);
  CHECK(p.result.remote.index_digest == "");
  CHECK(p.result.remote.selection == oci::describe(oci::selection_of(test::served_machine())));
  CHECK(p.result.log.resumes().empty());
}

TEST_CASE("pull: a signature check that refuses stops before any payload byte, and no file is left") {
  test::ServedArchive a;
  test::ScratchDir t;
  registry::PullRequest q = request_for(test::served_machine());
  q.check_signature = [](const manifest::ArchiveHeader&, const std::string& what) -> std::string {
    throw IntegrityError(what + ": signed by no trusted key");
  };
  Pulled p;
  pull_with({a.manifest_answer(), a.header_answer()}, t / "out.ccpack", q, p);
  CHECK(p.error == "exit 4: " + p.result.remote.what + ": signed by no trusted key");
  CHECK(p.lines == std::vector<std::string>{test::kTagRequestLine, test::blob_request_line(a.layer_digest)});
  CHECK_FALSE(fs::exists(t / "out.ccpack"));
  CHECK(fs::is_empty(t.path()));
}

TEST_CASE("pull: the artifact check runs before any archive byte, and what it returns is reported") {
  test::ServedArchive a;
  test::ScratchDir t;
  registry::PullRequest q = request_for(test::served_machine());
  q.check_artifact = [](registry::Session&, const registry::RemoteArchive& r) -> std::string {
    throw Error("no cosign signature for " + r.manifest_digest, ExitCode::integrity);
  };
  Pulled refused;
  pull_with({a.manifest_answer()}, t / "out.ccpack", q, refused);
  CHECK(refused.error == "exit 4: no cosign signature for " + oci::digest_of(oci::to_json(a.manifest)));
  CHECK(refused.lines == std::vector<std::string>{test::kTagRequestLine});
  CHECK(refused.calls == std::vector<std::string>{"bytes 0"});
  CHECK(fs::is_empty(t.path()));

  q.check_artifact = [](registry::Session&, const registry::RemoteArchive& r) {
    return "cosign " + r.manifest_digest.substr(0, 13);
  };
  Pulled ok;
  pull_with({a.manifest_answer(), a.header_answer(), a.payload_answer()}, t / "out.ccpack", q, ok);
  REQUIRE(ok.error == "");
  CHECK(ok.result.artifact == "cosign " + oci::digest_of(oci::to_json(a.manifest)).substr(0, 13));
  CHECK(test::slurp(t / "out.ccpack") == a.bytes);
}

TEST_CASE("pull: a payload frame that fails its hash is never written, and no file is left") {
  test::ServedArchive a;
  test::ScratchDir t;
  std::string payload = a.bytes.substr(a.header_size);
  payload.back() = static_cast<char>(payload.back() ^ 0x01);
  Pulled p;
  pull_with({a.manifest_answer(), a.header_answer(), a.payload_answer(payload)}, t / "out.ccpack",
            request_for(test::served_machine()), p);
  CHECK(p.error.starts_with("exit 4: "));
  CHECK(p.error.find("frame 0") != std::string::npos);
  CHECK(fs::is_empty(t.path()));
}

TEST_CASE("pull: an archive for another machine is refused by its annotations, before any blob, unless fit is off") {
  test::ServedArchive a;
  test::ScratchDir t;
  manifest::Fingerprint a100 = test::served_machine();
  a100.set(manifest::field::gpu_arch, "sm_80", "nvml");
  Pulled refused;
  pull_with({a.manifest_answer()}, t / "out.ccpack", request_for(a100), refused);
  CHECK(refused.error == "exit 3: no archive in " + refused.ref + " fits this machine (" +
                             oci::describe(oci::selection_of(a100)) +
                             "); available: " + oci::describe(oci::selection_of(test::served_machine())));
  CHECK(refused.lines == std::vector<std::string>{test::kTagRequestLine});
  CHECK(fs::is_empty(t.path()));

  registry::PullRequest q = request_for(a100);
  q.check_fit = false;
  Pulled taken;
  pull_with({a.manifest_answer(), a.header_answer(), a.payload_answer()}, t / "out.ccpack", q, taken);
  REQUIRE(taken.error == "");
  CHECK(test::slurp(t / "out.ccpack") == a.bytes);
}

TEST_CASE("pull: the signed fingerprint is judged when the annotations say nothing, before any payload byte") {
  test::ServedArchive a;
  test::ScratchDir t;
  oci::ImageManifest bare = a.manifest;
  for (std::string_view f : oci::kSelectionFields)
    bare.annotations.erase(std::string(oci::kAnnotationFieldPrefix) + std::string(f));
  manifest::Fingerprint a100 = test::served_machine();
  a100.set(manifest::field::gpu_arch, "sm_80", "nvml");
  Pulled p;
  pull_with({test::ServedArchive::manifest_answer(oci::to_json(bare)), a.header_answer()}, t / "out.ccpack", request_for(a100),
            p);
  CHECK(p.error ==
        "exit 3: archive " + a.layer_digest + " of " + p.ref +
            ": the archive's signed fingerprint does not fit this machine: gpu.arch is 'sm_90' in the archive, 'sm_80' here "
            "(inductor stale (gpu.arch); triton stale (gpu.arch))");
  CHECK(p.result.remote.selection == "(no annotations)");
  CHECK(p.lines == std::vector<std::string>{test::kTagRequestLine, test::blob_request_line(a.layer_digest)});
  CHECK(fs::is_empty(t.path()));
}
