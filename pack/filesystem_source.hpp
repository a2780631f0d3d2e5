// The cache folders on disk as an entry source, for `create`: the scanner lists them, and every file is proven
// to have held still while it was read (see filesystem_source.cpp).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <vector>

#include "manifest/cache_dir.hpp"
#include "pack/entry_source.hpp"
#include "util/file_batch.hpp"

namespace ccpack::pack {

class FilesystemSource final : public EntrySource {
 public:
  explicit FilesystemSource(std::vector<manifest::CacheDir> dirs) : dirs_(std::move(dirs)) {}
  // Only the files and symlinks whose archive path `keep` accepts, with the folders above them (scanner.hpp:
  // keep_only): `create --since-restore` (pack/since_restore.hpp).
  FilesystemSource(std::vector<manifest::CacheDir> dirs, std::function<bool(const std::string& path)> keep)
      : dirs_(std::move(dirs)), keep_(std::move(keep)) {}

  void open() override;
  [[nodiscard]] manifest::EntryList& entries() override { return scanned_.entries; }
  [[nodiscard]] std::filesystem::path source_of(std::size_t i) const override {
    return source_path(dirs_, scanned_.entries.path(i));
  }
  [[nodiscard]] std::vector<std::string> skipped() const override { return scanned_.skipped; }
  [[nodiscard]] std::vector<manifest::Component> components() const override;

  [[nodiscard]] bool reads_listed() const override { return FileBatch::available(); }
  void read_listed(std::span<ListedFile> files) override;
  [[nodiscard]] Digest read_file(std::size_t i, FileSlot& slot) override;
  void read_piece(std::size_t i, std::uint64_t offset, std::uint64_t length, char* out) override;
  void check_pieces(std::size_t i, const Digest& digest) override;
  void reorder(const std::vector<std::size_t>& order) override;

 private:
  // Counts the files of each chunk of stamps still to be read, and releases the chunks that hold none.
  void count_unread();
  // Entry i's stamp is needed until its file is read; then its part of the stamps can go (see finished()).
  void finished(std::size_t i);
  void release_chunk(std::size_t chunk);

  std::vector<manifest::CacheDir> dirs_;
  std::function<bool(const std::string& path)> keep_;  // empty: everything
  ScanResult scanned_;
  std::unique_ptr<std::atomic<std::uint32_t>[]> unread_;  // files not yet read, per chunk of stamps
};

namespace testing {
// How recent a file's ctime must be, in seconds, for it to count as racy (and be proven by a second read); a
// test sets -1 so that the metadata checks alone decide. Default 2.
void set_racy_window(int seconds);
}  // namespace testing

}  // namespace ccpack::pack
