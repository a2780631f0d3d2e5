// The common form of a Triton group file (`__grp__*.json`), read and written without a JSON tree.
//
// Why: a restore into other folders rewrites the child paths of every group file (unpack/relocate.hpp). The
// synthetic cache of 100,000 files holds 11,375 of them (15 MB of JSON), and parsing each into an nlohmann tree
// and dumping it back was a fifth of that restore's user time on one CPU.
//
// How: Triton writes them with Python's json.dumps as {"child_paths": {"NAME": "PATH", ...}}, names and paths in
// plain ASCII. read_simple_group reads exactly that form and nothing else: one object whose only key is
// "child_paths", holding an object of string members; every key and value of printable ASCII (0x20-0x7E) without
// '"' or '\' (so no escape to decode); no key twice; JSON whitespace between tokens. Anything else is nullopt, and
// the caller takes the full parser (manifest/json_guard.hpp), so no document is judged two ways: what this reads,
// the full parser reads as the same members in the same order, and write_group writes the bytes nlohmann's dump()
// writes for that document (tests/fuzz/fuzz_group_file.cpp checks both).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ccpack::unpack {

struct GroupMember {
  std::string_view key;    // points into the text read
  std::string_view value;  // a path as written, or the replacement the caller set
  bool replaced = false;   // value is any UTF-8 string, escaped on writing (else plain ASCII, written as it is)
};

// The members of a group file of the common form, in order; nullopt for any other text.
[[nodiscard]] std::optional<std::vector<GroupMember>> read_simple_group(std::string_view text);

// The compact document {"child_paths":{...}} of these members, as nlohmann's dump() writes it.
[[nodiscard]] std::string write_group(const std::vector<GroupMember>& members);

}  // namespace ccpack::unpack
