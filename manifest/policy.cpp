// The field table and the comparison (see policy.hpp). The evidence behind each line is in docs/FINGERPRINT.md.
#include "manifest/policy.hpp"

#include <algorithm>
#include <charconv>

#include "manifest/tuning_advice.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"

namespace ccpack::manifest {
namespace {

using enum Rule;

// field, triton, inductor, extra, why
const std::vector<FieldRule> kRules = {
    {field::cpu_arch, refuse, refuse, refuse, "kernels, launchers and .so files are machine code for one CPU architecture"},
    {field::os, refuse, refuse, refuse, "compiled .so files are built for one operating system"},
    {field::glibc, refuse_if_older, refuse_if_older, refuse_if_older,
     ".so files built against a newer glibc fail to load on an older one"},
    {field::python_version, warn, warn, warn, "a patch release keeps the ABI (python.abi decides what loads)"},
    {field::python_abi, stale, stale, stale,
     "Triton's launcher .so and Inductor's compiled modules are built for one CPython ABI"},
    {field::python_site_packages, warn, warn, warn,
     "Triton hashes libdevice by content, not by path: a move alone does not miss"},
    {field::torch_version, none, stale, stale, "inductor entries embed the torch version in their key: none of them can hit"},
    {field::torch_cuda, none, stale, stale, "Inductor's keys and compiled .so files depend on torch's CUDA build"},
    {field::torch_hip, none, stale, stale, "Inductor's keys and compiled .so files depend on torch's HIP build"},
    {field::triton_version, stale, stale, stale,
     "Triton's cache key starts with its version and source hash; Inductor's includes it"},
    {field::ptxas_version, stale, stale, none, "Triton's cache key includes the ptxas version"},
    {field::ck4inductor_version, warn, stale, stale, "Inductor's CK kernels are generated from this package"},
    {field::wheels_cuda, warn, stale, stale,
     "compiled .so files link against the CUDA library wheels present at build time; Triton kernels do not"},
    {field::gpu_vendor, stale, stale, stale, "kernels are built for one vendor's GPUs"},
    {field::gpu_arch, stale, stale, stale, "Triton and Inductor keys embed the GPU target (sm_90, gfx942): nothing can hit"},
    {field::gpu_warp_size, stale, stale, stale, "kernels are compiled for one warp size"},
    {field::gpu_name, none, stale, stale, "Inductor's autotune keys embed device properties: autotuning runs again"},
    {field::gpu_sm_count, none, stale, stale, "Inductor's autotune keys embed device properties: autotuning runs again"},
    {field::gpu_count, warn, warn, warn, "kernels do not depend on the GPU count; ranks may compile other graphs"},
    {field::gpu_driver, refuse_if_older, refuse_if_older, refuse_if_older,
     "a driver older than the build machine's may not load its kernels; a newer one does"},
    {field::env_inductor, none, stale, none, "TORCHINDUCTOR_* settings enter Inductor's config hash: every entry misses"},
    {field::env_triton, stale, none, none, "cache-invalidating TRITON_* settings enter Triton's cache key"},
    {field::env_torch_cuda_arch_list, none, warn, stale, "torch extensions are built for the archs it lists"},
    {field::env_cuda_visible_devices, warn, warn, warn, "which GPUs a process sees; kernels do not depend on it"},
    {field::env_compile_threads, none, none, none, "compile threads change speed, not results: never a warning"},
    {field::world_size, warn, warn, warn, "ranks of another world size may compile other graphs (sharded shapes)"},
    {field::paths_inductor, none, warn, none,
     "relocated: its FX-graph and AOTAutograd entries name the build folder; restore rewrites them"},
    {field::paths_triton, warn, none, none, "relocated: __grp__*.json hold absolute paths; restore rewrites them"},
    {kTargetsField, stale, stale, stale, "the cache's Triton kernels (also bundled in Inductor's entries) target another GPU"},
};

Rule rule_for(const FieldRule* r, ComponentKind kind) {
  if (r == nullptr) return Rule::warn;  // a field this ccpack does not know: show it, never block on it
  switch (kind) {
    case ComponentKind::triton:
      return r->triton;
    case ComponentKind::inductor:
      return r->inductor;
    case ComponentKind::extra:
      return r->extra;
  }
  return r->extra;
}

Verdict applies(Rule rule, Verdict v) { return rule == Rule::none ? Verdict::match : v; }

Verdict of_difference(Rule rule, bool local_older) {
  switch (rule) {
    case Rule::none:
      return Verdict::match;
    case Rule::warn:
      return Verdict::warn;
    case Rule::stale:
      return Verdict::stale;
    case Rule::refuse:
      return Verdict::refuse;
    case Rule::refuse_if_older:
      return local_older ? Verdict::refuse : Verdict::warn;
  }
  return Verdict::refuse;
}

std::string why_of(const FieldRule* r) { return r ? std::string(r->why) : "a field this ccpack does not know"; }

bool contains(const std::vector<std::string>& list, std::string_view s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

// Whether two recorded values differ: set-valued fields as sets (the difference is kept in the row), others
// byte for byte.
bool differ(std::string_view name, const std::string& archive, const std::string& local, ComparisonRow& row) {
  if (archive == local) return false;
  std::optional<ListSyntax> syntax = list_syntax(name);
  if (!syntax) return true;
  row.diff = diff_entries(*syntax, archive, local);
  return !row.diff->empty();
}

// The row of one field.
ComparisonRow compare_field(std::string_view name, const Fingerprint& archive, const Fingerprint& local,
                            const std::vector<ComponentRef>& comps, bool ignored) {
  const FieldRule* r = find_rule(name);
  ComparisonRow row;
  row.field = std::string(name);
  row.ignored = ignored;
  const FieldValue* a = archive.get(name);
  const FieldValue* l = local.get(name);
  if (a) row.archive = a->value;
  if (l) row.local = l->value;
  row.archive_note = !archive.recorded() || !a ? "not recorded" : a->value ? "" : "absent (" + a->source + ")";
  row.local_note = !l ? "not probed" : l->value ? "" : "absent (" + l->source + ")";

  Verdict base = Verdict::match;
  bool local_older = false;
  if (!a || !l || !a->value || !l->value) {
    bool both_absent = (!a && !l) || (a && l && !a->value && !l->value);
    if (!both_absent) {
      base = Verdict::warn;
      row.why = !a ? "not recorded in the archive: cannot compare" : "absent on one side: cannot compare";
    }
  } else if (differ(name, *a->value, *l->value, row)) {
    base = Verdict::stale;  // refined per component by its rule below
    std::optional<int> order = compare_versions(*l->value, *a->value);
    local_older = order && *order < 0;
    row.why = why_of(r);
    if (r && (r->triton == Rule::refuse_if_older || r->inductor == Rule::refuse_if_older || r->extra == Rule::refuse_if_older)) {
      row.why = (local_older ? "older here than on the build machine: " : "newer here: ") + row.why;
    }
  }
  for (const ComponentRef& c : comps) {
    Rule rule = rule_for(r, c.kind);
    Verdict v = base == Verdict::stale ? of_difference(rule, local_older) : applies(rule, base);
    row.verdicts.push_back(ignored ? Verdict::match : v);
  }
  if (std::all_of(row.verdicts.begin(), row.verdicts.end(), [](Verdict v) { return v == Verdict::match; }) && !ignored)
    row.why.clear();
  return row;
}

std::string target_list(const std::vector<TritonTarget>& targets) {
  std::string s;
  for (const TritonTarget& t : targets) {
    s += (s.empty() ? "" : ", ") + arch_name(t) + " (" + std::to_string(t.kernels) + " kernels, triton " + t.triton_version + ")";
  }
  return s;
}

// cache.targets as a set: the archive's kernel archs (with their kernel counts) against this machine's GPU archs.
SetDiff targets_diff(const std::vector<TritonTarget>& targets, const std::string& local_archs) {
  std::vector<std::string> archs;
  archs.reserve(targets.size());
  for (const TritonTarget& t : targets) archs.push_back(arch_name(t));
  SetDiff d = diff_entries(ListSyntax::comma, archs, split_entries(ListSyntax::comma, local_archs));
  std::vector<std::string> removed;
  for (const TritonTarget& t : targets) {
    if (std::find(d.removed.begin(), d.removed.end(), arch_name(t)) != d.removed.end()) removed.push_back(target_list({t}));
  }
  d.removed = std::move(removed);
  return d;
}

// The archive's kernel targets against this machine's GPU arch.
ComparisonRow compare_targets(const Fingerprint& archive, const Fingerprint& local, const std::vector<ComponentRef>& comps,
                              bool ignored) {
  const FieldRule* r = find_rule(kTargetsField);
  ComparisonRow row;
  row.field = std::string(kTargetsField);
  row.ignored = ignored;
  const FieldValue* l = local.get(field::gpu_arch);
  if (l) row.local = l->value;
  row.local_note = l && !l->value ? "absent (" + l->source + ")" : "";
  Verdict base = Verdict::match;
  if (archive.triton_targets.empty()) {
    row.archive_note = archive.recorded() ? "no Triton kernels" : "not recorded";
  } else {
    row.archive = target_list(archive.triton_targets);
    if (!l || !l->value) {
      base = Verdict::warn;
      row.why = "no GPU arch here: cannot compare";
    } else {
      std::size_t hits = 0;
      for (const TritonTarget& t : archive.triton_targets)
        hits += (", " + *l->value + ", ").find(", " + arch_name(t) + ", ") != std::string::npos;
      if (hits == 0) base = Verdict::stale;
      if (hits > 0 && hits < archive.triton_targets.size()) base = Verdict::warn;
      if (base != Verdict::match) row.why = hits == 0 ? std::string(r->why) : "only some of the cache's kernels target this GPU";
      if (base != Verdict::match) row.diff = targets_diff(archive.triton_targets, *l->value);
    }
  }
  for (const ComponentRef& c : comps) row.verdicts.push_back(ignored ? Verdict::match : applies(rule_for(r, c.kind), base));
  return row;
}

}  // namespace

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::match:
      return "match";
    case Verdict::warn:
      return "warn";
    case Verdict::stale:
      return "stale";
    case Verdict::refuse:
      return "refuse";
  }
  return "refuse";
}

