// manifest/settle_record.cpp: the optional "settle" field written only when set (a plain manifest's bytes are as
// before), read back exactly, and every malformed or inconsistent value refused by its field name.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "manifest/manifest.hpp"
#include "manifest/settle_record.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"

using namespace ccpack;
using namespace ccpack::manifest;

namespace {

SettleRecord settled() { return {3, true, std::string(kStoppedFixedPoint), {0, 0, 0, 2}}; }

std::string settle_refusal(const std::string& field_json) {
  nlohmann::json tree = nlohmann::json::parse(field_json);
  try {
    (void)SettleRecord::from_tree(tree);
  } catch (const IntegrityError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("settle record: absent from a plain manifest, written after components, read back exactly") {
  Manifest m = test::triton_manifest();
  std::string plain = m.to_json();
  CHECK(plain.find("\"settle\"") == std::string::npos);
  CHECK_FALSE(Manifest::parse(plain).settle.has_value());
  m.settle = settled();
  std::string json = m.to_json();
  CHECK(json.find("\"components\":[{\"name\":\"triton\",\"kind\":\"triton\",\"source\":\"/tmp/tri\",\"files\":1,\"bytes\":5}],"
                  "\"settle\":{\"runs\":3,\"settled\":true,\"stopped\":\"fixed-point\",\"last_run_compiled\":"
                  "{\"triton_kernels\":0,\"fx_graphs\":0,\"autotune\":0,\"other\":2}},\"tar_size\":") != std::string::npos);
  Manifest back = Manifest::parse(json);
  REQUIRE(back.settle.has_value());
  CHECK(*back.settle == settled());
  CHECK(back.to_json() == json);
  CHECK(*Manifest::parse_top_level(json).settle == settled());
  m.settle = SettleRecord{2, false, std::string(kStoppedRunLimit), {4, 1, 1, 0}};
  CHECK(Manifest::parse(m.to_json()).settle == m.settle);
}

TEST_CASE("settle record: each malformed field refused by name") {
  const std::string ok = R"("last_run_compiled":{"triton_kernels":0,"fx_graphs":0,"autotune":0,"other":0})";
  CHECK(settle_refusal("[]") == "manifest field 'settle' is not an object");
  CHECK(settle_refusal(R"({"settled":true,"stopped":"fixed-point",)" + ok + "}") == "manifest field 'settle.runs' is missing");
  CHECK(settle_refusal(R"({"runs":0,"settled":true,"stopped":"fixed-point",)" + ok + "}") ==
        "manifest field 'settle.runs' is not 1-1000");
  CHECK(settle_refusal(R"({"runs":-1,"settled":true,"stopped":"fixed-point",)" + ok + "}") ==
        "manifest field 'settle.runs' is not a non-negative integer");
  CHECK(settle_refusal(R"({"runs":1,"settled":1,"stopped":"fixed-point",)" + ok + "}") ==
        "manifest field 'settle.settled' is not true or false");
  CHECK(settle_refusal(R"({"runs":1,"settled":true,"stopped":"done",)" + ok + "}") ==
        "manifest field 'settle.stopped' is 'done', not 'fixed-point' or 'run-limit'");
  CHECK(
      settle_refusal(
          R"({"runs":1,"settled":true,"stopped":"fixed-point","last_run_compiled":{"triton_kernels":0,"fx_graphs":0,"autotune":0}})") ==
      "manifest field 'settle.last_run_compiled.other' is missing");
  // settled must agree with stopped and with the counts.
  CHECK_THAT(settle_refusal(R"({"runs":1,"settled":false,"stopped":"fixed-point",)" + ok + "}"),
             Catch::StartsWith("manifest field 'settle' is inconsistent"));
  CHECK_THAT(
      settle_refusal(
          R"({"runs":1,"settled":true,"stopped":"fixed-point","last_run_compiled":{"triton_kernels":1,"fx_graphs":0,"autotune":0,"other":0}})"),
      Catch::StartsWith("manifest field 'settle' is inconsistent"));
  CHECK(settle_refusal(R"({"runs":1,"settled":true,"stopped":"fixed-point",)" + ok + "}") == "accepted");
}

TEST_CASE("settle record: the tuning the runs had is written inside settle and read back exactly") {
  SettleRecord r = settled();
  r.tuning = TuningRecord{{"TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE=0", "TRITON_PTXAS_PATH=/opt/torch/bin/ptxas"},
                          {"TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=1"},
                          {}};
  nlohmann::json tree = nlohmann::json::parse(r.to_tree().dump());
  CHECK(tree["tuning"]["applied"][1] == "TRITON_PTXAS_PATH=/opt/torch/bin/ptxas");
  CHECK(SettleRecord::from_tree(tree) == r);
  // Without it (a ccpack that set nothing) the field is as before, and reads back without tuning.
  CHECK(settled().to_tree().dump().find("tuning") == std::string::npos);
  CHECK_FALSE(SettleRecord::from_tree(nlohmann::json::parse(settled().to_tree().dump())).tuning);
}

TEST_CASE("settle record: a malformed tuning is refused by its field name") {
  const std::string head =
      R"({"runs": 1, "settled": true, "stopped": "fixed-point", "last_run_compiled": {"triton_kernels": 0, "fx_graphs": 0, "autotune": 0, "other": 0}, "tuning": )";
  CHECK(settle_refusal(head + R"("x"})").find("settle.tuning") != std::string::npos);
  CHECK(settle_refusal(head + R"({"applied": [], "kept": []}})").find("settle.tuning") != std::string::npos);
  CHECK(settle_refusal(head + R"({"applied": [1], "kept": [], "skipped": []}})").find("settle.tuning.applied") !=
        std::string::npos);
  CHECK(settle_refusal(head + R"({"applied": [""], "kept": [], "skipped": []}})").find("settle.tuning.applied") !=
        std::string::npos);
  std::string many = R"({"applied": [)";
  for (int i = 0; i < 33; ++i) many += std::string(i ? "," : "") + "\"K=V\"";
  CHECK(settle_refusal(head + many + R"(], "kept": [], "skipped": []}})").find("settle.tuning.applied") != std::string::npos);
}
