// Choosing among a tag's candidates (registry/selection.hpp): the verdicts of manifest::compare, ties broken by
// matching fields, and candidates that differ only in fields absent here left undecided, naming those fields.
#include <catch2/catch.hpp>

#include "registry/selection.hpp"

using namespace ccpack;
namespace oci = ccpack::registry::oci;

namespace {

oci::Selection candidate(const std::string& arch, const std::string& torch = "2.7.1+cu126") {
  oci::Selection s;
  for (std::string_view f : oci::kSelectionFields) s[std::string(f)] = std::string(oci::kAbsent);
  s["gpu.vendor"] = "nvidia";
  s["gpu.arch"] = arch;
  s["torch.version"] = torch;
  s["cpu.arch"] = "x86_64";
  return s;
}

manifest::Fingerprint machine(const std::optional<std::string>& arch, const std::string& torch = "2.7.1+cu126") {
  manifest::Fingerprint fp = oci::fingerprint_of_selection(candidate(arch.value_or("absent"), torch), "probe");
  if (!arch) {
    fp.absent("gpu.vendor", "nvml: not loadable");
    fp.absent("gpu.arch", "nvml: not loadable");
  }
  return fp;
}

}  // namespace

TEST_CASE("selection: the candidate whose fields match wins") {
  oci::Choice c = oci::choose({candidate("sm_100"), candidate("sm_90")}, machine("sm_90"));
  REQUIRE(c.pick == 1u);
  CHECK(c.verdict == manifest::Verdict::match);
}

TEST_CASE("selection: without a GPU candidates differing only in gpu.arch are undecided naming it") {
  oci::Choice c = oci::choose({candidate("sm_90"), candidate("sm_100")}, machine(std::nullopt));
  CHECK_FALSE(c.pick);
  CHECK(c.verdict == manifest::Verdict::warn);
  CHECK(c.tied == std::vector<std::size_t>{0, 1});
  CHECK(c.differ == std::vector<std::string>{"gpu.arch"});
  CHECK(c.missing == std::vector<std::string>{"gpu.arch"});
}

TEST_CASE("selection: without a GPU a single archive built on a GPU machine is chosen with a warning") {
  oci::Choice c = oci::choose({candidate("sm_90")}, machine(std::nullopt));
  REQUIRE(c.pick == 0u);
  CHECK(c.verdict == manifest::Verdict::warn);
}

TEST_CASE("selection: a stale candidate loses to one that only warns and all stale is reported as stale") {
  oci::Choice c = oci::choose({candidate("sm_90", "2.8.0"), candidate("sm_90")}, machine(std::nullopt));
  REQUIRE(c.pick == 1u);
  c = oci::choose({candidate("sm_90", "2.8.0")}, machine("sm_90"));
  CHECK(c.verdict == manifest::Verdict::stale);
}

TEST_CASE("selection: among equal verdicts more matching known fields wins") {
  oci::Selection vague = candidate("sm_90");
  vague["torch.version"] = std::string(oci::kAbsent);  // recorded nothing: cannot compare (warn)
  oci::Selection precise = candidate("sm_90");
  precise["gpu.vendor"] = std::string(oci::kAbsent);
  vague["gpu.vendor"] = std::string(oci::kAbsent);
  manifest::Fingerprint here = machine("sm_90");
  oci::Choice c = oci::choose({vague, precise}, here);
  REQUIRE(c.pick == 1u);
  CHECK(c.verdict == manifest::Verdict::warn);
}

TEST_CASE("selection: no candidate no pick") {
  oci::Choice c = oci::choose({}, machine("sm_90"));
  CHECK_FALSE(c.pick);
  CHECK(c.tied.empty());
}