const std::vector<FieldRule>& field_rules() { return kRules; }

const FieldRule* find_rule(std::string_view field) {
  for (const FieldRule& r : kRules) {
    if (r.field == field) return &r;
  }
  return nullptr;
}

std::optional<int> compare_versions(std::string_view a, std::string_view b) {
  auto parts = [](std::string_view s) -> std::optional<std::vector<std::uint64_t>> {
    std::vector<std::uint64_t> out;
    while (!s.empty()) {
      std::uint64_t n = 0;
      auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
      if (ec != std::errc{}) return std::nullopt;
      out.push_back(n);
      s.remove_prefix(static_cast<std::size_t>(ptr - s.data()));
      if (s.empty()) break;
      if (s.front() != '.' || s.size() == 1) return std::nullopt;
      s.remove_prefix(1);
    }
    if (out.empty()) return std::nullopt;
    return out;
  };
  auto pa = parts(a);
  auto pb = parts(b);
  if (!pa || !pb) return std::nullopt;
  if (*pa == *pb) return 0;
  return *pa < *pb ? -1 : 1;
}

Comparison compare(const Fingerprint& archive, const Fingerprint& local, const std::vector<ComponentRef>& components,
                   const std::vector<std::string>& ignored) {
  Comparison c;
  c.components = components;
  c.archive_recorded = archive.recorded();
  std::vector<std::string> names;
  for (const FieldRule& r : kRules) {
    if (r.field != kTargetsField) names.emplace_back(r.field);
  }
  // Fields this ccpack does not know (from a newer one) are shown too.
  for (const Fingerprint* fp : {&archive, &local}) {
    for (const auto& [name, unused] : fp->fields) {
      if (!contains(names, name)) names.push_back(name);
    }
  }
  for (const std::string& name : names)
    c.rows.push_back(compare_field(name, archive, local, components, contains(ignored, name)));
  c.rows.push_back(compare_targets(archive, local, components, contains(ignored, kTargetsField)));
  c.component_verdicts.assign(components.size(), Verdict::match);
  for (const ComparisonRow& row : c.rows) {
    for (std::size_t i = 0; i < components.size(); ++i)
      c.component_verdicts[i] = std::max(c.component_verdicts[i], row.verdicts[i]);
  }
  return c;
}

