// A foreign archive of cache folders (tar, tar.gz, tar.xz, tar.zst, zip) as an entry source, for `ccpack import`:
// its top-level folders mapped to components, every entry checked by the rules a restore applies before any of
// its bytes is kept, and the entries put in create's order, so the result is the same tar stream and entry list
// as `create` on the folders extracted by hand. How each step works: at ImportOptions::maps (the mapping),
// ImportSource::open (the rules) and ImportSource::reorder (the order and the spool).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "manifest/manifest.hpp"
#include "pack/entry_source.hpp"
#include "util/fs.hpp"

namespace ccpack::pack {

struct ForeignEntry;

struct ImportOptions {
  std::filesystem::path foreign;
  // --map PATH=COMPONENT, in order. Folders are mapped by these first, then by name at any depth (the first path
  // part that is `inductor_cache` or `torchinductor_*` -> inductor, `triton_cache` -> triton), so
  // `workspace/inductor_cache/...` from `tar -C / -c workspace/...` maps too. An entry outside every mapped folder
  // is refused (exit 2), except the folders above them.
  std::vector<std::pair<std::string, std::string>> maps;
  std::filesystem::path spool_dir;  // where the scratch file goes (the output's folder)
  manifest::Limits limits;
};

class ImportSource final : public EntrySource {
 public:
  explicit ImportSource(ImportOptions options) : options_(std::move(options)) {}

  // Reads the foreign archive. Every entry passes the rules a restore applies, before any of its bytes is kept
  // (IntegrityError, exit 4, naming the entry escaped): no absolute path, no "." or ".." part, no empty part, no
  // duplicate, no device, FIFO or socket, no setuid/setgid/sticky bit, no symlink leading out of its folder,
  // nothing inside a non-folder, sizes and counts within manifest::Limits. Hard links become copies of the file
  // they name; transient names are skipped as create skips them (pack/scanner.hpp). File contents are spooled
  // to an unlinked scratch file (O_TMPFILE beside the output) with their offsets; memory holds the entry list
  // only, the bytes are bounded by disk. Folders missing from the foreign archive (zip often has none) are added
  // with mode 0755.
  void open() override;
  [[nodiscard]] manifest::EntryList& entries() override { return list_; }
  [[nodiscard]] std::filesystem::path source_of(std::size_t i) const override { return entries_[i].source; }
  [[nodiscard]] std::vector<std::string> skipped() const override { return skipped_; }
  [[nodiscard]] std::vector<manifest::Component> components() const override { return components_; }

  [[nodiscard]] Digest read_file(std::size_t i, FileSlot& slot) override;
  void read_piece(std::size_t i, std::uint64_t offset, std::uint64_t length, char* out) override;
  void check_pieces(std::size_t, const Digest&) override {}  // spooled bytes cannot change
  // The foreign order is arbitrary; create's is "folders first, large files first", and the spooled bytes are
  // read back in that order.
  void reorder(const std::vector<std::size_t>& order) override;

  // "POSIX pax interchange format, zstd" and the like (after open).
  [[nodiscard]] const std::string& format() const { return format_; }
  // What the cache itself says about where it was built (after open): the Triton targets and versions found in
  // its kernels' metadata, marked "derived". Used as the fingerprint when none is given.
  [[nodiscard]] std::optional<manifest::Fingerprint> derived_fingerprint() const override;

 private:
  struct Listing;
  bool skip_transient(const std::string& mapped, bool is_dir, Listing& l);
  void add(const ForeignEntry& f, std::string path, Listing& l);
  void complete_folders(std::map<std::string, std::size_t>& index);
  void put_in_order(const std::unordered_map<std::string, std::uint64_t>& spool_at);

  ImportOptions options_;
  UniqueFd spool_;
  std::vector<SourceEntry> entries_;
  manifest::EntryList list_;            // entries_ for the packer
  std::vector<std::uint64_t> offsets_;  // per entry: where its bytes start in the spool (files)
  std::vector<std::string> skipped_;
  std::vector<manifest::Component> components_;
  std::string format_;
};

// Parses "PATH=COMPONENT"; throws UsageError naming the value.
[[nodiscard]] std::pair<std::string, std::string> parse_map(const std::string& spec);

struct LibraryVersion {
  std::string built;  // the headers ccpack was compiled with
  std::string runs;   // the library loaded at run time
};

[[nodiscard]] LibraryVersion libarchive_version();

}  // namespace ccpack::pack
