// The delta gate (delta_gate.hpp).
#include "converge/delta_gate.hpp"

#include "manifest/policy.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"

namespace ccpack::converge {

namespace {

[[noreturn]] void refuse(const std::filesystem::path& path, const std::string& field, const std::string& why) {
  throw Error("refusing delta " + quoted_path(path) + ": " + field + " " + why, ExitCode::refused);
}

// The first field whose difference makes the delta's environment stale or refused for a base component.
void check_fit(const std::filesystem::path& path, const unpack::Archive& delta, const unpack::Archive& base) {
  std::vector<manifest::ComponentRef> comps;
  for (const manifest::Component& c : base.manifest.components) comps.push_back({c.name, c.kind});
  manifest::Comparison fit = manifest::compare(base.manifest.fingerprint, delta.manifest.fingerprint, comps);
  // defence: merge-fingerprint
  if (!fit.blocks()) return;
  for (const manifest::ComparisonRow& row : fit.rows) {
    for (manifest::Verdict v : row.verdicts) {
      if (v < manifest::Verdict::stale || row.ignored) continue;
      refuse(path, "fingerprint." + row.field,
             "differs from the base's (" + escaped(row.local.value_or(row.local_note)) + " in the delta, " +
                 escaped(row.archive.value_or(row.archive_note)) + " in the base): it was compiled for another environment");
    }
  }
  refuse(path, "fingerprint", "does not fit the base's: " + fit.summary());
}

}  // namespace

unpack::Archive open_delta(const std::filesystem::path& path, const unpack::Archive& base) {
  unpack::Archive delta = unpack::Archive::open(path);  // no gate: untrusted, every check of the reader applies
  if (!delta.manifest.delta) {
    throw UsageError("refusing delta " + quoted_path(path) +
                     ": it has no 'delta' field (a whole cache, not made by create --since-restore)");
  }
  std::string base_digest = to_hex(base.manifest_digest());
  // defence: merge-base
  if (delta.manifest.delta->base_manifest_sha256 != base_digest) {
    refuse(path, "delta.base_manifest_sha256",
           "is " + delta.manifest.delta->base_manifest_sha256.substr(0, 12) + "..., the base's manifest is " +
               base_digest.substr(0, 12) + "... (a delta of another archive)");
  }
  check_fit(path, delta, base);
  return delta;
}

}  // namespace ccpack::converge
