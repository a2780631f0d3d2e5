// util/child_map: the (folder, name) -> number index of the manifest's tree and the relocation's file set.
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "util/child_map.hpp"

using namespace ccpack;

TEST_CASE("ChildMap: a key is found with its value, a repeated key keeps the first value") {
  ChildMap m;
  CHECK(m.find(0, "a") == ChildMap::kNone);  // empty: nothing, no slots yet
  CHECK(m.emplace(0, "a", 7) == ChildMap::kNone);
  CHECK(m.emplace(1, "a", 8) == ChildMap::kNone);  // the same name in another folder is another key
  CHECK(m.emplace(UINT32_MAX, "a", 9) == ChildMap::kNone);
  CHECK(m.emplace(0, "a", 10) == 7);  // already there: its value, unchanged
  CHECK(m.find(0, "a") == 7);
  CHECK(m.find(1, "a") == 8);
  CHECK(m.find(UINT32_MAX, "a") == 9);
  CHECK(m.find(2, "a") == ChildMap::kNone);
  CHECK(m.find(0, "b") == ChildMap::kNone);
  CHECK(m.find(0, "") == ChildMap::kNone);
  CHECK(m.size() == 3);
}

TEST_CASE("ChildMap: what a std::map holds after growing through many keys, with and without reserve") {
  for (std::size_t reserved : {std::size_t{0}, std::size_t{50000}}) {
    ChildMap m(reserved);
    std::vector<std::string> names;
    for (int i = 0; i < 5000; ++i) names.push_back("n" + std::to_string(i * 7919 % 1000));
    std::map<std::pair<std::uint32_t, std::string>, std::uint32_t> want;
    for (std::uint32_t i = 0; i < names.size(); ++i) {
      std::uint32_t folder = i % 13;
      auto [it, added] = want.emplace(std::make_pair(folder, names[i]), i);
      CHECK(m.emplace(folder, names[i], i) == (added ? ChildMap::kNone : it->second));
    }
    CHECK(m.size() == want.size());
    for (const auto& [key, value] : want) CHECK(m.find(key.first, key.second) == value);
    CHECK(m.find(13, "n1") == ChildMap::kNone);
    CHECK(m.find(0, "n1000") == ChildMap::kNone);
  }
}
