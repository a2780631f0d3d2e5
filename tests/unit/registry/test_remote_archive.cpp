// registry/remote_archive.cpp against a scripted loopback registry: the archive a tag's index or manifest offers
// this machine (by the annotations of unit/served_archive.hpp's archives), each refusal's exit code and message
// with no blob requested, and the header frame's checks against the layer and its annotations.
#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <vector>

#include "registry/remote_archive.hpp"
#include "unit/loopback_http.hpp"
#include "unit/served_archive.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"

using namespace ccpack;
namespace oci = ccpack::registry::oci;

namespace {

struct Selected {
  std::optional<registry::RemoteArchive> remote;
  std::string error;  // "exit N: MESSAGE" or ""
  std::string ref;    // "127.0.0.1:PORT/team/model:v1"
  std::vector<std::string> lines;
};

Selected select_with(const std::vector<std::string>& answers, const manifest::Fingerprint& machine,
                     bool single_may_differ = false) {
  test::NoCredentials none;
  test::LoopbackHttp server(answers);
  Selected out;
  out.ref = "127.0.0.1:" + std::to_string(server.port()) + "/team/model:v1";
  registry::Session s = test::session_for(server);
  try {
    out.remote = registry::select_remote(s, machine, single_may_differ);
  } catch (const Error& e) {
    out.error = "exit " + std::to_string(static_cast<int>(e.code())) + ": " + e.what();
  }
  for (const std::string& r : server.requests()) out.lines.push_back(test::first_line(r));
  return out;
}

manifest::Fingerprint with_arch(const std::string& arch) {
  manifest::Fingerprint fp = test::served_machine();
  fp.set(manifest::field::gpu_arch, arch, "nvml");
  return fp;
}

// An index of the served archives' manifests, each entry annotated as push annotates it.
std::string index_answer(const std::vector<const test::ServedArchive*>& archives) {
  oci::Index index;
  for (const test::ServedArchive* a : archives) {
    std::string json = oci::to_json(a->manifest);
    index.manifests.push_back(
        {std::string(oci::kImageManifestType), oci::digest_of(json), json.size(), {}, a->manifest.annotations});
  }
  return test::http_answer(200, {"Content-Type: " + std::string(oci::kImageIndexType)}, oci::to_json(index));
}

std::string describe_of(const manifest::Fingerprint& fp) { return oci::describe(oci::selection_of(fp)); }

}  // namespace

TEST_CASE("remote archive: an index's entry that fits is chosen and fetched by its digest") {
  test::ServedArchive h200;
  test::ServedArchive a100(with_arch("sm_80"));
  std::string index = index_answer({&h200, &a100});
  std::string a100_json = oci::to_json(a100.manifest);
  Selected s = select_with({index, a100.manifest_answer()}, with_arch("sm_80"));
  REQUIRE(s.error == "");
  CHECK(s.lines == std::vector<std::string>{test::kTagRequestLine,
                                            "GET /v2/team/model/manifests/" + oci::digest_of(a100_json) + " HTTP/1.1"});
  CHECK(s.remote->manifest_digest == oci::digest_of(a100_json));
  CHECK(s.remote->index_digest.starts_with("sha256:"));
  CHECK(s.remote->layer.digest == a100.layer_digest);
  CHECK(s.remote->layer.size == a100.bytes.size());
  CHECK(s.remote->header_size == a100.header_size);
  CHECK(s.remote->selection == describe_of(with_arch("sm_80")));
  CHECK(s.remote->what == "archive " + a100.layer_digest + " of " + s.ref);
}

TEST_CASE("remote archive: no entry fits, exit 3 listing what there is, and no manifest or blob fetched") {
  test::ServedArchive h200;
  test::ServedArchive a100(with_arch("sm_80"));
  Selected s = select_with({index_answer({&h200, &a100})}, with_arch("sm_70"));
  CHECK(s.error == "exit 3: no archive in " + s.ref + " fits this machine (" + describe_of(with_arch("sm_70")) +
                       "); available: " + describe_of(test::served_machine()) + "; " + describe_of(with_arch("sm_80")));
  CHECK(s.lines == std::vector<std::string>{test::kTagRequestLine});
  // A single manifest that does not fit is refused the same way, unless the caller's policy judges it.
  Selected single = select_with({h200.manifest_answer()}, with_arch("sm_70"));
  CHECK(single.error == "exit 3: no archive in " + single.ref + " fits this machine (" + describe_of(with_arch("sm_70")) +
                            "); available: " + describe_of(test::served_machine()));
  Selected taken = select_with({h200.manifest_answer()}, with_arch("sm_70"), true);
  CHECK(taken.error == "");
  CHECK(taken.remote->index_digest == "");
}

