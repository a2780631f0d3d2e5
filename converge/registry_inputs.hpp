// `merge oci://REG/REPO:TAG --deltas-from-registry`: the base and its deltas fetched from a registry into a scratch
// folder, so the merge itself (merge.hpp) reads local files and judges them exactly as it judges files given.
//
//   base     the archive under TAG, pulled with the registry's pull (registry/pull.hpp: header, frames and layer
//            digest checked, nothing left on failure); its signature is checked by the merge's own gate;
//   list     the repository's tags, those of the form TAG.delta-<12 hex> (registry/delta_tags.hpp), sorted;
//   deltas   each pulled the same way; no signature or fit is required here (the merge's delta gate judges them).
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "registry/oci.hpp"
#include "registry/session.hpp"

namespace ccpack::converge {

struct RegistryInputs {
  std::filesystem::path base;
  std::vector<std::filesystem::path> deltas;
  std::vector<std::string> delta_tags;  // where each of `deltas` came from
};

// `session_for` opens a session for a reference (the front end's registry options). Throws what pull throws.
[[nodiscard]] RegistryInputs pull_inputs(
    const registry::oci::Reference& base,
    const std::function<std::unique_ptr<registry::Session>(const registry::oci::Reference&)>& session_for,
    const std::filesystem::path& into);

}  // namespace ccpack::converge
