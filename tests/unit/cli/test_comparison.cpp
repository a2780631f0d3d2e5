// cli/comparison.cpp: a row's difference in words and the --json shape of a comparison (exact bytes).
#include <catch2/catch.hpp>
#include <string>

#include "cli/comparison.hpp"
#include "unit/support.hpp"

using namespace ccpack;
using manifest::Verdict;

namespace {

// Two components and three rows: a stale single value, a set-valued difference, and an ignored field the
// archive does not record.
manifest::Comparison comparison_sample() {
  manifest::Comparison c;
  c.components = {{"inductor", manifest::ComponentKind::inductor}, {"triton", manifest::ComponentKind::triton}};
  manifest::ComparisonRow version;
  version.field = "triton.version";
  version.archive = "3.5.0";
  version.local = "3.6.0";
  version.verdicts = {Verdict::stale, Verdict::stale};
  version.why = "Triton's cache key starts with its version";
  manifest::ComparisonRow wheels;
  wheels.field = "wheels.cuda";
  wheels.archive = "nvidia-cublas==1";
  wheels.local = "nvidia-cublas==2, nvidia-nccl==3";
  wheels.verdicts = {Verdict::warn, Verdict::warn};
  manifest::SetDiff d;
  d.added = {"nvidia-nccl==3"};
  d.changed = {{"nvidia-cublas", "1", "2"}};
  wheels.diff = d;
  manifest::ComparisonRow arch;
  arch.field = "gpu.arch";
  arch.archive_note = "not recorded";
  arch.local = "sm_90";
  arch.verdicts = {Verdict::match, Verdict::match};
  arch.ignored = true;
  c.rows = {version, wheels, arch};
  c.component_verdicts = {Verdict::stale, Verdict::stale};
  return c;
}

}  // namespace

TEST_CASE("difference_text: single values quoted or their note, set differences phrase by phrase, bounded", "[comparison]") {
  manifest::Comparison c = comparison_sample();
  CHECK(cli::difference_text(c.rows[0]) == "archive '3.5.0', here '3.6.0'");
  CHECK(cli::difference_text(c.rows[1]) == "nvidia-cublas: 1 -> 2; nvidia-nccl==3 only here");
  CHECK(cli::difference_text(c.rows[1], 1) == "nvidia-cublas: 1 -> 2; and 1 more");
  CHECK(cli::difference_text(c.rows[2]) == "archive not recorded, here 'sm_90'");
  manifest::ComparisonRow hostile;
  hostile.field = "gpu.name";
  hostile.archive = "H200\n\x1b[31m";
  hostile.local_note = "absent: nvml: \x01";
  CHECK(cli::difference_text(hostile) == "archive 'H200\\n\\x1b[31m', here absent: nvml: \\x01");
  manifest::ComparisonRow equal_sets = c.rows[1];
  equal_sets.diff = manifest::SetDiff{};  // a set row whose sets are equal reads as the values
  CHECK(cli::difference_text(equal_sets) == "archive 'nvidia-cublas==1', here 'nvidia-cublas==2, nvidia-nccl==3'");
}

TEST_CASE("comparison_json: the exact --json shape, set arrays only on set-valued rows", "[comparison]") {
  manifest::Comparison c = comparison_sample();
  CHECK(cli::set_diff_json(c.rows[0]).dump() == R"({"added":[],"removed":[],"changed":[]})");
  CHECK(cli::set_diff_json(c.rows[1]).dump() ==
        R"({"added":["nvidia-nccl==3"],"removed":[],"changed":[{"name":"nvidia-cublas","archive":"1","local":"2"}]})");
  CHECK(
      cli::comparison_json(c).dump() ==
      R"J({"verdict":"stale","archive_recorded":true,"summary":"inductor stale (triton.version); triton stale (triton.version)",)J"
      R"("components":[{"name":"inductor","kind":"inductor","verdict":"stale"},{"name":"triton","kind":"triton","verdict":"stale"}],)"
      R"("fields":[{"field":"triton.version","archive":"3.5.0","local":"3.6.0","verdicts":{"inductor":"stale","triton":"stale"},)"
      R"("ignored":false,"why":"Triton's cache key starts with its version"},)"
      R"({"field":"wheels.cuda","archive":"nvidia-cublas==1","local":"nvidia-cublas==2, nvidia-nccl==3",)"
      R"("added":["nvidia-nccl==3"],"removed":[],"changed":[{"name":"nvidia-cublas","archive":"1","local":"2"}],)"
      R"("verdicts":{"inductor":"warn","triton":"warn"},"ignored":false,"why":""},)"
      R"({"field":"gpu.arch","archive":null,"local":"sm_90","archive_note":"not recorded",)"
      R"("verdicts":{"inductor":"match","triton":"match"},"ignored":true,"why":""}]})");
}

TEST_CASE("comparison_json of a real comparison: an unrecorded archive warns on every field", "[comparison]") {
  manifest::Fingerprint local;
  local.set(manifest::field::gpu_arch, "sm_90", "nvml");
  manifest::Comparison c = manifest::compare(manifest::Fingerprint{}, local, {{"triton", manifest::ComponentKind::triton}});
  cli::ojson j = cli::comparison_json(c);
  CHECK(j["verdict"] == "warn");
  CHECK(j["archive_recorded"] == false);
  CHECK(j["components"].dump() == R"([{"name":"triton","kind":"triton","verdict":"warn"}])");
  REQUIRE(j["fields"].size() == manifest::field_rules().size());
  for (const auto& f : j["fields"]) CHECK(f["archive"].is_null());
}