Verdict Comparison::worst() const {
  Verdict w = Verdict::match;
  for (Verdict v : component_verdicts) w = std::max(w, v);
  return w;
}

std::string Comparison::summary() const {
  std::string out;
  for (std::size_t i = 0; i < components.size(); ++i) {
    Verdict v = component_verdicts[i];
    if (v == Verdict::match) continue;
    std::string fields;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      if (rows[r].verdicts[i] != v) continue;
      // A set difference is spelled out where the field is first named, the field alone after that.
      bool named_before = false;
      for (std::size_t k = 0; k < i; ++k)
        named_before = named_before || (component_verdicts[k] != Verdict::match && rows[r].verdicts[k] == component_verdicts[k]);
      fields += (fields.empty() ? "" : ", ") + (named_before ? rows[r].field : rows[r].named_difference());
    }
    out += (out.empty() ? "" : "; ") + escaped(components[i].name, 64) + " " + std::string(to_string(v)) + " (" + fields + ")";
  }
  return out.empty() ? "everything matches" : out;
}

std::string ComparisonRow::named_difference() const {
  if (!diff || diff->empty()) return field;
  std::vector<std::string> phrases = diff->phrases();
  std::string out = field + ": " + escaped(phrases.front());
  if (phrases.size() > 1) out += " (and " + std::to_string(phrases.size() - 1) + " more)";
  return out;
}

