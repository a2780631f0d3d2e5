// The test seam of the install step: named points where a test makes the restore fail, or ends the process, to
// show that a failure there leaves every target folder as it was (or, for a kill, whole and recoverable).
#pragma once

#include <cstddef>
#include <functional>

namespace ccpack::unpack {

enum class FaultPoint {
  swap,          // before the k-th folder's swap (index: k)
  rename_flags,  // where renameat2's flags would be tried for the k-th folder (index: k)
  purge,         // before the purge of --on-mismatch=purge (index: the number of folders purged)
};

// May throw (a failure at that point) or end the process (a kill). Returning true at FaultPoint::rename_flags
// simulates a filesystem without renameat2's flags; the value is ignored elsewhere.
using FaultHook = std::function<bool(FaultPoint point, std::size_t index)>;

}  // namespace ccpack::unpack
