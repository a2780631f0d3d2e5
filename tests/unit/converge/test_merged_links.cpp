// converge/merged_links.cpp: links judged over the merged set of entries. Each delta below passes the link rule
// alone; merged with the base and the others, a link that walks through another delta's link (or the base's) out
// of its component, or two links through each other, is found, naming the delta after which it fails and the link.
#include <catch2/catch.hpp>

#include "converge/merged_links.hpp"
#include "util/sha256.hpp"

using namespace ccpack;
using namespace ccpack::converge;
using manifest::Entry;
using manifest::EntryType;
using Verdict = manifest::EntryTree::LinkVerdict;

namespace {

Entry folder(const std::string& p) { return {p, EntryType::dir, 0755, 0, {}, {}, 0}; }
Entry leaf(const std::string& p) { return {p, EntryType::file, 0644, 1, Sha256::of(p), {}, 0}; }
Entry slink(const std::string& p, const std::string& target) { return {p, EntryType::symlink, 0777, 0, {}, target, 0}; }

const std::vector<manifest::Component> kComponents{{"triton", manifest::ComponentKind::triton, "/b/t", 0, 0}};

std::optional<MergedLinkFailure> merged(const manifest::EntryList& base, const std::vector<manifest::EntryList>& deltas) {
  std::vector<const manifest::EntryList*> lists;
  for (const manifest::EntryList& d : deltas) lists.push_back(&d);
  return first_merged_link_failure(kComponents, base, lists);
}

}  // namespace

TEST_CASE("merged links: a delta's link that escapes through another delta's link is found, in either order") {
  const manifest::EntryList base{folder("triton"), folder("triton/k"), leaf("triton/k/a")};
  const manifest::EntryList a{folder("triton"), folder("triton/d1"), folder("triton/d1/d2"), slink("triton/d1/d2/y", "../..")};
  const manifest::EntryList b{folder("triton"), folder("triton/d1"), folder("triton/d1/d2"),
                              slink("triton/d1/d2/x", "y/../../..")};
  CHECK_FALSE(merged(base, {a}));
  CHECK_FALSE(merged(base, {b}));
  auto ab = merged(base, {a, b});
  REQUIRE(ab);
  CHECK(ab->delta == 1);
  CHECK(ab->link == "triton/d1/d2/x");
  CHECK(ab->owner == 1);
  CHECK(ab->verdict == Verdict::escapes);
  auto ba = merged(base, {b, a});
  REQUIRE(ba);
  CHECK(ba->delta == 1);  // refused once a's link joins the set; the link that leaves is b's
  CHECK(ba->link == "triton/d1/d2/x");
  CHECK(ba->owner == 0);
}

TEST_CASE("merged links: two deltas' links through each other loop, a delta link escapes through a base link") {
  const manifest::EntryList base{folder("triton"), folder("triton/k"), slink("triton/k/up", "..")};
  const manifest::EntryList p{folder("triton"), slink("triton/p", "q/x")};
  const manifest::EntryList q{folder("triton"), slink("triton/q", "p/x")};
  CHECK_FALSE(merged(base, {p}));
  CHECK_FALSE(merged(base, {q}));
  auto loop = merged(base, {p, q});
  REQUIRE(loop);
  CHECK(loop->delta == 1);
  CHECK(loop->verdict == Verdict::loops);
  // triton/k/up -> .. is the component root; a delta's k/up/.. from it climbs above the root.
  const manifest::EntryList climb{folder("triton"), folder("triton/k"), slink("triton/k/out", "up/..")};
  auto through_base = merged(base, {climb});
  REQUIRE(through_base);
  CHECK(through_base->delta == 0);
  CHECK(through_base->link == "triton/k/out");
  CHECK(through_base->verdict == Verdict::escapes);
  // A base link that a delta's link makes escape is named as the base's.
  const manifest::EntryList base2{folder("triton"), slink("triton/p", "q/..")};
  const manifest::EntryList makes_q{folder("triton"), slink("triton/q", ".")};
  auto base_link = merged(base2, {makes_q});
  REQUIRE(base_link);
  CHECK(base_link->link == "triton/p");
  CHECK(base_link->owner == kLinkOfBase);
  // Links that stay inside, across deltas, pass.
  const manifest::EntryList inside{folder("triton"), folder("triton/d"), slink("triton/d/to_k", "../k")};
  const manifest::EntryList via{folder("triton"), slink("triton/via", "d/to_k/up")};
  CHECK_FALSE(merged(base, {inside, via}));
}
