// An entry source that reads the files of some folders and records others as the build folders: the filesystem
// source (filesystem_source.hpp) with the components' `source` replaced. Settle and merge pack through it.
//
// `create --settle` packs the last settle run's scratch folders, but the archive must say where the cache was
// built as a plain create would: the folders the warm-up used, which `restore --at-build-paths` recreates and
// which docs and `inspect` show. So the components' `source` is the original folder, while the bytes come from
// the scratch folder. Relocation stays right: a restore rewrites a group file's paths from the folder each path
// itself names, and a pickle's from the folders its own strings name (unpack/relocate.hpp, pickle_paths.hpp),
// so files that name the scratch folder are moved to the pod's folder like those that name the original one.
#pragma once

#include <vector>

#include "manifest/cache_dir.hpp"
#include "pack/filesystem_source.hpp"

namespace ccpack::pack {

class RecordedSource final : public EntrySource {
 public:
  // `read_from[i]` is packed as component `recorded_as[i]` (same names, same order).
  RecordedSource(std::vector<manifest::CacheDir> read_from, std::vector<manifest::CacheDir> recorded_as)
      : files_(std::move(read_from)), recorded_as_(std::move(recorded_as)) {}

  void open() override { files_.open(); }
  [[nodiscard]] manifest::EntryList& entries() override { return files_.entries(); }
  [[nodiscard]] std::filesystem::path source_of(std::size_t i) const override { return files_.source_of(i); }
  void reorder(const std::vector<std::size_t>& order) override { files_.reorder(order); }
  [[nodiscard]] std::vector<std::string> skipped() const override { return files_.skipped(); }
  [[nodiscard]] std::vector<manifest::Component> components() const override;
  [[nodiscard]] std::optional<manifest::Fingerprint> derived_fingerprint() const override { return files_.derived_fingerprint(); }
  [[nodiscard]] bool reads_listed() const override { return files_.reads_listed(); }
  void read_listed(std::span<ListedFile> files) override { files_.read_listed(files); }
  [[nodiscard]] Digest read_file(std::size_t i, FileSlot& slot) override { return files_.read_file(i, slot); }
  void read_piece(std::size_t i, std::uint64_t offset, std::uint64_t length, char* out) override {
    files_.read_piece(i, offset, length, out);
  }
  void check_pieces(std::size_t i, const Digest& digest) override { files_.check_pieces(i, digest); }

 private:
  FilesystemSource files_;
  std::vector<manifest::CacheDir> recorded_as_;
};

}  // namespace ccpack::pack
