// manifest/marker.cpp, the restore marker: its exact bytes (key order, sorted fingerprint, null signed_by), a
// round trip, the older forms it still reads, and every broken or hostile marker read as absent (never trusted,
// never a crash): wrong version, bad digest, missing or mistyped keys, repeated keys, deep nesting, oversized,
// a link, a folder, a FIFO in its place.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "manifest/marker.hpp"
#include "manifest/reserved_names.hpp"
#include "unit/support.hpp"

using namespace ccpack;
using manifest::Marker;
namespace fs = std::filesystem;

namespace {

const std::string kDigest = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

Marker sample_marker() {
  Marker m;
  m.archive_manifest_sha256 = kDigest;
  m.component = "inductor";
  m.restored_by = "ccpack 0.1.0";
  m.restored_at = "2026-12-01T09:30:00Z";
  m.fingerprint.set(manifest::field::triton_version, "3.6.0", "python:dist-info (triton)");
  m.fingerprint.set(manifest::field::gpu_arch, "sm_90", "nvml");
  return m;
}

// A marker's text with `members` after the digest and component.
std::string marker_with(const std::string& members) {
  return R"({"archive_manifest_sha256": ")" + kDigest + R"(", "component": "triton")" + members + "}";
}

}  // namespace

TEST_CASE("marker: exact bytes, keys in their order, fingerprint keys sorted, signed_by null when unsigned", "[marker]") {
  Marker m = sample_marker();
  CHECK(m.to_json() ==
        R"({"marker":1,"archive_manifest_sha256":")" + kDigest +
            R"(","component":"inductor","restored_by":"ccpack 0.1.0","restored_at":"2026-12-01T09:30:00Z","signed_by":null,)"
            R"("origin":null,"fingerprint":{"fields":{"gpu.arch":{"source":"nvml","value":"sm_90"},)"
            R"J("triton.version":{"source":"python:dist-info (triton)","value":"3.6.0"}},"schema":1,"triton_targets":[]}})J"
            "\n");
  m.signed_by = "21fe31dfa154a261";
  CHECK_THAT(m.to_json(), Catch::Contains(R"("signed_by":"21fe31dfa154a261",)"));
  auto back = Marker::parse(m.to_json());
  REQUIRE(back);
  CHECK(back->version == 1);
  CHECK(back->archive_manifest_sha256 == kDigest);
  CHECK(back->component == "inductor");
  CHECK(back->restored_by == "ccpack 0.1.0");
  CHECK(back->restored_at == "2026-12-01T09:30:00Z");
  CHECK(back->signed_by == "21fe31dfa154a261");
  CHECK(back->fingerprint == m.fingerprint);
  CHECK(back->fingerprint_error.empty());
  CHECK(back->to_json() == m.to_json());
  CHECK(back->origin.empty());
}

