// tools/machine.cpp: --select checked before anything is probed (a known field, a printable value, each field once),
// the fingerprint file from --fingerprint or CCPACK_FINGERPRINT_FILE, and the "machine" object of --json.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "tools/machine.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"

using namespace ccpack;

namespace {

std::string usage_error(const std::vector<std::string>& selects) {
  tools::MachineOptions o;
  o.select = selects;
  return test::usage_error([&] { tools::check_selects(o); });
}

}  // namespace

TEST_CASE("check_selects: FIELD=VALUE of a known field, a printable value, each field once") {
  CHECK(usage_error({"gpu.arch=sm_90", "triton.version=3.6.0"}) == "(no UsageError)");
  CHECK(usage_error({"gpu.arch"}) == "--select takes FIELD=VALUE (for example gpu.arch=sm_90), got 'gpu.arch'");
  CHECK_THAT(usage_error({"gpu.nope=1"}), Catch::StartsWith("--select: 'gpu.nope' is not a fingerprint field (fields: "));
  CHECK_THAT(usage_error({"gpu.arch=sm 90"}),
             Catch::StartsWith("--select gpu.arch: the value must be 1 to ") && Catch::EndsWith(" printable characters without spaces, got 'sm 90'"));
  CHECK_THAT(usage_error({"gpu.arch="}), Catch::EndsWith("got ''"));
  CHECK(usage_error({"gpu.arch=sm_90", "gpu.arch=sm_80"}) == "--select gpu.arch is given twice");
}

TEST_CASE("the fingerprint file: --fingerprint, else CCPACK_FINGERPRINT_FILE, else none") {
  ::unsetenv("CCPACK_FINGERPRINT_FILE");
  tools::MachineOptions o;
  CHECK(tools::fingerprint_file_of(o).empty());
  ::setenv("CCPACK_FINGERPRINT_FILE", "/env/fp.json", 1);
  CHECK(tools::fingerprint_file_of(o) == "/env/fp.json");
  o.fingerprint_file = "/flag/fp.json";
  CHECK(tools::fingerprint_file_of(o) == "/flag/fp.json");
  ::unsetenv("CCPACK_FINGERPRINT_FILE");
}

TEST_CASE("target_machine from a fingerprint file: its fields, and the file named as the source") {
  test::ScratchDir dir;
  tools::MachineOptions o;
  o.fingerprint_file = (dir / "fp.json").string();
  test::write_file(dir / "fp.json", R"({"ok": true, "schema": 1, "fields": {"gpu.arch": {"value": "sm_90", "source": "nvml"}}})");
  tools::Machine m = tools::target_machine(o, "python3", {});
  CHECK(m.source == "file '" + o.fingerprint_file + "'");
  REQUIRE(m.fingerprint.get("gpu.arch") != nullptr);
  CHECK(m.fingerprint.get("gpu.arch")->value == "sm_90");
}

TEST_CASE("machine_json: the source and each --select with what it replaced") {
  tools::Machine m;
  m.source = "probe";
  m.selected = {{"gpu.arch", "sm_90", std::nullopt, "not probed"}, {"triton.version", "3.6.0", "3.5.1", "python:dist-info"}};
  CHECK(tools::machine_json(m).dump() ==
        R"({"source":"probe","select":[{"field":"gpu.arch","value":"sm_90","before":null,"before_source":"not probed"},)"
        R"({"field":"triton.version","value":"3.6.0","before":"3.5.1","before_source":"python:dist-info"}]})");
}
