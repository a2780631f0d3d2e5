// What a fingerprint difference means, and the comparison behind `ccpack check` and `restore`.
//
// The field table (policy.cpp, one owner; docs/FINGERPRINT.md gives the evidence) says, for each fingerprint
// field and each component kind (inductor, triton, extra), what a difference does to that component's entries:
// match, warn, stale or refuse (Verdict). `compare` is pure (no I/O): archive fingerprint, local fingerprint and
// the components in, one row per field and one verdict per component out. A component's verdict is the worst of
// its rows; anything stale or refused makes `restore --on-mismatch=refuse` write nothing and exit 3.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "manifest/field_set.hpp"
#include "manifest/fingerprint.hpp"
#include "manifest/manifest.hpp"

namespace ccpack::manifest {

// In increasing severity:
//   match   equal values (or a rule that does not apply to the component)
//   warn    the entries still work; worth knowing (a driver upgrade, a relocated folder)
//   stale   the entries can never hit there: restoring them only wastes disk and start-up time
//   refuse  loading them risks a crash or wrong results
enum class Verdict : std::uint8_t { match, warn, stale, refuse };
[[nodiscard]] std::string_view to_string(Verdict v);

// What a difference in a field does to one kind of component.
enum class Rule : std::uint8_t {
  none,            // does not matter for this component
  warn,            // warn
  stale,           // stale
  refuse,          // refuse
  refuse_if_older  // refuse when the local version is older than the archive's, else warn
};

struct FieldRule {
  std::string_view field;
  Rule triton;
  Rule inductor;
  Rule extra;
  std::string_view why;  // one line: what a difference does
};

// The table, in display order.
[[nodiscard]] const std::vector<FieldRule>& field_rules();
[[nodiscard]] const FieldRule* find_rule(std::string_view field);
// The name of the pseudo-field that compares the archive's triton_targets with the local gpu.arch.
inline constexpr std::string_view kTargetsField = "cache.targets";

struct ComponentRef {
  std::string name;
  ComponentKind kind = ComponentKind::extra;
};

struct ComparisonRow {
  std::string field;
  std::optional<std::string> archive;  // nullopt: absent there (see archive_note)
  std::optional<std::string> local;
  std::string archive_note;  // "not recorded", "absent: <source>" when archive is nullopt
  std::string local_note;
  std::vector<Verdict> verdicts;  // one per component, in the order given to compare()
  bool ignored = false;
  std::string why;  // empty when everything matches
  // Set-valued fields (field_set.hpp) known on both sides: what differs, entry by entry (empty when the sets are
  // equal). nullopt for single values, and where one side is absent or not recorded.
  std::optional<SetDiff> diff;
  // "wheels.cuda: nvidia-cusparselt-cu13==0.8.0 only in the archive (and 2 more)" for a set difference; the
  // field name alone otherwise.
  [[nodiscard]] std::string named_difference() const;
};

inline constexpr std::size_t kTableCell = 34;
inline constexpr std::size_t kTableEntries = 3;

struct Comparison {
  std::vector<ComponentRef> components;
  std::vector<ComparisonRow> rows;
  std::vector<Verdict> component_verdicts;
  bool archive_recorded = true;

  [[nodiscard]] Verdict worst() const;
  // True when anything is stale or refused: restore --on-mismatch=refuse writes nothing.
  [[nodiscard]] bool blocks() const { return worst() >= Verdict::stale; }
  // One line: "inductor stale (torch.version), triton refuse (cpu.arch)"; a set-valued field names its first
  // differing entry where the field is first named: "inductor stale (wheels.cuda: X==1 only in the archive);
  // triton warn (wheels.cuda)".
  [[nodiscard]] std::string summary() const;
  // The table of check/restore: field | archive | local | <component>... | why. `all_rows` false: only rows
  // that do not match. A set-valued row shows only what differs (each side's entries that the other lacks or
  // spells otherwise, up to kTableEntries a side); a matching row cuts values at kTableCell bytes. A differing
  // single value is cut at kTableCell too, unless it is the only differing row: then every value is whole.
  [[nodiscard]] std::string to_table(bool all_rows) const;
};

// Compares field by field. `ignored` names fields (validated by the caller with find_rule or kTargetsField).
// Special cases, decided here once:
// - an archive that records no fingerprint (made before fingerprints): every field "not recorded" -> warn;
// - a field known on one side and absent on the other: cannot compare -> warn (never a guessed match or refusal);
// - the driver (and glibc): an older one here than on the build machine -> refuse, a newer one -> warn;
// - the archive's triton_targets (what its kernels were built for) against the local gpu.arch: no target for
//   this GPU -> stale for triton, inductor and extras; only some -> warn;
// - `ignored` fields (--ignore FIELD) are shown with verdict match and the mark "ignored".
[[nodiscard]] Comparison compare(const Fingerprint& archive, const Fingerprint& local,
                                 const std::vector<ComponentRef>& components, const std::vector<std::string>& ignored = {});

// -1, 0, 1 comparing dotted version strings numerically ("570.86.10" < "580.159.04"); nullopt if either is not
// a dotted version.
[[nodiscard]] std::optional<int> compare_versions(std::string_view a, std::string_view b);

// restore --on-mismatch
enum class OnMismatch : std::uint8_t { refuse, force, purge };
// Parses "refuse" / "force" / "purge"; throws UsageError naming `origin` (the flag or variable) otherwise.
[[nodiscard]] OnMismatch parse_on_mismatch(std::string_view text, std::string_view origin);

// What this process must change to fit the archive, from the settings rows of a comparison that make a component
// stale: "K=V" for each env.inductor / env.triton entry the archive records and this process lacks or holds
// otherwise, "unset K" for one only this process has, "TRITON_PTXAS_PATH=<a ptxas V>" for another ptxas. Empty when
// no settings row blocks. `only` (when given) says whether those rows are all that blocks.
[[nodiscard]] std::vector<std::string> missing_settings(const Comparison& fit, bool* only = nullptr);

}  // namespace ccpack::manifest
