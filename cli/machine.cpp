// The target machine's fingerprint: probe or file, then --select; see machine.hpp.
#include "cli/machine.hpp"

#include <cstdlib>

#include "manifest/field_form.hpp"
#include "manifest/fingerprint_file.hpp"
#include "manifest/policy.hpp"
#include "probe/probe.hpp"
#include "util/closest_names.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"
#include "util/fs.hpp"

namespace ccpack::cli {
namespace {

constexpr std::size_t kMaxSelectValue = 256;

std::pair<std::string, std::string> split_select(const std::string& text) {
  std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw UsageError("--select takes FIELD=VALUE (for example gpu.arch=sm_90), got '" + escaped(text, 64) + "'");
  }
  return {text.substr(0, eq), text.substr(eq + 1)};
}

// " (did you mean 'A'?)" for the closest of `names`, "" when none is close.
std::string did_you_mean(std::string_view typed, const std::vector<std::string>& names) {
  std::vector<std::string> closest = closest_names(typed, names);
  if (closest.empty()) return "";
  std::string s;
  for (const std::string& c : closest) s += (s.empty() ? "'" : "' or '") + c;
  return "; did you mean " + s + "'?";
}

void check_field(const std::string& field) {
  if (manifest::find_rule(field) != nullptr && field != manifest::kTargetsField) return;
  std::vector<std::string> known;
  std::string list;
  for (const manifest::FieldRule& r : manifest::field_rules()) {
    if (r.field == manifest::kTargetsField) continue;
    known.emplace_back(r.field);
    list += (list.empty() ? "" : ", ") + std::string(r.field);
  }
  std::string hint = did_you_mean(field, known);
  throw UsageError("--select: '" + escaped(field, 64) + "' is not a fingerprint field" +
                   (hint.empty() ? " (fields: " + list + ")" : hint));
}

// The value must have the field's form (manifest/field_form.hpp): a typo would make every comparison stale.
void check_value(const std::string& field, const std::string& value) {
  bool printable = !value.empty() && value.size() <= kMaxSelectValue &&
                   std::all_of(value.begin(), value.end(), [](char c) { return c > 0x20 && c < 0x7f; });
  if (!printable) {
    throw UsageError("--select " + field + ": the value must be 1 to " + std::to_string(kMaxSelectValue) +
                     " printable characters without spaces, got '" + escaped(value, 64) + "'");
  }
  if (manifest::fits_form(field, value)) return;
  std::string hint;
  if (std::optional<std::string> repaired = manifest::normalized_value(field, value)) {
    hint = "; did you mean '" + *repaired + "'?";
  } else {
    hint = did_you_mean(value, manifest::listed_values(field));
  }
  throw UsageError("--select " + field + "=" + escaped(value, 64) + ": not a " + field + " value (" +
                   std::string(manifest::form_of(field)->description) + ")" + hint);
}

}  // namespace

void add_machine_options(CLI::App* cmd, MachineOptions& options) {
  cmd->add_option("--fingerprint", options.fingerprint_file,
                  "The target machine's fingerprint, as `ccpack fingerprint --json` writes it there, instead of this "
                  "machine's probe (default: $CCPACK_FINGERPRINT_FILE)");
  cmd->add_option(
         "--select", options.select,
         "FIELD=VALUE: take this fingerprint field as VALUE on the target machine (repeatable; e.g. "
         "gpu.arch=sm_90 in a container that sees no GPU; default: $CCPACK_SELECT, entries separated by spaces or commas)")
      ->allow_extra_args(false);
}

std::vector<std::string> selects_of(const MachineOptions& options) {
  if (!options.select.empty()) return options.select;
  const char* env = std::getenv(kSelectVar);
  std::vector<std::string> out;
  std::string list = env != nullptr ? env : "";
  for (std::size_t at = 0; at < list.size();) {
    std::size_t end = std::min(list.find_first_of(" ,\t\n", at), list.size());
    if (end > at) out.push_back(list.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

void check_selects(const MachineOptions& options) {
  std::vector<std::string> seen;
  for (const std::string& s : selects_of(options)) {
    auto [field, value] = split_select(s);
    check_field(field);
    check_value(field, value);
    if (std::find(seen.begin(), seen.end(), field) != seen.end()) throw UsageError("--select " + field + " is given twice");
    seen.push_back(field);
  }
}

std::string fingerprint_file_of(const MachineOptions& options) {
  if (!options.fingerprint_file.empty()) return options.fingerprint_file;
  const char* env = std::getenv("CCPACK_FINGERPRINT_FILE");
  return env != nullptr ? env : "";
}

Machine target_machine(const MachineOptions& options, const std::string& python, const std::vector<manifest::CacheDir>& dirs) {
  Machine m;
  std::string file = fingerprint_file_of(options);
  if (file.empty()) {
    m.fingerprint = probe::probe_local(python, dirs);
    m.source = "probe";
  } else {
    m.fingerprint = manifest::fingerprint_from_file(file);
    m.source = "file " + quoted_path(file);
  }
  for (const std::string& s : selects_of(options)) {
    auto [field, value] = split_select(s);
    Selected sel{field, value, std::nullopt, "not probed"};
    if (const manifest::FieldValue* v = m.fingerprint.get(field)) {
      sel.before = v->value;
      sel.before_note = v->source;
    }
    m.fingerprint.set(field, value, "--select");
    m.selected.push_back(std::move(sel));
  }
  return m;
}

void say_selected(const Reporter& out, const Machine& machine) {
  for (const Selected& s : machine.selected) {
    std::string before = s.before ? "'" + escaped(*s.before, 80) + "' (" + escaped(s.before_note, 80) + ")"
                                  : "absent (" + escaped(s.before_note, 120) + ")";
    out.warn("--select " + s.field + "=" + escaped(s.value, 80) + ": the target machine's " + s.field + " is taken as '" +
             escaped(s.value, 80) + "'; the " + (machine.source == "probe" ? "probe" : "fingerprint file") + " had " + before);
  }
}

ojson machine_json(const Machine& machine) {
  ojson selected = ojson::array();
  for (const Selected& s : machine.selected) {
    selected.push_back({{"field", s.field},
                        {"value", s.value},
                        {"before", s.before ? ojson(*s.before) : ojson(nullptr)},
                        {"before_source", s.before_note}});
  }
  return {{"source", machine.source}, {"select", selected}};
}

}  // namespace ccpack::cli
