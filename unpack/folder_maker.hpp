// The folders of a restore, made where and when extract() needs them (unpack/extractor.hpp).
//
// Why: a folder is made by the thread that is about to create the first entry inside it, just before that entry,
// as tar makes them, not all of them before the first file. Made all at once first, the folders of a 100k-file
// cache were written to the ext4 journal a second time when their files came (37.8k journal blocks against tar's
// 24.3k), and the inodes of a folder's files no longer lay beside the folder's own.
//
// How: one state per manifest entry (absent, being made, made, failed). ensure_folder_of(i) walks up from entry i's
// folder to the first one made and makes the missing ones top down; a folder is made by the one thread that moves it
// from absent to being made, and any other thread that needs it waits on that state (std::atomic wait) and, when
// its creation failed, rethrows the same error. Folders no file needed (empty ones) are made by finish(); modes
// that would keep the owner from writing are set last, deepest first, by apply_modes().
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <vector>

#include "manifest/manifest.hpp"

namespace ccpack::unpack {

class FolderMaker {
 public:
  // `root_of`: the staging root (an open folder) of an entry's component, -1 where that component is not restored;
  // `umask`: the process's (current_umask()), whose bits a folder's mode gets back where it took them.
  FolderMaker(const manifest::EntryList& entries, std::function<int(const manifest::Entry&)> root_of, mode_t umask);
  FolderMaker(const FolderMaker&) = delete;
  FolderMaker& operator=(const FolderMaker&) = delete;

  // Returns once the folder holding entry `i`, and every folder above it, exists; safe from any thread. Throws
  // the error of a folder that could not be made (by this thread or another).
  void ensure_folder_of(std::size_t i);
  // Makes the folders not made yet, parents first (at the end, on one thread).
  void finish();
  // Gives the folders made with mode 0700 (their own lacked owner access) their mode, deepest first, and each
  // component root its own.
  void apply_modes() const;

 private:
  enum : std::uint8_t { kAbsent, kMaking, kMade, kFailed };

  void ensure(std::uint32_t dir);
  void make(std::uint32_t dir);

  manifest::EntryList scratch_;         // a compact copy of an edited list (entries_ may point here)
  const manifest::EntryList& entries_;  // compact: each entry knows its folder (parent)
  std::function<int(const manifest::Entry&)> root_of_;
  mode_t umask_;
  std::vector<std::atomic<std::uint8_t>> state_;  // per entry (kMade: nothing to make)
  std::mutex error_mutex_;
  std::exception_ptr error_;  // the first folder that could not be made
};

}  // namespace ccpack::unpack
