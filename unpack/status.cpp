// One cache folder's status since its restore (see status.hpp): marker, entry list, one walk, then each file the
// list does not name is put in its group.
#include "unpack/status.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <unordered_set>

#include "manifest/kernel_json.hpp"
#include "manifest/reserved_names.hpp"
#include "manifest/restored_entries.hpp"
#include "manifest/transient_names.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"

namespace ccpack::unpack {
namespace fs = std::filesystem;

namespace {

// The kernel's name from the names of its folder's files: the stem of <kernel>.json (not __grp__*), else the
// stem of any file, else the folder's name.
std::string kernel_name(const std::vector<std::string>& files, const std::string& folder) {
  std::string any;
  for (const std::string& f : files) {
    std::string stem = f.substr(0, f.rfind('.'));
    if (manifest::is_kernel_json_name(f)) return stem;
    if (any.empty() && !f.starts_with(manifest::kGroupFilePrefix) && !stem.empty()) any = stem;
  }
  return any.empty() ? folder.substr(folder.rfind('/') + 1) : any;
}

// The relative paths of every file and symlink below `root`, transient names left out; folders are walked, not
// listed. std::filesystem's iterator reads d_type: no stat per file.
std::vector<std::string> walk(const fs::path& root) {
  std::vector<std::string> found;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::none, ec), end;
  if (ec) throw Error("cannot read cache folder " + quoted_path(root) + ": " + ec.message());
  // An increment that fails (a subfolder that cannot be read) leaves the iterator at its end: the error is checked
  // after the loop too, or the walk would end in silence, reporting the files below as gone.
  fs::path at = root;
  for (; it != end; it.increment(ec)) {
    if (ec) break;
    at = it->path();
    std::string name = it->path().filename().string();
    bool is_dir = it->is_directory(ec) && !it->is_symlink(ec);
    if (manifest::transient_reason(name, is_dir, it.depth() == 0) != nullptr) {
      if (is_dir) it.disable_recursion_pending();
      continue;
    }
    if (!is_dir) found.push_back(it->path().lexically_relative(root).string());
  }
  // defence: status-unreadable-folder
  if (ec) throw Error("cannot read cache folder " + quoted_path(root) + " (at " + quoted_path(at) + "): " + ec.message());
  std::sort(found.begin(), found.end());
  return found;
}

// What a file the list does not name is: its group in `s`.
void classify(FolderStatus& s, const std::vector<std::string>& added) {
  std::map<std::string, std::vector<std::string>> kernels;  // folder -> its file names
  for (const std::string& rel : added) {
    std::string folder(manifest::kernel_folder_of(s.dir.kind, rel));  // the one statement of the layout
    if (!folder.empty()) {
      kernels[folder].push_back(rel.substr(folder.size() + 1));
    } else if (s.dir.kind == manifest::ComponentKind::inductor && rel.starts_with("fxgraph/")) {
      s.fx_graphs.push_back(rel);
    } else if (s.dir.kind == manifest::ComponentKind::inductor && rel.ends_with(".best_config")) {
      s.autotune.push_back(rel);
    } else {
      s.other.push_back(rel);
    }
  }
  for (const auto& [folder, files] : kernels) s.kernels.push_back({kernel_name(files, folder), folder});
  std::sort(s.kernels.begin(), s.kernels.end(),
            [](const AddedKernel& a, const AddedKernel& b) { return a.name != b.name ? a.name < b.name : a.folder < b.folder; });
}

// Whether the file at `path` has the list's size and SHA-256.
bool same_bytes(const fs::path& path, const manifest::RestoredEntry& e) {
  // Non-blocking: a FIFO or a device put in a restored file's place is a modified file, not a hang in open().
  // defence: status-nonblocking-open
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  struct stat st {};
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  if (static_cast<std::uint64_t>(st.st_size) != e.size) return false;
  Sha256 h;
  std::vector<char> buf(1 << 20);
  for (off_t at = 0;;) {
    std::size_t got = pread_full(fd.get(), buf.data(), buf.size(), at, quoted_path(path));
    h.update(buf.data(), got);
    at += static_cast<off_t>(got);
    if (got < buf.size()) break;
  }
  return h.finish() == e.sha256;
}

}  // namespace

std::string_view to_string(FolderState state) {
  switch (state) {
    case FolderState::restored:
      return "restored";
    case FolderState::no_entry_list:
      return "no_entry_list";
    case FolderState::not_restored:
      return "not_restored";
    case FolderState::absent:
      return "absent";
  }
  return "absent";
}

FolderStatus folder_status(const manifest::CacheDir& dir, const StatusOptions& options) {
  FolderStatus s;
  s.dir = dir;
  std::error_code ec;
  if (!fs::is_directory(dir.dir, ec)) return s;
  s.state = FolderState::not_restored;
  s.marker = manifest::Marker::read(dir.dir);
  if (!s.marker) return s;
  std::optional<manifest::RestoredEntries> list = manifest::RestoredEntries::read(dir.dir, s.marker->archive_manifest_sha256);
  if (!list) {
    s.state = FolderState::no_entry_list;
    return s;
  }
  s.state = FolderState::restored;
  s.archive_files = list->entries.size();
  std::vector<std::string> added;
  std::unordered_set<std::string_view> present;
  for (const std::string& rel : walk(dir.dir)) {
    auto it = list->entries.find(rel);
    if (it == list->entries.end()) {
      added.push_back(rel);
      continue;
    }
    present.insert(it->first);
    if (!options.verify || it->second.type != manifest::EntryType::file) continue;
    if (it->second.rewritable) {
      ++s.unverified;  // rewritten for this folder by the restore (relocation): its bytes need not be the archive's
    } else if (!same_bytes(dir.dir / rel, it->second)) {
      s.modified.push_back(rel);
    }
  }
  for (const auto& [rel, e] : list->entries) {
    if (!present.contains(rel)) s.missing.push_back(rel);
  }
  std::sort(s.missing.begin(), s.missing.end());
  std::sort(s.modified.begin(), s.modified.end());
  s.verified = options.verify;
  classify(s, added);
  return s;
}

}  // namespace ccpack::unpack
