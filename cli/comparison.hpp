// A fingerprint comparison as the commands print it: a row's difference in words and the comparison as JSON. The
// meaning of a difference lives in manifest/policy.cpp; this file only presents it.
#pragma once

#include <string>

#include "cli/cli.hpp"
#include "manifest/policy.hpp"

namespace ccpack::cli {

// A set-valued row's difference for --json: {"added": [...], "removed": [...], "changed": [{name, archive,
// local}]} (empty arrays when the sets are equal or a side is absent).
[[nodiscard]] ojson set_diff_json(const manifest::ComparisonRow& row);
// A differing row in words, for warnings: "archive 'a', here 'b'", or for a set-valued field its differences
// ("X==1 only in the archive; Y: 1 -> 2"), at most `max_phrases` and a count of the rest.
[[nodiscard]] std::string difference_text(const manifest::ComparisonRow& row, std::size_t max_phrases = 8);

// The comparison for --json: {"verdict", "components": [{name, kind, verdict}], "fields": [{...}]}; set-valued
// fields (and cache.targets) also carry set_diff_json's arrays.
[[nodiscard]] ojson comparison_json(const manifest::Comparison& c);

}  // namespace ccpack::cli
