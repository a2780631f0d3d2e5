// cli/machine.cpp: --select checked before anything is probed (a known field, a printable value, each field once),
// the fingerprint file from --fingerprint or CCPACK_FINGERPRINT_FILE, and the "machine" object of --json.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "cli/machine.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"

using namespace ccpack;

namespace {

std::string select_usage_error(const std::vector<std::string>& selects) {
  cli::MachineOptions o;
  o.select = selects;
  return test::usage_error([&] { cli::check_selects(o); });
}

}  // namespace

TEST_CASE("check_selects: FIELD=VALUE of a known field, a printable value, each field once") {
  CHECK(select_usage_error({"gpu.arch=sm_90", "triton.version=3.6.0"}) == "(no UsageError)");
  CHECK(select_usage_error({"gpu.arch"}) == "--select takes FIELD=VALUE (for example gpu.arch=sm_90), got 'gpu.arch'");
  CHECK_THAT(select_usage_error({"gpu.zzzzzz=1"}),
             Catch::StartsWith("--select: 'gpu.zzzzzz' is not a fingerprint field (fields: "));
  CHECK_THAT(select_usage_error({"gpu.arch=sm 90"}), Catch::StartsWith("--select gpu.arch: the value must be 1 to ") &&
                                                         Catch::EndsWith(" printable characters without spaces, got 'sm 90'"));
  CHECK_THAT(select_usage_error({"gpu.arch="}), Catch::EndsWith("got ''"));
  CHECK(select_usage_error({"gpu.arch=sm_90", "gpu.arch=sm_80"}) == "--select gpu.arch is given twice");
}

TEST_CASE("check_selects: a field name close to one gets a suggestion instead of the list") {
  CHECK(select_usage_error({"gpu.arc=sm_90"}) == "--select: 'gpu.arc' is not a fingerprint field; did you mean 'gpu.arch'?");
  CHECK(select_usage_error({"trition.version=3.6.0"}) ==
        "--select: 'trition.version' is not a fingerprint field; did you mean 'triton.version'?");
}

TEST_CASE("check_selects: a value must have its field's form, near misses are refused with the value meant") {
  const std::string arch_form = " (sm_NN for NVIDIA (e.g. sm_90, sm_100a) or gfxNNNN for AMD (e.g. gfx942, gfx90a, gfx1100))";
  for (const char* typo : {"sm90", "SM_90", "sm_9O", "sm-90", "Sm_90", "90", "compute_90"}) {
    CHECK(select_usage_error({std::string("gpu.arch=") + typo}) ==
          std::string("--select gpu.arch=") + typo + ": not a gpu.arch value" + arch_form + "; did you mean 'sm_90'?");
  }
  CHECK(select_usage_error({"gpu.arch=GFX942"}) ==
        "--select gpu.arch=GFX942: not a gpu.arch value" + arch_form + "; did you mean 'gfx942'?");
  CHECK(select_usage_error({"gpu.arch=hopper"}) == "--select gpu.arch=hopper: not a gpu.arch value" + arch_form);
  CHECK(select_usage_error({"gpu.vendor=nvida"}) ==
        "--select gpu.vendor=nvida: not a gpu.vendor value (nvidia or amd); did you mean 'nvidia'?");
  CHECK(select_usage_error({"gpu.vendor=NVIDIA"}) ==
        "--select gpu.vendor=NVIDIA: not a gpu.vendor value (nvidia or amd); did you mean 'nvidia'?");
  CHECK(select_usage_error({"world_size=eight"}) == "--select world_size=eight: not a world_size value (a whole number, e.g. 8)");
  CHECK(select_usage_error({"gpu.arch=sm_90", "gpu.arch=sm_100a", "gpu.vendor=amd", "cpu.arch=aarch64", "world_size=8",
                            "torch.version=2.11.0+cu130", "gpu.name=NVIDIA_H200"}) == "--select gpu.arch is given twice");
  CHECK(select_usage_error({"gpu.arch=gfx90a", "torch.version=2.6.0a0+git1234", "gpu.driver=570.86.15", "gpu.name=H200"}) ==
        "(no UsageError)");
}

TEST_CASE("CCPACK_SELECT gives the selections when no --select does, a --select replaces them all") {
  test::ScopedEnv env("CCPACK_SELECT", "gpu.arch=sm_90, gpu.vendor=nvidia  world_size=8");
  cli::MachineOptions o;
  CHECK(cli::selects_of(o) == std::vector<std::string>{"gpu.arch=sm_90", "gpu.vendor=nvidia", "world_size=8"});
  o.select = {"gpu.arch=gfx942"};
  CHECK(cli::selects_of(o) == std::vector<std::string>{"gpu.arch=gfx942"});
  test::ScopedEnv typo("CCPACK_SELECT", "gpu.arch=sm90");
  CHECK(select_usage_error({}) ==
        "--select gpu.arch=sm90: not a gpu.arch value (sm_NN for NVIDIA (e.g. sm_90, sm_100a) or gfxNNNN for "
        "AMD (e.g. gfx942, gfx90a, gfx1100)); did you mean 'sm_90'?");
  test::ScopedEnv unset("CCPACK_SELECT", std::nullopt);
  CHECK(cli::selects_of(cli::MachineOptions{}).empty());
}

TEST_CASE("the fingerprint file: --fingerprint, else CCPACK_FINGERPRINT_FILE, else none") {
  ::unsetenv("CCPACK_FINGERPRINT_FILE");
  cli::MachineOptions o;
  CHECK(cli::fingerprint_file_of(o).empty());
  ::setenv("CCPACK_FINGERPRINT_FILE", "/env/fp.json", 1);
  CHECK(cli::fingerprint_file_of(o) == "/env/fp.json");
  o.fingerprint_file = "/flag/fp.json";
  CHECK(cli::fingerprint_file_of(o) == "/flag/fp.json");
  ::unsetenv("CCPACK_FINGERPRINT_FILE");
}

TEST_CASE("target_machine from a fingerprint file: its fields, and the file named as the source") {
  test::ScratchDir dir;
  cli::MachineOptions o;
  o.fingerprint_file = (dir / "fp.json").string();
  test::write_file(dir / "fp.json", R"({"ok": true, "schema": 1, "fields": {"gpu.arch": {"value": "sm_90", "source": "nvml"}}})");
  cli::Machine m = cli::target_machine(o, "python3", {});
  CHECK(m.source == "file '" + o.fingerprint_file + "'");
  REQUIRE(m.fingerprint.get("gpu.arch") != nullptr);
  CHECK(m.fingerprint.get("gpu.arch")->value == "sm_90");
}

TEST_CASE("machine_json: the source and each --select with what it replaced") {
  cli::Machine m;
  m.source = "probe";
  m.selected = {{"gpu.arch", "sm_90", std::nullopt, "not probed"}, {"triton.version", "3.6.0", "3.5.1", "python:dist-info"}};
  CHECK(cli::machine_json(m).dump() ==
        R"({"source":"probe","select":[{"field":"gpu.arch","value":"sm_90","before":null,"before_source":"not probed"},)"
        R"({"field":"triton.version","value":"3.6.0","before":"3.5.1","before_source":"python:dist-info"}]})");
}
