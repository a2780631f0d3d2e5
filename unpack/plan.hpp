// The restore plan: what `ccpack restore` will do with each component of an archive, decided from facts alone.
//
// Inputs: the archive's components, the folder this machine gives each one (or none), the digest of the
// archive's manifest, what each target folder holds now (the marker it carries, read under the lock), and the
// fingerprint policy's verdict per component. Output: one action per component. `plan_restore` does no I/O, so
// unit tests drive every combination without a disk; `install` (installer.hpp) carries the plan out.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "manifest/manifest.hpp"

namespace ccpack::unpack {

enum class Action {
  restore,  // extract into staging, then swap in
  already,  // the folder already holds this archive's component
  skip,     // no folder given for it on this machine
  refuse,   // the fingerprint policy refuses it: nothing of the archive is written
  purge,    // stale here: not restored; the local stale artifacts are removed (policy purge)
};

[[nodiscard]] const char* to_string(Action action);

// What the fingerprint policy says of one component (the front end maps manifest/policy's verdicts to it).
enum class Fit { fits, stale_refuse, stale_purge };

struct ComponentFacts {
  std::optional<std::filesystem::path> target;  // the folder this machine gives it; nullopt: none
  std::optional<std::string> marker_digest;     // the manifest digest its target's marker names, if any
  Fit fit = Fit::fits;
  std::string fit_reason;  // why it does not fit
};

struct PlannedComponent {
  std::size_t component = 0;  // index in the manifest
  Action action = Action::skip;
  std::string reason;
};

struct RestorePlan {
  std::vector<PlannedComponent> components;
  [[nodiscard]] bool writes() const;   // some component is restored
  [[nodiscard]] bool refused() const;  // some component is refused: the whole restore writes nothing
};

// `facts` has one element per manifest component, in order.
[[nodiscard]] RestorePlan plan_restore(const manifest::Manifest& manifest, const std::string& manifest_digest_hex,
                                       const std::vector<ComponentFacts>& facts);

}  // namespace ccpack::unpack
