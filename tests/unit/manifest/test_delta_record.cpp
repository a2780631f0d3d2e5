// manifest/delta_record.cpp: the optional "delta" and "merge" fields written only when set (a plain manifest's
// bytes are as before), in their place, read back exactly, and every malformed value refused by its field name.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "manifest/delta_record.hpp"
#include "manifest/manifest.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"

using namespace ccpack;
using namespace ccpack::manifest;

namespace {

const std::string kA(64, 'a');
const std::string kB(64, 'b');

template <class Record>
std::string record_refusal(const std::string& field_json) {
  try {
    (void)Record::from_tree(nlohmann::json::parse(field_json));
  } catch (const IntegrityError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("delta record: absent from a plain manifest, written before tar_size, read back exactly") {
  Manifest m = test::triton_manifest();
  std::string plain = m.to_json();
  CHECK(plain.find("\"delta\"") == std::string::npos);
  CHECK(plain.find("\"merge\"") == std::string::npos);
  CHECK_FALSE(Manifest::parse(plain).delta.has_value());
  CHECK_FALSE(Manifest::parse(plain).merge.has_value());
  m.delta = DeltaRecord{kA};
  m.merge = MergeRecord{kB, {{kA, 3}, {kB, 0}}};
  std::string json = m.to_json();
  CHECK(json.find("\"bytes\":5}],\"delta\":{\"base_manifest_sha256\":\"" + kA + "\"},\"merge\":{\"base_manifest_sha256\":\"" +
                  kB + "\",\"deltas\":[{\"manifest_sha256\":\"" + kA + "\",\"added\":3},{\"manifest_sha256\":\"" + kB +
                  "\",\"added\":0}]},\"tar_size\":") != std::string::npos);
  Manifest back = Manifest::parse(json);
  REQUIRE(back.delta.has_value());
  CHECK(*back.delta == *m.delta);
  REQUIRE(back.merge.has_value());
  CHECK(*back.merge == *m.merge);
  CHECK(Manifest::parse_top_level(json).merge == m.merge);
}

TEST_CASE("delta record: a malformed field is refused by name") {
  CHECK(record_refusal<DeltaRecord>("[]") == "manifest field 'delta' is not an object");
  CHECK(record_refusal<DeltaRecord>("{}") == "manifest field 'delta.base_manifest_sha256' is missing");
  CHECK(record_refusal<DeltaRecord>(R"({"base_manifest_sha256": 1})") ==
        "manifest field 'delta.base_manifest_sha256' is not a string");
  CHECK(record_refusal<DeltaRecord>(R"({"base_manifest_sha256": ")" + std::string(64, 'A') + "\"}") ==
        "manifest field 'delta.base_manifest_sha256' is not 64 lowercase hex digits");
  CHECK(record_refusal<DeltaRecord>(R"({"base_manifest_sha256": ")" + kA + "\"}") == "accepted");
  CHECK(record_refusal<MergeRecord>(R"({"base_manifest_sha256": ")" + kA + R"(", "deltas": {}})") ==
        "manifest field 'merge.deltas' is not an array");
  CHECK(record_refusal<MergeRecord>(R"({"base_manifest_sha256": ")" + kA + R"(", "deltas": [{"manifest_sha256": ")" + kA +
                                    R"("}]})") == "manifest field 'merge.deltas[0].added' is missing");
  CHECK(record_refusal<MergeRecord>(R"({"base_manifest_sha256": ")" + kA + R"(", "deltas": [{"manifest_sha256": ")" + kB +
                                    R"(", "added": 1}, {"manifest_sha256": ")" + kA + R"(", "added": 1}]})") ==
        "manifest field 'merge.deltas[1].manifest_sha256' is not after the one before it (sorted, each once)");
}
