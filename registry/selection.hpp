// Which of a tag's archives fits a machine best: the same verdicts as a local restore, before any blob byte.
//
// A tag names one archive or an index of them (one per environment), each described by the selection fields of
// its annotations (registry/oci.hpp). Each candidate's recorded fields become a Fingerprint and go through
// manifest::compare against this machine's fingerprint (policy.hpp): a field absent on one side is "cannot
// compare" (warn), never a guessed match or refusal, exactly as `restore FILE` judges it. Then:
//   - the best verdict wins (match < warn < stale < refuse);
//   - among equals, the candidate with more fields known on both sides and equal wins;
//   - candidates still tied that differ in some field are undecided: the fields they differ in are named, and
//     those absent here are what the machine must supply (`--select gpu.arch=sm_90`, or the GPU itself).
// Only the selection fields take part (they are all a candidate records); the full policy runs on the archive's
// signed fingerprint once its header is fetched.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "manifest/fingerprint.hpp"
#include "manifest/policy.hpp"
#include "registry/oci.hpp"

namespace ccpack::registry::oci {

// The fingerprint a selection stands for: each field with its value, "absent" values absent; `source` says
// where the values came from ("annotation").
[[nodiscard]] manifest::Fingerprint fingerprint_of_selection(const Selection& selection, std::string_view source);
// `machine` restricted to the selection fields (the others would only add rows every candidate shares).
[[nodiscard]] manifest::Fingerprint selection_fields_of(const manifest::Fingerprint& machine);

struct Choice {
  std::optional<std::size_t> pick;                       // the winner; nullopt when undecided or there is no candidate
  manifest::Verdict verdict = manifest::Verdict::match;  // of the best candidates
  std::size_t matching = 0;                              // fields known on both sides and equal, for the best
  std::vector<std::size_t> tied;                         // the best candidates when undecided (two or more)
  std::vector<std::string> differ;                       // the fields the tied candidates differ in (kSelectionFields order)
  std::vector<std::string> missing;                      // those of `differ` absent on this machine
};

// Ranks `candidates` for `machine` (see above). With no candidate, pick is nullopt and tied empty.
[[nodiscard]] Choice choose(const std::vector<Selection>& candidates, const manifest::Fingerprint& machine);

}  // namespace ccpack::registry::oci
