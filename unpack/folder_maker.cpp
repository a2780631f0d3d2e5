// See folder_maker.hpp.
#include "unpack/folder_maker.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <string>
#include <utility>

#include "unpack/frame_stream.hpp"
#include "util/error.hpp"

namespace ccpack::unpack {
namespace {

using manifest::Entry;
using manifest::EntryList;
using manifest::EntryType;

// A folder is made with its final mode when that leaves its owner full access; others get 0700 until the end.
bool needs_final_chmod(const Entry& e) { return (e.mode & 0700) != 0700; }

}  // namespace

FolderMaker::FolderMaker(const EntryList& entries, std::function<int(const Entry&)> root_of, mode_t umask)
    : entries_(entries.compact(scratch_)), root_of_(std::move(root_of)), umask_(umask), state_(entries_.size()) {
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    bool ours =
        entries_.type(i) == EntryType::dir && !manifest::relative_of(entries_.path(i)).empty() && root_of_(entries_[i]) >= 0;
    state_[i].store(ours ? kAbsent : kMade, std::memory_order_relaxed);
  }
}

void FolderMaker::ensure_folder_of(std::size_t i) { ensure(entries_.parent(i)); }

void FolderMaker::finish() {
  for (std::size_t i = 0; i < entries_.size(); ++i) ensure(static_cast<std::uint32_t>(i));
}

void FolderMaker::ensure(std::uint32_t dir) {
  if (dir == EntryList::kNoParent || state_[dir].load(std::memory_order_acquire) == kMade) return;
  std::vector<std::uint32_t> missing;  // from `dir` up to the first folder made
  for (std::uint32_t d = dir; d != EntryList::kNoParent && state_[d].load(std::memory_order_acquire) != kMade;
       d = entries_.parent(d)) {
    missing.push_back(d);
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) make(*it);
}

void FolderMaker::make(std::uint32_t dir) {
  std::atomic<std::uint8_t>& state = state_[dir];
  std::uint8_t seen = kAbsent;
  if (state.compare_exchange_strong(seen, kMaking, std::memory_order_acquire)) {
    try {
      Entry e = entries_[dir];
      std::string rel(manifest::relative_of(e.path));
      mode_t mode = needs_final_chmod(e) ? 0700 : e.mode;
      int root = root_of_(e);
      if (::mkdirat(root, rel.c_str(), mode) != 0) throw_errno("cannot create folder " + quoted(e));
      // No symlink exists yet in the staging tree (they come last), so fchmodat cannot be led astray.
      if ((mode & umask_) != 0 && ::fchmodat(root, rel.c_str(), mode, 0) != 0) throw_errno("cannot set the mode of " + quoted(e));
    } catch (...) {
      std::lock_guard lock(error_mutex_);
      if (!error_) error_ = std::current_exception();
      state.store(kFailed, std::memory_order_release);
      state.notify_all();
      throw;
    }
    state.store(kMade, std::memory_order_release);
    state.notify_all();
    return;
  }
  while (seen == kMaking) {
    state.wait(kMaking, std::memory_order_acquire);
    seen = state.load(std::memory_order_acquire);
  }
  if (seen == kFailed) {
    std::lock_guard lock(error_mutex_);
    std::rethrow_exception(error_);
  }
}

void FolderMaker::apply_modes() const {
  for (std::size_t i = entries_.size(); i-- > 0;) {
    if (entries_.type(i) != EntryType::dir) continue;
    Entry e = entries_[i];
    int root = root_of_(e);
    std::string rel(manifest::relative_of(e.path));
    if (root < 0 || (!rel.empty() && !needs_final_chmod(e))) continue;
    int rc = rel.empty() ? ::fchmod(root, e.mode) : ::fchmodat(root, rel.c_str(), e.mode, 0);
    if (rc != 0) throw_errno("cannot set the mode of " + quoted(e));
  }
}

}  // namespace ccpack::unpack
