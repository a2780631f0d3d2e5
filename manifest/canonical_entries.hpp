// The fast path of Manifest::parse: the entries array read in the one form create writes (append_entry_json in
// manifest/manifest.cpp): compact, keys in that order, strings of printable ASCII without escapes.
//
// Why: the general parse (manifest/json_guard.hpp over nlohmann's parser, one document tree per entry) is a large
// part of a big restore, single-threaded before anything is written (docs/PERFORMANCE.md).
//
// How it stays exact: this reader accepts only that form and gives up at the first byte of any other (an escape,
// a byte outside 0x20-0x7E, another key order, whitespace, a leading zero, a number past 64 bits, an unknown
// type, a mode that is not four octal digits, a digest that is not 64 lower-case hex digits, more entries than
// the limit). What it accepts, the general parser reads to the same entries; whatever it gives up on, the
// caller parses the whole manifest the general way, which gives the verdict and the message. Every rule about
// what an entry may hold (safe paths, links, sizes) is checked afterwards on the entry list, whichever reader
// filled it (Manifest::validate). tests/unit/manifest/test_manifest.cpp and tests/fuzz/fuzz_manifest.cpp compare the two
// readers.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "manifest/entry_list.hpp"

namespace ccpack::manifest {

// `array` is the entries array, from its '[' to its ']'. Nullopt: not in create's form (see above).
[[nodiscard]] std::optional<EntryList> read_canonical_entries(std::string_view array, std::uint64_t max_entries);

}  // namespace ccpack::manifest
