// The stages of `create --since-restore`, in the order pack/since_restore.hpp gives.
#include "pack/since_restore.hpp"

#include <memory>
#include <unordered_map>

#include "manifest/marker.hpp"
#include "manifest/restored_entries.hpp"
#include "pack/filesystem_source.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace ccpack::pack {
namespace {

using Lists = std::unordered_map<std::string, manifest::RestoredEntries>;  // by component name

[[noreturn]] void not_restored(const manifest::CacheDir& d, const std::string& why) {
  throw Error(d.name + " cache folder " + quoted_path(d.dir) + " " + why +
                  "; create --since-restore packs what a folder gained since `ccpack restore` filled it",
              ExitCode::not_restored);
}

// Every folder's entry list, all from one archive, whose manifest digest goes into `digest`.
Lists read_lists(const std::vector<manifest::CacheDir>& dirs, std::string& digest) {
  Lists lists;
  for (const manifest::CacheDir& d : dirs) {
    std::optional<manifest::Marker> marker = manifest::Marker::read(d.dir);
    if (!marker) not_restored(d, "holds no restore marker ccpack can read (it was not restored by ccpack)");
    if (!digest.empty() && marker->archive_manifest_sha256 != digest) {
      not_restored(d, "was restored from archive " + marker->archive_manifest_sha256.substr(0, 12) + ", another folder from " +
                          digest.substr(0, 12) + " (a delta has one base)");
    }
    digest = marker->archive_manifest_sha256;
    std::optional<manifest::RestoredEntries> list = manifest::RestoredEntries::read(d.dir, digest);
    if (!list) not_restored(d, "has no readable entry list of its restore (restored by an older ccpack? restore it again)");
    lists.emplace(d.name, std::move(*list));
  }
  return lists;
}

}  // namespace

SinceRestoreResult create_since_restore(CreateRequest request) {
  SinceRestoreResult result;
  auto lists = std::make_shared<Lists>(read_lists(request.dirs, result.base_manifest_sha256));
  for (const auto& [name, list] : *lists) result.base_entries += list.entries.size();
  request.pack.records.delta = manifest::DeltaRecord{result.base_manifest_sha256};
  // Kept: what the folder's list does not hold. The list is by path below the folder; the scan's by archive path.
  auto keep = [lists](const std::string& path) {
    std::string_view component = manifest::component_of(path);
    auto list = lists->find(std::string(component));
    return list == lists->end() || !list->second.entries.contains(std::string(manifest::relative_of(path)));
  };
  request.write = [keep](const std::vector<manifest::CacheDir>& dirs, const std::filesystem::path& output,
                         const PackOptions& po) {
    FilesystemSource source(dirs, keep);
    return create_archive(source, output, po);
  };
  result.created = create(request);
  return result;
}

}  // namespace ccpack::pack