TEST_CASE("remote archive: what is not a ccpack archive is refused by name") {
  test::ServedArchive a;
  Selected missing = select_with({test::http_answer(404, {}, "")}, test::served_machine());
  CHECK(missing.error == "exit 1: " + missing.ref + " not found in the registry");

  Selected docker =
      select_with({test::http_answer(200, {"Content-Type: application/vnd.docker.distribution.manifest.v2+json"}, "{}")},
                  test::served_machine());
  CHECK(docker.error == "exit 1: " + docker.ref +
                            " is not a ccpack artifact (media type 'application/vnd.docker.distribution.manifest.v2+json')");

  oci::ImageManifest other = a.manifest;
  other.artifact_type = "application/x-other";
  Selected wrong = select_with({test::ServedArchive::manifest_answer(oci::to_json(other))}, test::served_machine());
  CHECK(wrong.error ==
        "exit 1: " + wrong.ref + " is not a ccpack archive artifact (artifactType 'application/x-other', 1 layer(s))");
}

TEST_CASE("remote archive: the header size annotation is required and bounded") {
  test::ServedArchive a;
  const std::string key(oci::kAnnotationHeaderSize);
  for (const std::string& value : {std::string("71"), std::to_string(a.bytes.size()), std::string("12a"), std::string("")}) {
    oci::ImageManifest m = a.manifest;
    m.annotations[key] = value;
    Selected s = select_with({test::ServedArchive::manifest_answer(oci::to_json(m))}, test::served_machine());
    CHECK(s.error ==
          "exit 4: archive " + a.layer_digest + " of " + s.ref + ": annotation " + key + " is not a valid header size");
  }
  oci::ImageManifest m = a.manifest;
  m.annotations.erase(key);
  Selected s = select_with({test::ServedArchive::manifest_answer(oci::to_json(m))}, test::served_machine());
  CHECK(s.error == "exit 4: archive " + a.layer_digest + " of " + s.ref + ": annotation " + key + " is missing");
}

TEST_CASE("remote archive: the header frame is checked against the layer's size and the manifest annotation") {
  test::ServedArchive a;
  auto header_of = [&](const oci::ImageManifest& m, const std::string& blob_answer) {
    test::NoCredentials none;
    test::LoopbackHttp server({test::ServedArchive::manifest_answer(oci::to_json(m)), blob_answer});
    registry::Session s = test::session_for(server);
    std::string seen;
    try {
      registry::RemoteArchive r = registry::select_remote(s, test::served_machine(), false);
      registry::RemoteHeader h =
          registry::fetch_header(s, r, [&](const char* data, std::size_t size) { seen.append(data, size); });
      CHECK(seen == a.bytes.substr(0, a.header_size));
      CHECK(h.header.header_size == a.header_size);
      CHECK(to_hex(h.header.manifest_sha256) == a.manifest_sha256);
      CHECK(h.manifest.entries.size() == 6);
      return std::string("ok");
    } catch (const Error& e) {
      return std::string(e.what());
    }
  };
  CHECK(header_of(a.manifest, a.header_answer()) == "ok");

  oci::ImageManifest other_sha = a.manifest;
  other_sha.annotations[std::string(oci::kAnnotationManifestSha256)] = std::string(64, '0');
  std::string what = "archive " + a.layer_digest + " of 127.0.0.1:";
  std::string refused = header_of(other_sha, a.header_answer());
  CHECK(refused.starts_with(what));
  CHECK(refused.ends_with("/team/model:v1: the archive's manifest does not match annotation org.ccpack.manifest.sha256"));

  oci::ImageManifest longer = a.manifest;
  longer.layers[0].size += 1;
  refused = header_of(
      longer, test::http_answer(
                  206, {"Content-Range: bytes 0-" + std::to_string(a.header_size - 1) + "/" + std::to_string(a.bytes.size() + 1)},
                  a.bytes.substr(0, a.header_size)));
  // The header reader holds the header to the layer's size first: the layer is one byte longer than the archive.
  CHECK(refused.starts_with("'" + what));
  CHECK(refused.ends_with("/team/model:v1' has 1 unexpected bytes after the payload"));
}
