// A comparison in words and as JSON (comparison.hpp).
#include "cli/comparison.hpp"

#include "util/escape.hpp"

namespace ccpack::cli {

ojson set_diff_json(const manifest::ComparisonRow& row) {
  manifest::SetDiff none;
  const manifest::SetDiff& d = row.diff ? *row.diff : none;
  ojson changed = ojson::array();
  for (const manifest::ChangedEntry& e : d.changed)
    changed.push_back({{"name", e.name}, {"archive", e.archive}, {"local", e.local}});
  return {{"added", d.added}, {"removed", d.removed}, {"changed", std::move(changed)}};
}

std::string difference_text(const manifest::ComparisonRow& row, std::size_t max_phrases) {
  auto shown = [](const std::optional<std::string>& v, const std::string& note) {
    return v ? "'" + escaped(*v, 200) + "'" : escaped(note, 200);
  };
  if (!row.diff || row.diff->empty())
    return "archive " + shown(row.archive, row.archive_note) + ", here " + shown(row.local, row.local_note);
  std::vector<std::string> phrases = row.diff->phrases();
  std::string out;
  for (std::size_t i = 0; i < phrases.size() && i < max_phrases; ++i) out += (out.empty() ? "" : "; ") + escaped(phrases[i]);
  if (phrases.size() > max_phrases) out += "; and " + std::to_string(phrases.size() - max_phrases) + " more";
  return out;
}

ojson comparison_json(const manifest::Comparison& c) {
  auto value = [](const std::optional<std::string>& v) { return v ? ojson(*v) : ojson(nullptr); };
  ojson comps = ojson::array();
  for (std::size_t i = 0; i < c.components.size(); ++i) {
    comps.push_back({{"name", c.components[i].name},
                     {"kind", manifest::to_string(c.components[i].kind)},
                     {"verdict", manifest::to_string(c.component_verdicts[i])}});
  }
  ojson fields = ojson::array();
  for (const manifest::ComparisonRow& row : c.rows) {
    ojson verdicts = ojson::object();
    for (std::size_t i = 0; i < c.components.size(); ++i) verdicts[c.components[i].name] = manifest::to_string(row.verdicts[i]);
    ojson f = {{"field", row.field}, {"archive", value(row.archive)}, {"local", value(row.local)}};
    if (!row.archive_note.empty()) f["archive_note"] = row.archive_note;
    if (!row.local_note.empty()) f["local_note"] = row.local_note;
    if (manifest::list_syntax(row.field) || row.field == manifest::kTargetsField) f.update(set_diff_json(row));
    f["verdicts"] = std::move(verdicts);
    f["ignored"] = row.ignored;
    f["why"] = row.why;
    fields.push_back(std::move(f));
  }
  return {{"verdict", manifest::to_string(c.worst())},
          {"archive_recorded", c.archive_recorded},
          {"summary", c.summary()},
          {"components", comps},
          {"fields", fields}};
}

}  // namespace ccpack::cli
