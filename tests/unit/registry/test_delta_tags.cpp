// registry/delta_tags.cpp: a delta's tag is its base's tag, ".delta-" and 12 hex digits of its manifest digest; only
// tags of exactly that form for that base are taken, sorted; a base tag too long for it is a usage error.
#include <catch2/catch.hpp>

#include "registry/delta_tags.hpp"
#include "util/error.hpp"

using namespace ccpack;
using namespace ccpack::registry;

TEST_CASE("delta tags: named after the base and the delta's digest, recognised exactly") {
  std::string hex = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  CHECK(delta_tag("v3", hex) == "v3.delta-0123456789ab");
  CHECK(is_delta_tag_of("v3.delta-0123456789ab", "v3"));
  CHECK_FALSE(is_delta_tag_of("v3.delta-0123456789ab", "v"));
  CHECK_FALSE(is_delta_tag_of("v3.delta-0123456789aB", "v3"));
  CHECK_FALSE(is_delta_tag_of("v3.delta-0123456789a", "v3"));
  CHECK_FALSE(is_delta_tag_of("v3.delta-0123456789abc", "v3"));
  CHECK_FALSE(is_delta_tag_of("v3-delta-0123456789ab", "v3"));
  CHECK(delta_tags_of({"v3", "v3.delta-ffffffffffff", "v3-image", "v3.delta-000000000000", "v4.delta-000000000000"}, "v3") ==
        std::vector<std::string>{"v3.delta-000000000000", "v3.delta-ffffffffffff"});
  CHECK_NOTHROW(delta_tag(std::string(109, 't'), hex));
  CHECK_THROWS_AS(delta_tag(std::string(110, 't'), hex), UsageError);
}
