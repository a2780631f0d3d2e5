// The seam between "which entries, with which bytes" and "tar encode -> zstd frames -> manifest" (packer.cpp).
//
// An EntrySource lists the entries of an archive in archive order (SourceEntry: path, type, mode, size, link
// target) and hands the packer each file's bytes. The packer calls read_file and read_piece from several
// threads at once, for different entries; it never learns where the bytes come from. Two sources exist:
//   FilesystemSource (filesystem_source.hpp)  the cache folders on disk, for `create`: it proves every file held
//                                             still while it was read;
//   ImportSource (import_source.hpp)          a foreign tar/zip archive, for `import`: its files are spooled to
//                                             an unlinked scratch file first, so they can be read in any order.
// Both order their entries with the scanner's rule (pack/scanner.hpp), then the packer lays them out in frames
// (pack/layout.hpp) through reorder(), so the same folders give the same tar stream whichever source they come
// through.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "manifest/manifest.hpp"
#include "pack/scanner.hpp"
#include "util/sha256.hpp"

namespace ccpack::pack {

// Puts `v` in the order `order` gives (v[k] becomes the old v[order[k]]; `order` is a permutation) in place, one
// cycle at a time: no second copy of a million-entry list.
template <class T>
void permute(std::vector<T>& v, const std::vector<std::size_t>& order) {
  std::vector<bool> done(v.size(), false);
  for (std::size_t start = 0; start < v.size(); ++start) {
    if (done[start]) continue;
    T first = std::move(v[start]);
    std::size_t at = start;
    for (std::size_t from = order[at]; from != start; at = from, from = order[at]) {
      v[at] = std::move(v[from]);
      done[at] = true;
    }
    v[at] = std::move(first);
    done[at] = true;
  }
}

// Where one file's bytes go in the packer's batch. data(size) lays out the tar header for `size` bytes of data
// and returns where they go; discard() drops what data() laid out, so a source can read a changed file again.
class FileSlot {
 public:
  virtual char* data(std::uint64_t size) = 0;
  virtual void discard() = 0;

 protected:
  ~FileSlot() = default;
};

// One small file of a batch read by read_listed: entry `entry`, its listed size of bytes to go at `data`.
struct ListedFile {
  std::size_t entry = 0;
  char* data = nullptr;
  std::optional<Digest> digest;  // set by the source when it proved the bytes at `data`
};

class EntrySource {
 public:
  virtual ~EntrySource() = default;

  // Lists the entries; the packer calls it once, after the output file is open (a bad output path is reported
  // before any long work). Throws Error, IntegrityError for hostile input.
  virtual void open() = 0;
  // The entries in archive order, compact (manifest/entry_list.hpp): path, type, mode, size, link target.
  // read_file may update an entry's size (a file that changed since open); the packer fills in digests and
  // frames, and moves the list into the manifest once every file is read and derived_fingerprint has run.
  [[nodiscard]] virtual manifest::EntryList& entries() = 0;
  // Where entry `i` comes from, for messages.
  [[nodiscard]] virtual std::filesystem::path source_of(std::size_t i) const = 0;
  // Puts the entries in another archive order (pack/layout.hpp): entry k becomes the one that was entry order[k]
  // (folders keep their order, each before what is inside it). Called at most once, after open() and before any
  // read; the source reorders what it keeps per entry with them.
  virtual void reorder(const std::vector<std::size_t>& order) = 0;
  // Archive paths left out, each with its reason.
  [[nodiscard]] virtual std::vector<std::string> skipped() const = 0;
  // One per top-level folder, in archive order: name, kind and where it came from (files and bytes are counted
  // by the packer).
  [[nodiscard]] virtual std::vector<manifest::Component> components() const = 0;

  // What the entries themselves say about the machine that built them; the packer uses it when PackOptions
  // carries none. Called after the files are read.
  [[nodiscard]] virtual std::optional<manifest::Fingerprint> derived_fingerprint() const { return std::nullopt; }

  // Whether read_listed reads anything: the packer then lays out a batch at the listed sizes before reading it.
  [[nodiscard]] virtual bool reads_listed() const { return false; }
  // Reads small files together, each at its listed size into its `data`, and sets `digest` in order for each it
  // proves whole and unchanged, stopping at the first it cannot prove: the packer reads that file and those after
  // it through read_file (which also names what went wrong). Called from several threads at once, for different
  // entries.
  virtual void read_listed(std::span<ListedFile> files) { (void)files; }
  // Reads the whole of file entry `i` into slot.data(size); returns the SHA-256 of the bytes it put there.
  [[nodiscard]] virtual Digest read_file(std::size_t i, FileSlot& slot) = 0;
  // Reads bytes [offset, offset + length) of file entry `i` (a large file, read in pieces) into `out`.
  virtual void read_piece(std::size_t i, std::uint64_t offset, std::uint64_t length, char* out) = 0;
  // Called once all pieces of entry `i` are read in order, with the SHA-256 of all of them.
  virtual void check_pieces(std::size_t i, const Digest& digest) = 0;
};

}  // namespace ccpack::pack
