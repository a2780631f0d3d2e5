// A delta relocated to the base's build folders (delta_folders.hpp).
#include "converge/delta_folders.hpp"

#include <fcntl.h>

#include <algorithm>
#include <vector>

#include "util/error.hpp"
#include "util/fs.hpp"

namespace ccpack::converge {
namespace fs = std::filesystem;

namespace {

Digest file_sha256(const fs::path& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd.valid()) throw_errno("cannot open " + quoted_path(path));
  Sha256 h;
  std::vector<char> buf(1u << 20);
  off_t at = 0;
  for (;;) {
    std::size_t n = pread_full(fd.get(), buf.data(), buf.size(), at, quoted_path(path));
    h.update(buf.data(), n);
    if (n < buf.size()) break;
    at += static_cast<off_t>(n);
  }
  return h.finish();
}

}  // namespace

DeltaFolders::DeltaFolders(const manifest::Manifest& delta, const std::vector<manifest::CacheDir>& build) : delta_(&delta) {
  for (std::size_t i = 0; i < delta.components.size(); ++i) {
    const std::string& name = delta.components[i].name;
    auto it = std::find_if(build.begin(), build.end(), [&name](const manifest::CacheDir& d) { return d.name == name; });
    relocators_.push_back(it == build.end() ? nullptr : std::make_unique<unpack::PathRelocator>(delta, i, it->dir));
  }
}

unpack::PathRelocator* DeltaFolders::relocator(std::string_view name) const {
  for (std::size_t i = 0; i < relocators_.size(); ++i) {
    if (delta_->components[i].name == name) return relocators_[i].get();
  }
  return nullptr;
}

Digest DeltaFolders::identity(std::size_t entry, const fs::path& root) const {
  const manifest::EntryList& entries = delta_->entries;
  if (entries.type(entry) != manifest::EntryType::file) return entries.sha256(entry);
  unpack::PathRelocator* r = relocator(entries.component(entry));
  if (r == nullptr || !r->handles(entry)) return entries.sha256(entry);
  return file_sha256(root / entries.path(entry));
}

unpack::RelocationStats DeltaFolders::stats() const {
  unpack::RelocationStats all;
  for (const auto& r : relocators_) {
    if (r) all += r->stats();
  }
  return all;
}

}  // namespace ccpack::converge
