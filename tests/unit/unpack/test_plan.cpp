// The restore plan, driven without a disk: every combination of folder given, marker found and policy verdict.
#include <catch2/catch.hpp>

#include "unpack/plan.hpp"

using namespace ccpack;
using unpack::Action;
using unpack::ComponentFacts;
using unpack::Fit;

namespace {

manifest::Manifest two_components() {
  manifest::Manifest m;
  m.components.push_back({"inductor", manifest::ComponentKind::inductor, "/b/ind", 1, 1});
  m.components.push_back({"triton", manifest::ComponentKind::triton, "/b/tri", 1, 1});
  return m;
}

const std::string kDigest(64, 'a');

}  // namespace

TEST_CASE("plan: restore, already, skip") {
  manifest::Manifest m = two_components();
  std::vector<ComponentFacts> facts(2);
  facts[0].target = "/p/ind";
  facts[0].marker_digest = kDigest;
  facts[1].target = std::nullopt;
  unpack::RestorePlan plan = unpack::plan_restore(m, kDigest, facts);
  CHECK(plan.components[0].action == Action::already);
  CHECK(plan.components[1].action == Action::skip);
  CHECK(plan.components[1].reason == "no folder given: pass --add triton=DIR to restore it");
  CHECK_FALSE(plan.writes());

  facts[0].marker_digest = std::string(64, 'b');  // another archive's marker
  facts[1].target = "/p/tri";
  plan = unpack::plan_restore(m, kDigest, facts);
  CHECK(plan.components[0].action == Action::restore);
  CHECK(plan.components[1].action == Action::restore);
  CHECK(plan.writes());
}

TEST_CASE("plan: a refused component means nothing is written, even components that fit") {
  manifest::Manifest m = two_components();
  std::vector<ComponentFacts> facts(2);
  facts[0].target = "/p/ind";
  facts[0].fit = Fit::stale_refuse;
  facts[0].fit_reason = "torch.version differs";
  facts[1].target = "/p/tri";
  unpack::RestorePlan plan = unpack::plan_restore(m, kDigest, facts);
  CHECK(plan.refused());
  CHECK_FALSE(plan.writes());
  CHECK(plan.components[0].action == Action::refuse);
  CHECK(plan.components[0].reason == "torch.version differs");
  CHECK(plan.components[1].action == Action::skip);
}

TEST_CASE("plan: a purged component is not restored, the others are, and already-restored folders are re-judged") {
  manifest::Manifest m = two_components();
  std::vector<ComponentFacts> facts(2);
  facts[0].target = "/p/ind";
  facts[0].marker_digest = kDigest;  // carries this archive's marker, but the pod changed since
  facts[0].fit = Fit::stale_purge;
  facts[1].target = "/p/tri";
  unpack::RestorePlan plan = unpack::plan_restore(m, kDigest, facts);
  CHECK(plan.components[0].action == Action::purge);
  CHECK(plan.components[1].action == Action::restore);
}

TEST_CASE("plan: one fact per component is required") { CHECK_THROWS(unpack::plan_restore(two_components(), kDigest, {})); }
