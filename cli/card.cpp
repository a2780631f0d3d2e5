// See card.hpp. Sections: archive, hardware, software, compile settings (the fingerprint's fields grouped by name),
// cache statistics (the manifest), consistency (triton_targets against gpu.* / triton.version), and the
// recompilation triggers: the fields whose change makes a component of this archive stale or refused, from the
// policy table (manifest/policy.cpp), with the value this archive recorded.
#include "cli/card.hpp"

#include <map>

#include "cli/cli.hpp"
#include "manifest/policy.hpp"
#include "util/escape.hpp"

namespace ccpack::cli {
namespace {

using manifest::Fingerprint;

// Untrusted text, escaped and made inert for Markdown; never cut (the card holds the record whole).
std::string md(std::string_view s) {
  std::string e = escaped(s);
  std::string out;
  for (char c : e) {
    if (c == '|' || c == '`' || c == '*' || c == '<' || c == '>' || c == '[' || c == ']') out += '\\';
    out += c;
  }
  return out;
}

std::string value_of(const Fingerprint& fp, std::string_view field) {
  const manifest::FieldValue* v = fp.get(field);
  if (!v) return "not recorded";
  // Not the source of an absent value: it may describe the machine `create` ran on, not the cache.
  if (!v->value) return "absent";
  return v->value->empty() ? "(empty)" : md(*v->value);
}

std::string section_of(std::string_view f) {
  if (f.starts_with("gpu.") || f.starts_with("cpu.") || f == "os" || f == "glibc") return "Hardware";
  if (f.starts_with("env.") || f.starts_with("paths.") || f == "world_size") return "Compile settings";
  return "Software";
}

void fields(std::string& out, const Fingerprint& fp, std::string_view section) {
  out += "\n## " + std::string(section) + "\n\n";
  for (const manifest::FieldRule& r : manifest::field_rules()) {
    if (r.field == manifest::kTargetsField || section_of(r.field) != section) continue;
    // A set-valued field with several entries: one sub-item each, so a long list reads entry by entry.
    const manifest::FieldValue* v = fp.get(r.field);
    std::optional<manifest::ListSyntax> syntax = manifest::list_syntax(r.field);
    std::vector<std::string> entries =
        syntax && v && v->value ? manifest::split_entries(*syntax, *v->value) : std::vector<std::string>{};
    if (entries.size() < 2) {
      out += "- " + std::string(r.field) + ": " + value_of(fp, r.field) + "\n";
      continue;
    }
    out += "- " + std::string(r.field) + ": " + std::to_string(entries.size()) + " entries\n";
    for (const std::string& e : entries) out += "  - " + md(e) + "\n";
  }
}

void statistics(std::string& out, const CardInput& in) {
  const manifest::Manifest& m = *in.manifest;
  const manifest::ComponentTotals total = manifest::totals(m.components);
  std::uint64_t libraries = 0, binaries = 0;
  for (const manifest::Entry& e : m.entries) {
    if (e.path.ends_with(".so") || e.path.find(".so.") != std::string::npos) ++libraries;
    if (e.path.ends_with(".cubin") || e.path.ends_with(".hsaco")) ++binaries;
  }
  out += "\n## Cache statistics\n\n| component | kind | files | size |\n|---|---|---|---|\n";
  for (const manifest::Component& c : m.components) {
    out += "| " + md(c.name) + " | " + std::string(manifest::to_string(c.kind)) + " | " + std::to_string(c.files) + " | " +
           mb(c.bytes) + " |\n";
  }
  out += "\n- total: " + std::to_string(total.files) + " files, " + mb(total.bytes) + "; archive " + mb(in.archive_bytes) + "\n";
  out += "- GPU binaries (.cubin, .hsaco): " + std::to_string(binaries) +
         "; compiled libraries (.so): " + std::to_string(libraries) + "\n";
  const Fingerprint& fp = in.manifest->fingerprint;
  if (fp.triton_targets.empty()) {
    out += "- Triton kernels by target: none recorded\n";
    return;
  }
  out += "\n| Triton target | backend | warp size | triton | kernels |\n|---|---|---|---|---|\n";
  for (const manifest::TritonTarget& t : fp.triton_targets) {
    out += "| " + md(manifest::arch_name(t)) + " | " + md(t.backend) + " | " + std::to_string(t.warp_size) + " | " +
           md(t.triton_version) + " | " + std::to_string(t.kernels) + " |\n";
  }
}

std::vector<std::string> disagreements(const Fingerprint& fp) {
  std::vector<std::string> out;
  const auto& ts = fp.triton_targets;
  if (ts.size() > 1) {
    std::string list;
    for (const auto& t : ts)
      list += (list.empty() ? "" : ", ") + md(manifest::arch_name(t)) + " (triton " + md(t.triton_version) + ")";
    out.push_back("The cache holds kernels for " + std::to_string(ts.size()) + " targets: " + list +
                  ". One machine uses only those for its own GPU; the others are dead weight there.");
  }
  const manifest::FieldValue* arch = fp.get(manifest::field::gpu_arch);
  const manifest::FieldValue* tri = fp.get(manifest::field::triton_version);
  for (const auto& t : ts) {
    if (arch && arch->value && *arch->value != manifest::arch_name(t)) {
      out.push_back("The fingerprint says gpu.arch " + md(*arch->value) + " but " + std::to_string(t.kernels) + " kernels name " +
                    md(manifest::arch_name(t)) + ".");
    }
    if (tri && tri->value && *tri->value != t.triton_version) {
      out.push_back("The fingerprint says triton.version " + md(*tri->value) + " but " + std::to_string(t.kernels) +
                    " kernels were built by triton " + md(t.triton_version) + ".");
    }
  }
  if (!ts.empty() && (!arch || !arch->value))
    out.emplace_back("The fingerprint records no gpu.arch, so it names no single GPU for these kernels.");
  return out;
}

std::string rule_text(manifest::Rule r) {
  switch (r) {
    case manifest::Rule::stale:
      return "stale";
    case manifest::Rule::refuse:
      return "refused";
    case manifest::Rule::refuse_if_older:
      return "refused if older";
    default:
      return "";
  }
}

void triggers(std::string& out, const CardInput& in) {
  out +=
      "\n## Recompilation triggers for this archive\n\nAny of these differing on the target machine makes a component "
      "recompile (stale) or unsafe to load (refused); `ccpack check` tests them all.\n\n";
  for (const manifest::FieldRule& r : manifest::field_rules()) {
    std::string effects;
    for (const manifest::Component& c : in.manifest->components) {
      manifest::Rule rule = c.kind == manifest::ComponentKind::triton     ? r.triton
                            : c.kind == manifest::ComponentKind::inductor ? r.inductor
                                                                          : r.extra;
      std::string t = rule_text(rule);
      if (!t.empty()) effects += (effects.empty() ? "" : ", ") + md(c.name) + " " + t;
    }
    if (effects.empty()) continue;
    std::string recorded =
        r.field == manifest::kTargetsField ? "the kernels' targets above" : value_of(in.manifest->fingerprint, r.field);
    out.append("- [ ] ").append(r.field).append(" = ").append(recorded).append(" -> ").append(effects);
    out.append(". ").append(md(r.why)).append("\n");
  }
}

// What the archive's own create recorded: its settle runs, or none.
std::string created_settle_text(const manifest::Manifest& m) {
  if (!m.settle) return "not settled (not tried: made without `create --settle`)";
  const manifest::SettleRecord& s = *m.settle;
  const manifest::CompiledCounts& c = s.last_run_compiled;
  std::string runs = std::to_string(s.runs) + (s.runs == 1 ? " settle run" : " settle runs");
  std::string last = "the last compiled " + std::to_string(c.triton_kernels) + " Triton kernels, " + std::to_string(c.fx_graphs) +
                     " FX graphs, " + std::to_string(c.autotune) + " autotune results";
  return s.settled ? "settled after " + runs + " (fixed point: " + last + ")"
                   : "NOT settled: stopped at the run limit after " + runs + " (" + last + ")";
}

}  // namespace

std::string settle_text(const manifest::Manifest& m) {
  if (!m.merge) return created_settle_text(m);
  // A merged archive keeps its base's record, which says nothing of what the deltas added.
  std::size_t n = m.merge->deltas.size();
  return "base " + created_settle_text(m) + "; merged " + std::to_string(n) + (n == 1 ? " delta" : " deltas") +
         " (their additions not settle-tested)";
}

std::string merge_text(const manifest::Manifest& m) {
  if (m.delta)
    return "a delta of archive " + m.delta->base_manifest_sha256.substr(0, 12) + " (create --since-restore): not a whole cache";
  if (!m.merge) return "not merged (a whole cache as created)";
  std::uint64_t added = 0;
  for (const manifest::MergedDelta& d : m.merge->deltas) added += d.added;
  std::string n = std::to_string(m.merge->deltas.size());
  return n + (m.merge->deltas.size() == 1 ? " delta" : " deltas") + " into base " + m.merge->base_manifest_sha256.substr(0, 12) +
         " (" + std::to_string(added) + " files and symlinks added)";
}

// "- signed: by key K at T, note: N" per signature, or "- signed: no (unsigned)".
std::string signers(const CardInput& in) {
  if (in.signatures == nullptr || in.signatures->empty())
    return "- signed: no (unsigned; pods refuse it unless they allow unsigned archives)\n";
  std::string out;
  for (const manifest::Signature& s : *in.signatures) {
    out += "- signed: by key " + md(s.key_id) + " (" + md(s.algorithm) + ") at " + md(s.signed_at) +
           (s.note.empty() ? std::string(", no note") : ", note: " + md(s.note)) + "\n";
  }
  return out + "- signatures: as recorded; `ccpack verify` checks them against the trusted keys\n";
}

std::string model_card(const CardInput& in) {
  const Fingerprint& fp = in.manifest->fingerprint;
  std::string out = "# Model card: " + md(in.archive_name) + "\n\n";
  out += "Built by `ccpack inspect --card` from the archive's manifest and recorded fingerprint only.\n\n";
  out += "- manifest: sha256:" + in.manifest_sha256 + "\n- created by: " + md(in.manifest->created_by) + "\n";
  if (!fp.recorded()) out += "- fingerprint: not recorded (made before fingerprints): nothing below describes a machine\n";
  out += signers(in);
  out += "- settled: " + settle_text(*in.manifest) + "\n";
  if (in.manifest->merge || in.manifest->delta) out += "- merged: " + merge_text(*in.manifest) + "\n";  // else as before
  fields(out, fp, "Hardware");
  fields(out, fp, "Software");
  fields(out, fp, "Compile settings");
  statistics(out, in);
  out += "\n## Consistency\n\n";
  std::vector<std::string> d = disagreements(fp);
  if (d.empty())
    out += fp.triton_targets.empty() ? "- No Triton kernels recorded to check against the fingerprint.\n"
                                     : "- The cache's kernels and the fingerprint agree.\n";
  for (const std::string& line : d) out += "- **" + line + "**\n";
  triggers(out, in);
  return out;
}

}  // namespace ccpack::cli
