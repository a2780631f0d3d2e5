// converge/merge_plan.cpp: merge's rule decided apart from any file: the base wins, a delta's new entries are
// added, the same bytes twice are skipped naming the first, other bytes are a conflict whose lower identity wins in
// either order, and nothing is placed below a file or symlink.
#include <catch2/catch.hpp>

#include "converge/merge_plan.hpp"
#include "unit/support.hpp"

using namespace ccpack;
using namespace ccpack::converge;
using manifest::Entry;
using manifest::EntryType;

namespace {

MergePlan base_plan() {
  std::vector<manifest::Component> comps{{"inductor", manifest::ComponentKind::inductor, "/b/i", 0, 0}};
  manifest::EntryList base{test::dir_entry("inductor"), test::dir_entry("inductor/fx"), test::file_entry("inductor/fx/a", "A"),
                           test::link_entry("inductor/ln", "fx")};
  return MergePlan(comps, base);
}

using Action = Decision::Action;

}  // namespace

TEST_CASE("merge plan: the base wins, new entries are added, the same bytes are skipped once") {
  MergePlan plan = base_plan();
  plan.begin_delta(0, "aaaaaaaaaaaa");
  CHECK(plan.offer(test::dir_entry("inductor")).action == Action::none);
  CHECK(plan.offer(test::dir_entry("inductor/new")).action == Action::make_folder);
  CHECK(plan.offer(test::file_entry("inductor/new/x", "X")).action == Action::add);
  Decision base_file = plan.offer(test::file_entry("inductor/fx/a", "changed"));
  CHECK(base_file.action == Action::skip);
  CHECK(base_file.reason == "in the base (the base's entry is kept)");
  CHECK(plan.offer(test::dir_entry("other")).reason == "component 'other' is not in the base");
  plan.begin_delta(1, "bbbbbbbbbbbb");
  CHECK(plan.offer(test::dir_entry("inductor/new")).action == Action::none);
  Decision same = plan.offer(test::file_entry("inductor/new/x", "X"));
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
    CHECK(plan.offer(test::file_entry("inductor/k", low_first ? low : high)).action == Action::add);
    plan.begin_delta(1, "second000000");
    Decision d = plan.offer(test::file_entry("inductor/k", low_first ? high : low));
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
  Decision through_link = plan.offer(test::dir_entry("inductor/ln"));
  CHECK(through_link.action == Action::skip);
  CHECK(through_link.reason == "a file or symlink of the base has its path");
  CHECK(plan.offer(test::dir_entry("inductor/ln/deeper")).reason == "a folder above it is not a folder in the merged cache");
  CHECK(plan.offer(test::file_entry("inductor/ln/deeper/x", "X")).reason ==
        "a folder above it is not a folder in the merged cache");
  CHECK(plan.offer(test::file_entry("inductor/fx", "X")).reason == "a folder of the base has its path");
  plan.begin_delta(1, "bbbbbbbbbbbb");  // also without the folder offered first: the tree decides
  CHECK(plan.offer(test::file_entry("inductor/ln/x", "X")).reason == "a folder above it is not a folder in the merged cache");
  CHECK(plan.offer(test::file_entry("inductor/nowhere/x", "X")).reason ==
        "a folder above it is not a folder in the merged cache");
}