namespace {

bool row_differs(const ComparisonRow& row) {
  return std::any_of(row.verdicts.begin(), row.verdicts.end(), [](Verdict v) { return v != Verdict::match; });
}

// One side of a set difference in a table cell: its entries (every one when `whole`, else the first
// kTableEntries and a count), or what the other side has that this one lacks.
std::string side_cell(const SetDiff& d, bool archive_side, bool whole) {
  std::vector<std::string> entries = archive_side ? d.archive_side() : d.local_side();
  if (entries.empty()) return archive_side ? "(not in the archive)" : "(not here)";
  std::size_t shown = whole ? entries.size() : std::min(entries.size(), kTableEntries);
  std::vector<std::string> cut;
  for (std::size_t i = 0; i < shown; ++i) cut.push_back(escaped(entries[i]));
  std::string out = join_entries(d.syntax, cut);
  if (shown < entries.size()) out += " (+" + std::to_string(entries.size() - shown) + " more; --json lists all)";
  return out;
}

// The archive and local cells of one row (see to_table in policy.hpp).
std::pair<std::string, std::string> value_cells(const ComparisonRow& row, bool only_difference) {
  bool differs = row_differs(row) || row.ignored;
  if (differs && row.diff && !row.diff->empty())
    return {side_cell(*row.diff, true, only_difference), side_cell(*row.diff, false, only_difference)};
  std::size_t max = differs && only_difference ? 0 : kTableCell;
  auto cell = [max](const std::optional<std::string>& v, const std::string& note) {
    if (v) return v->empty() ? std::string("(none)") : escaped(*v, max);
    return escaped(note.empty() ? "absent" : note, max);
  };
  return {cell(row.archive, row.archive_note), cell(row.local, row.local_note)};
}

std::string aligned(const std::vector<std::vector<std::string>>& table) {
  std::vector<std::size_t> width(table.front().size(), 0);
  for (const auto& line : table) {
    for (std::size_t i = 0; i < line.size(); ++i) width[i] = std::max(width[i], line[i].size());
  }
  std::string out;
  for (const auto& line : table) {
    std::string text;
    for (std::size_t i = 0; i < line.size(); ++i) {
      text += line[i];
      if (i + 1 < line.size()) text += std::string(width[i] - line[i].size() + 2, ' ');
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + "\n";
  }
  return out;
}

}  // namespace

std::string Comparison::to_table(bool all_rows) const {
  std::vector<std::vector<std::string>> table;
  std::vector<std::string> head{"field", "archive", "local"};
  for (const ComponentRef& comp : components) head.push_back(escaped(comp.name, 16));
  head.emplace_back("why");
  table.push_back(head);
  std::size_t differing = static_cast<std::size_t>(std::count_if(rows.begin(), rows.end(), row_differs));
  for (const ComparisonRow& row : rows) {
    if (!all_rows && !row_differs(row) && !row.ignored) continue;
    auto [archive_cell, local_cell] = value_cells(row, differing == 1);
    std::vector<std::string> line{escaped(row.field, 40), archive_cell, local_cell};
    for (Verdict v : row.verdicts) line.emplace_back(row.ignored ? "ignored" : to_string(v));
    line.push_back(row.ignored ? "ignored (--ignore)" : escaped(row.why, 200));
    table.push_back(std::move(line));
  }
  std::vector<std::string> verdict_line{"=> verdict", "", ""};
  for (Verdict v : component_verdicts) verdict_line.emplace_back(to_string(v));
  verdict_line.emplace_back(archive_recorded ? "" : "the archive records no fingerprint (made before fingerprints)");
  table.push_back(std::move(verdict_line));
  return aligned(table);
}

OnMismatch parse_on_mismatch(std::string_view text, std::string_view origin) {
  if (text == "refuse") return OnMismatch::refuse;
  if (text == "force") return OnMismatch::force;
  if (text == "purge") return OnMismatch::purge;
  throw UsageError(std::string(origin) + " must be refuse, force or purge, got '" + escaped(text, 64) + "'");
}

std::vector<std::string> missing_settings(const Comparison& fit, bool* only) {
  std::vector<std::string> missing;
  std::string ptxas;  // said last, after the settings
  bool others = false;
  for (const ComparisonRow& row : fit.rows) {
    bool blocks = std::any_of(row.verdicts.begin(), row.verdicts.end(), [](Verdict v) { return v >= Verdict::stale; });
    if (!blocks) continue;
    if (row.field == field::ptxas_version && row.archive) {
      ptxas = std::string(kPtxasVariable) + "=<a ptxas " + *row.archive + ">";
      continue;
    }
    if (row.field != field::env_inductor && row.field != field::env_triton) {
      others = true;
      continue;
    }
    auto entries = [](const std::optional<std::string>& v) {
      return v ? split_entries(ListSyntax::settings, *v) : std::vector<std::string>{};
    };
    std::vector<std::string> archive = entries(row.archive);
    std::vector<std::string> here = entries(row.local);
    for (const std::string& e : archive) {
      if (std::find(here.begin(), here.end(), e) == here.end()) missing.push_back(e);
    }
    for (const std::string& e : here) {
      std::string name = e.substr(0, e.find('='));
      bool named =
          std::any_of(archive.begin(), archive.end(), [&](const std::string& a) { return a.substr(0, a.find('=')) == name; });
      if (!named) missing.push_back("unset " + name);
    }
  }
  if (!ptxas.empty()) missing.push_back(ptxas);
  if (only) *only = !others && !missing.empty();
  return missing;
}

}  // namespace ccpack::manifest
