// See folder_maker.hpp.
#include "unpack/folder_maker.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <string>
#include <unordered_map>
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

// For an editable list (built by hand): the folder entry of each entry, found by path.
std::vector<std::uint32_t> folders_by_path(const EntryList& list) {
  std::unordered_map<std::string, std::uint32_t> folders;
  std::vector<std::uint32_t> out(list.size(), EntryList::kNoParent);
  for (std::size_t i = 0; i < list.size(); ++i) {
    std::string path = list.path(i);
    auto slash = path.rfind('/');
    if (slash != std::string::npos) {
      auto it = folders.find(path.substr(0, slash));
      if (it != folders.end()) out[i] = it->second;
    }
    if (list.type(i) == EntryType::dir) folders.emplace(std::move(path), static_cast<std::uint32_t>(i));
  }
  return out;
}

}  // namespace

FolderMaker::FolderMaker(const EntryList& entries, std::function<int(const Entry&)> root_of, mode_t umask)
    : entries_(entries), root_of_(std::move(root_of)), umask_(umask), state_(entries.size()) {
  if (entries.editable()) loose_folders_ = folders_by_path(entries);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    bool ours = entries.type(i) == EntryType::dir && !manifest::relative_of(entries.path(i)).empty() && root_of_(entries[i]) >= 0;
    state_[i].store(ours ? kAbsent : kMade, std::memory_order_relaxed);
  }
}

std::uint32_t FolderMaker::folder_of(std::size_t i) const {
  return loose_folders_.empty() ? entries_.parent(i) : loose_folders_[i];
}

void FolderMaker::ensure_folder_of(std::size_t i) { ensure(folder_of(i)); }

void FolderMaker::finish() {
  for (std::size_t i = 0; i < entries_.size(); ++i) ensure(static_cast<std::uint32_t>(i));
}

void FolderMaker::ensure(std::uint32_t dir) {
  if (dir == EntryList::kNoParent || state_[dir].load(std::memory_order_acquire) == kMade) return;
  std::vector<std::uint32_t> missing;  // from `dir` up to the first folder made
  for (std::uint32_t d = dir; d != EntryList::kNoParent && state_[d].load(std::memory_order_acquire) != kMade; d = folder_of(d)) {
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
