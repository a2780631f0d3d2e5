// Ranking a tag's candidates with the comparison of a local restore; see selection.hpp.
#include "registry/selection.hpp"

#include <algorithm>

namespace ccpack::registry::oci {

using manifest::Comparison;
using manifest::ComparisonRow;
using manifest::ComponentKind;
using manifest::ComponentRef;
using manifest::FieldValue;
using manifest::Fingerprint;
using manifest::Verdict;

namespace {

// The kinds a candidate is judged for: its components are not known before its header is fetched, and every
// archive carries Inductor's or Triton's entries (extras follow the same rules as Inductor's for these fields).
const std::vector<ComponentRef>& judged_components() {
  static const std::vector<ComponentRef> kinds{{"inductor", ComponentKind::inductor}, {"triton", ComponentKind::triton}};
  return kinds;
}

struct Rank {
  Verdict verdict = Verdict::match;
  std::size_t matching = 0;
};

Rank rank(const Selection& candidate, const Fingerprint& machine) {
  Comparison c = compare(fingerprint_of_selection(candidate, "annotation"), machine, judged_components());
  Rank r{c.worst(), 0};
  for (const ComparisonRow& row : c.rows) r.matching += row.archive && row.local && *row.archive == *row.local;
  return r;
}

std::string value_of(const Selection& s, std::string_view field) {
  auto it = s.find(std::string(field));
  return it == s.end() ? std::string(kAbsent) : it->second;
}

}  // namespace

Fingerprint fingerprint_of_selection(const Selection& selection, std::string_view source) {
  Fingerprint fp;
  for (std::string_view field : kSelectionFields) {
    std::string v = value_of(selection, field);
    if (v == kAbsent) {
      fp.absent(field, std::string(source));
    } else {
      fp.set(field, v, std::string(source));
    }
  }
  return fp;
}

Fingerprint selection_fields_of(const Fingerprint& machine) {
  Fingerprint fp;
  for (std::string_view field : kSelectionFields) {
    if (const FieldValue* v = machine.get(field)) fp.fields.insert_or_assign(std::string(field), *v);
  }
  return fp;
}

Choice choose(const std::vector<Selection>& candidates, const Fingerprint& machine) {
  Choice out;
  if (candidates.empty()) return out;
  Fingerprint here = selection_fields_of(machine);
  std::vector<Rank> ranks;
  ranks.reserve(candidates.size());
  for (const Selection& s : candidates) ranks.push_back(rank(s, here));
  auto better = [](const Rank& a, const Rank& b) {
    return a.verdict != b.verdict ? a.verdict < b.verdict : a.matching > b.matching;
  };
  Rank best = *std::min_element(ranks.begin(), ranks.end(), better);
  out.verdict = best.verdict;
  out.matching = best.matching;
  std::vector<std::size_t> tied;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (!better(best, ranks[i])) tied.push_back(i);  // as good as the best
  }
  for (std::string_view field : kSelectionFields) {
    std::string first = value_of(candidates[tied[0]], field);
    bool differs = std::any_of(tied.begin(), tied.end(), [&](std::size_t i) { return value_of(candidates[i], field) != first; });
    if (!differs) continue;
    out.differ.emplace_back(field);
    const FieldValue* v = here.get(field);
    if (v == nullptr || !v->value) out.missing.emplace_back(field);
  }
  // Tied candidates that record the same fields are the same environment: the first one stands for them.
  if (out.differ.empty()) {
    out.pick = tied[0];
  } else {
    out.tied = std::move(tied);
  }
  return out;
}

}  // namespace ccpack::registry::oci
