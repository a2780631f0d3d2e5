// Swapping a set of staged folders into place, all or nothing.
//
// Each staged folder S replaces its target T by one rename: renameat2(RENAME_NOREPLACE) when T does not exist,
// renameat2(RENAME_EXCHANGE) when it does (S then holds the old content), and, where the filesystem lacks
// renameat2's flags, two renames: T aside to a staging name, then S to T. When the k-th swap fails, swaps 0..k-1
// are undone in reverse order (the same exchange again, or the renames backwards), so every target is as before.
// Only after every swap succeeded is the old content removed. A kill between two swaps leaves some targets new
// and others old, each whole, with the old content in staging names: the next run removes that debris and, since
// each new folder carries the archive's marker, restores exactly the folders still old.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "unpack/fault.hpp"

namespace ccpack::unpack {

struct StagedFolder {
  std::filesystem::path staging;  // full content, checked, marker written
  std::filesystem::path target;
  std::filesystem::path aside;  // where the two-renames fallback moves the old target (a staging name)
};

// Swaps every folder in; on failure undoes the swaps made and rethrows. Then removes the old contents.
void swap_all(const std::vector<StagedFolder>& folders, const FaultHook& fault);

}  // namespace ccpack::unpack
