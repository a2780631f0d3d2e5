// converge/merge_plan.cpp: merge's rule decided apart from any file: the base wins, a delta's new entries are
// added, the same bytes twice are skipped naming the first, other bytes are a conflict whose lower identity wins in
// either order, and nothing is placed below a file or symlink.
#include <catch2/catch.hpp>

#include "converge/merge_plan.hpp"

using namespace ccpack;
using namespace ccpack::converge;
using manifest::Entry;
using manifest::EntryType;

namespace {

Entry dir(const std::string& p) { return {p, EntryType::dir, 0755, 0, {}, {}, 0}; }
Entry file(const std::string& p, const std::string& bytes) { return {p, EntryType::file, 0644, bytes.size(), Sha256::of(bytes), {}, 0}; }
Entry link(const std::string& p, const std::string& target) { return {p, EntryType::symlink, 0777, 0, {}, target, 0}; }

MergePlan base_plan() {
  std::vector<manifest::Component> comps{{"inductor", manifest::ComponentKind::inductor, "/b/i", 0, 0}};
  manifest::EntryList base{dir("inductor"), dir("inductor/fx"), file("inductor/fx/a", "A"), link("inductor/ln", "fx")};
  return MergePlan(comps, base);
}

using Action = Decision::Action;

}  // namespace

TEST_CASE("merge plan: the base wins, new entries are added, the same bytes are skipped once") {
  MergePlan plan = base_plan();
  plan.begin_delta(0, "aaaaaaaaaaaa");
  CHECK(plan.offer(dir("inductor")).action == Action::none);
  CHECK(plan.offer(dir("inductor/new")).action == Action::make_folder);
  CHECK(plan.offer(file("inductor/new/x", "X")).action == Action::add);
  Decision base_file = plan.offer(file("inductor/fx/a", "changed"));
  CHECK(base_file.action == Action::skip);
  CHECK(base_file.reason == "in the base (the base's entry is kept)");
  CHECK(plan.offer(dir("other")).reason == "component 'other' is not in the base");
  plan.begin_delta(1, "bbbbbbbbbbbb");
  CHECK(plan.offer(dir("inductor/new")).action == Action::none);
  Decision same = plan.offer(file("inductor/new/x", "X"));
  CHECK(same.action == Action::skip);
  CHECK(same.reason == "the same bytes as delta aaaaaaaaaaaa");
  CHECK_FALSE(same.conflict.has_value());
}

TEST_CASE("merge plan: a conflict keeps the lower SHA-256 whichever delta comes first") {
  std::string low = "p";
  std::string high = "q";
  if (Sha256::of(high) < Sha256::of(low)) std::swap(low, high);
  for (bool low_first : {true, false}) {
    MergePlan plan = base_plan();
    plan.begin_delta(0, "first0000000");
    CHECK(plan.offer(file("inductor/k", low_first ? low : high)).action == Action::add);
    plan.begin_delta(1, "second000000");
    Decision d = plan.offer(file("inductor/k", low_first ? high : low));
    REQUIRE(d.conflict.has_value());
    CHECK(d.conflict->path == "inductor/k");
    CHECK(d.conflict->kept_sha256 == to_hex(Sha256::of(low)));
    CHECK(d.conflict->dropped_sha256 == to_hex(Sha256::of(high)));
    CHECK(d.conflict->kept == (low_first ? 0U : 1U));
    CHECK(d.conflict->dropped == (low_first ? 1U : 0U));
    CHECK(d.action == (low_first ? Action::skip : Action::replace));
  }
}

TEST_CASE("merge plan: nothing goes below a file or symlink of the base") {
  MergePlan plan = base_plan();
  plan.begin_delta(0, "aaaaaaaaaaaa");
  Decision through_link = plan.offer(dir("inductor/ln"));
  CHECK(through_link.action == Action::skip);
  CHECK(through_link.reason == "a file or symlink of the base has its path");
  CHECK(plan.offer(dir("inductor/ln/deeper")).reason == "a folder above it is not a folder in the merged cache");
  CHECK(plan.offer(file("inductor/ln/deeper/x", "X")).reason == "a folder above it is not a folder in the merged cache");
  CHECK(plan.offer(file("inductor/fx", "X")).reason == "a folder of the base has its path");
  plan.begin_delta(1, "bbbbbbbbbbbb");  // also without the folder offered first: the tree decides
  CHECK(plan.offer(file("inductor/ln/x", "X")).reason == "a folder above it is not a folder in the merged cache");
  CHECK(plan.offer(file("inductor/nowhere/x", "X")).reason == "a folder above it is not a folder in the merged cache");
}