TEST_CASE("marker: the archive's origin is recorded, read back, and bounded", "[marker]") {
  Marker m = sample_marker();
  m.origin = "oci://registry.example:5000/ml/cache:v42";
  CHECK_THAT(m.to_json(),
             Catch::Contains(R"("signed_by":null,"origin":"oci://registry.example:5000/ml/cache:v42","fingerprint")"));
  auto back = Marker::parse(m.to_json());
  REQUIRE(back);
  CHECK(back->origin == "oci://registry.example:5000/ml/cache:v42");
  auto long_one = Marker::parse(marker_with(R"(, "origin": ")" + std::string(10000, 'a') + R"(", "fingerprint": {})"));
  REQUIRE(long_one);
  CHECK(long_one->origin == std::string(manifest::kMaxMarkerOrigin, 'a'));
  CHECK_FALSE(Marker::parse(marker_with(R"(, "origin": 7, "fingerprint": {})")));
}

TEST_CASE("marker: the archive's settle record is kept, null when it has none, older or unreadable ones do not say", "[marker]") {
  Marker m = sample_marker();
  CHECK_THAT(m.to_json(), !Catch::Contains("settle"));  // not recorded: no key, as before
  m.settle_recorded = true;
  CHECK_THAT(m.to_json(), Catch::Contains(R"("origin":null,"settle":null,"fingerprint")"));
  auto unsettled = Marker::parse(m.to_json());
  REQUIRE(unsettled);
  CHECK((unsettled->settle_recorded && !unsettled->settle));
  m.settle = manifest::SettleRecord{2, true, "fixed-point", {0, 0, 0, 1}};
  CHECK_THAT(m.to_json(), Catch::Contains(R"("settle":{"runs":2,"settled":true,"stopped":"fixed-point","last_run_compiled":)"));
  auto settled = Marker::parse(m.to_json());
  REQUIRE(settled);
  CHECK(settled->settle_recorded);
  CHECK(settled->settle == m.settle);
  auto older = Marker::parse(marker_with(R"(, "fingerprint": {})"));
  REQUIRE(older);
  CHECK_FALSE(older->settle_recorded);
  auto bad = Marker::parse(marker_with(R"(, "settle": {"runs": "two"}, "fingerprint": {})"));
  REQUIRE(bad);  // still a marker: the folder is not restored again for it
  CHECK_FALSE(bad->settle_recorded);
  CHECK_FALSE(bad->settle);
}

TEST_CASE("marker: older markers (no version key, no restored_at, no signed_by) still read", "[marker]") {
  auto old = Marker::parse(marker_with(R"(, "restored_by": "ccpack 0.0.9", "fingerprint": {})"));
  REQUIRE(old);
  CHECK(old->version == 1);
  CHECK(old->component == "triton");
  CHECK(old->restored_by == "ccpack 0.0.9");
  CHECK(old->restored_at.empty());
  CHECK(old->signed_by.empty());
  CHECK(old->origin.empty());
  CHECK_FALSE(old->fingerprint.recorded());
  auto bare = Marker::parse(marker_with(R"(, "signed_by": null, "fingerprint": {})"));
  REQUIRE(bare);
  CHECK(bare->restored_by.empty());
  CHECK(bare->signed_by.empty());
}

TEST_CASE("marker: a fingerprint that does not parse keeps the marker and says why", "[marker]") {
  auto m = Marker::parse(marker_with(R"(, "fingerprint": {"schema": 1, "fields": {"gpu.arch": {"value": 90, "source": "x"}}})"));
  REQUIRE(m);
  CHECK_FALSE(m->fingerprint.recorded());
  CHECK_FALSE(m->fingerprint_error.empty());
  CHECK_THAT(m->fingerprint_error, Catch::Contains("gpu.arch"));
}

TEST_CASE("marker: anything else is no marker", "[marker]") {
  const std::string fp = R"(, "fingerprint": {})";
  CHECK(Marker::parse(marker_with(fp)));  // the control: this one reads
  CHECK_FALSE(Marker::parse(""));
  CHECK_FALSE(Marker::parse("[]"));
  CHECK_FALSE(Marker::parse("\"marker\""));
  CHECK_FALSE(Marker::parse(marker_with(fp).substr(0, 40)));              // truncated
  CHECK_FALSE(Marker::parse(marker_with(R"(, "marker": 2)" + fp)));       // a later version
  CHECK_FALSE(Marker::parse(marker_with(R"(, "marker": "1")" + fp)));     // mistyped version
  CHECK_FALSE(Marker::parse(marker_with("")));                            // no fingerprint
  CHECK_FALSE(Marker::parse(marker_with(R"(, "fingerprint": [])")));      // not an object
  CHECK_FALSE(Marker::parse(marker_with(R"(, "restored_by": 7)" + fp)));  // mistyped
  CHECK_FALSE(Marker::parse(marker_with(R"(, "signed_by": 7)" + fp)));
  CHECK_FALSE(Marker::parse(marker_with(R"(, "component": "inductor")" + fp)));                           // a repeated key
  CHECK_FALSE(Marker::parse(R"({"archive_manifest_sha256": ")" + kDigest + R"(", "fingerprint": {}})"));  // no component
  std::string upper = marker_with(fp);
  upper.replace(upper.find("abcdef"), 6, "ABCDEF");
  CHECK_FALSE(Marker::parse(upper));  // the digest is lower-case hex
  std::string short_digest = marker_with(fp);
  short_digest.erase(short_digest.find("0123"), 1);
  CHECK_FALSE(Marker::parse(short_digest));
  CHECK_FALSE(Marker::parse(marker_with(R"(, "x": )" + std::string(10000, '[') + std::string(10000, ']') + fp)));  // deep
  std::string padded = marker_with(fp);
  padded.insert(1, manifest::kMaxMarkerBytes, ' ');
  CHECK_FALSE(Marker::parse(padded));  // over kMaxMarkerBytes, although JSON
}

TEST_CASE("marker: read from a folder, absent, a folder, a link, a FIFO or oversized read as none", "[marker]") {
  test::ScratchDir t;
  CHECK_FALSE(Marker::read(t / "none"));
  CHECK_FALSE(Marker::read(t.path()));
  test::write_file(t / "ok" / manifest::kMarkerName, sample_marker().to_json());
  auto m = Marker::read(t / "ok");
  REQUIRE(m);
  CHECK(m->component == "inductor");
  fs::create_directories(t / "dir" / manifest::kMarkerName);
  CHECK_FALSE(Marker::read(t / "dir"));
  fs::create_directories(t / "link");
  fs::create_symlink(t / "ok" / manifest::kMarkerName, t / "link" / manifest::kMarkerName);
  CHECK_FALSE(Marker::read(t / "link"));  // a marker is never read through a link
  fs::create_directories(t / "fifo");
  REQUIRE(::mkfifo((t / "fifo" / manifest::kMarkerName).c_str(), 0600) == 0);
  CHECK_FALSE(Marker::read(t / "fifo"));  // no writer: must not wait for one
  std::string big = sample_marker().to_json();
  big.insert(1, manifest::kMaxMarkerBytes, ' ');
  test::write_file(t / "big" / manifest::kMarkerName, big);
  CHECK_FALSE(Marker::read(t / "big"));
}

TEST_CASE("utc_now: RFC 3339 in UTC, second precision", "[marker]") {
  std::string now = manifest::utc_now();
  REQUIRE(now.size() == 20);
  CHECK(now[4] == '-');
  CHECK(now[7] == '-');
  CHECK(now[10] == 'T');
  CHECK(now[13] == ':');
  CHECK(now[16] == ':');
  CHECK(now[19] == 'Z');
  CHECK(now.substr(0, 2) == "20");
  CHECK(now.find_first_not_of("0123456789-T:Z") == std::string::npos);
}
