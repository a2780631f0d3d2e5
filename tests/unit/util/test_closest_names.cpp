// util/closest_names: the edit distance that counts a typo's edits, and which names are close enough to offer.
#include <catch2/catch.hpp>

#include "util/closest_names.hpp"

using namespace ccpack;

TEST_CASE("edit_distance counts inserts, deletes, substitutions and swapped neighbours") {
  CHECK(edit_distance("creat", "create") == 1);
  CHECK(edit_distance("craete", "create") == 1);
  CHECK(edit_distance("restroe", "restore") == 1);
  CHECK(edit_distance("", "sign") == 4);
  CHECK(edit_distance("sign", "sign") == 0);
  CHECK(edit_distance("kitten", "sitting") == 3);
}

TEST_CASE("closest_names: the nearest within 2 edits and under the typed length, ties in the order given") {
  const std::vector<std::string> names{"push", "pull", "purge", "gpu.arch", "gpu.name"};
  CHECK(closest_names("pul", names) == std::vector<std::string>{"pull"});
  CHECK(closest_names("pulh", names) == std::vector<std::string>{"push", "pull"});
  CHECK(closest_names("gpu.acrh", names) == std::vector<std::string>{"gpu.arch"});
  CHECK(closest_names("gpu.nmae", names) == std::vector<std::string>{"gpu.name"});
  CHECK(closest_names("pruge", names) == std::vector<std::string>{"purge"});
  CHECK(closest_names("deploy", names).empty());
  CHECK(closest_names("x", {"y"}).empty());  // one edit, but not less than the typed length
  CHECK(closest_names("ab", {"xb"}) == std::vector<std::string>{"xb"});
  CHECK(closest_names("", names).empty());
}
