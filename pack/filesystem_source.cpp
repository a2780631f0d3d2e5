// Reading cache files that a live torch.compile may still be writing, without ever packing a torn file.
//
// The scan's lstat is each file's "before" state (size, mtime, ctime, inode). A small file is read whole with
// one extra byte requested, then fstat'ed: it must match the "before" state and the extra byte must not exist.
// Otherwise it changed: it is read again against its new state, a few times, then refused by name. A large file
// is read in pieces, each checked against the "before" state, and checked once more after its last piece.
// Timestamps advance in coarse ticks, so a file changed very recently ("racy") is also proven by content.
// The packer hands a batch's small files over together (read_listed): the same open, read and stat, through one
// io_uring submission for many files (util/file_batch.hpp); what that does not prove goes through read_file.
#include "pack/filesystem_source.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <optional>

#include "manifest/cache_dir.hpp"
#include "pack/layout.hpp"
#include "util/error.hpp"
#include "util/file_batch.hpp"
#include "util/fs.hpp"

namespace ccpack::pack {
namespace fs = std::filesystem;

namespace {

constexpr int kReadAttempts = 5;

// The one error for a file that will not hold still while create reads it; `how` says what was seen.
[[noreturn]] void throw_changed(const fs::path& source, const char* how) {
  throw Error("file " + quoted_path(source) + " " + how + "; stop the writer (torch.compile) and run create again");
}

// One file of the scan: its path on disk, its stamp and its listed size (the size lives in the entry list).
struct FileRef {
  std::string source;  // path on disk
  FileStamp& stamp;
  std::uint64_t size;
  const std::vector<std::uint64_t>& devices;  // what the stamps' device numbers stand for
};

// O_NONBLOCK: a FIFO put where a file was scanned opens at once (and its read fails) instead of waiting for a
// writer; a regular file reads the same.
constexpr int kOpenFlags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;

UniqueFd open_source(const FileRef& e) {
  UniqueFd fd(::open(e.source.c_str(), kOpenFlags));
  if (!fd.valid()) throw_errno("cannot read " + quoted_path(e.source));
  return fd;
}

bool matches(const FileRef& e, const struct stat& st) {
  auto dev = std::find(e.devices.begin(), e.devices.end(), static_cast<std::uint64_t>(st.st_dev));
  return S_ISREG(st.st_mode) && dev != e.devices.end() &&
         e.stamp.matches(st, static_cast<std::uint32_t>(dev - e.devices.begin())) &&
         static_cast<std::uint64_t>(st.st_size) == e.size;
}

// Timestamps advance in coarse ticks (a few milliseconds), so a write in the same tick as the stat before a read
// leaves mtime and ctime as they were: metadata alone cannot prove a file did not change while it was read. As git
// does for its index, a file whose ctime is that recent ("racy") is proven stable by content instead: it is read
// a second time and must hash the same. Caches are written seconds to hours before create, so this is rare.
std::atomic<int> g_racy_window{2};  // seconds (testing::set_racy_window)

bool is_racy(const struct stat& st) {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return st.st_ctim.tv_sec + g_racy_window.load(std::memory_order_relaxed) >= now.tv_sec;
}

// SHA-256 of the file's content read again from offset 0; nullopt when it is not `size` bytes long.
std::optional<Digest> hash_again(int fd, std::uint64_t size, const fs::path& source) {
  std::vector<char> buf(std::min<std::uint64_t>(size, 8 << 20) + 1);
  Sha256 h;
  std::uint64_t at = 0;
  for (;;) {
    std::size_t n = pread_full(fd, buf.data(), buf.size(), static_cast<off_t>(at), quoted_path(source));
    at += n;
    if (at > size) return std::nullopt;
    h.update(buf.data(), n);
    if (n < buf.size()) break;
  }
  if (at != size) return std::nullopt;
  return h.finish();
}

// Reads up to size + 1 bytes from offset 0 into `data` (size bytes) and `extra` (1 byte); returns the count.
std::size_t read_with_extra(int fd, char* data, std::uint64_t size, const fs::path& source) {
  char extra[1];
  iovec parts[2] = {{data, size}, {extra, 1}};
  std::size_t got = 0;
  for (;;) {
    ssize_t n = ::preadv(fd, parts, 2, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_errno("cannot read " + quoted_path(source));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
    // A regular file's read stops short of what was asked only at its end: `size` bytes then mean the extra byte
    // did not exist, and asking again would be one more system call per file for the 0 it returns.
    if (got >= size) break;
    parts[0] = {data + got, size - got};
  }
  return got;
}

// A racy file read whole (is_racy) proven again as read_file proves it: opened once more, the same file by its
// stamp before and after, and the same SHA-256 when read again.
bool proven_again(const FileRef& e, const Digest& digest) {
  UniqueFd fd(::open(e.source.c_str(), kOpenFlags));
  struct stat st {};
  return fd.valid() && ::fstat(fd.get(), &st) == 0 && matches(e, st) && hash_again(fd.get(), e.size, e.source) == digest &&
         ::fstat(fd.get(), &st) == 0 && matches(e, st);
}

}  // namespace

std::vector<manifest::Component> FilesystemSource::components() const {
  std::vector<manifest::Component> out;
  // The folder as the manifest records it: the one rule of manifest::normal_folder (no trailing slash).
  for (const manifest::CacheDir& d : dirs_) out.push_back({d.name, d.kind, manifest::normal_folder(d.dir).string(), 0, 0});
  return out;
}

// The same four steps as read_file, for a batch's small files at once (util/file_batch.hpp). Proven in order, up
// to the first file that is not (changed since the scan, unreadable, or no io_uring): the packer reads that one
// and the rest through read_file, which retries and names what went wrong, so none of them is marked read here.
void FilesystemSource::read_listed(std::span<ListedFile> files) {
  std::vector<std::string> paths(files.size());
  std::vector<FileRead> reads(files.size());
  for (std::size_t k = 0; k < files.size(); ++k) {
    paths[k] = source_path(dirs_, scanned_.entries.path(files[k].entry));
    reads[k] = FileRead{paths[k].c_str(), files[k].data, scanned_.entries.file_size(files[k].entry)};
  }
  if (!FileBatch::read_files(reads)) return;
  for (std::size_t k = 0; k < files.size(); ++k) {
    std::size_t i = files[k].entry;
    const FileRef e{std::move(paths[k]), scanned_.stamps[i], reads[k].size, scanned_.devices};
    // defence: create-batch-unchanged
    if (reads[k].error != 0 || reads[k].got != e.size || !matches(e, reads[k].after)) return;
    Digest digest = Sha256::of(files[k].data, e.size);
    if (is_racy(reads[k].after) && !proven_again(e, digest)) return;
    files[k].digest = digest;
    finished(i);
  }
}

// A small file in four system calls (open, one read of size + 1 bytes, fstat, close); see the top of the file.
Digest FilesystemSource::read_file(std::size_t i, FileSlot& slot) {
  FileRef e{source_path(dirs_, scanned_.entries.path(i)), scanned_.stamps[i], scanned_.entries.file_size(i), scanned_.devices};
  for (int attempt = 0; attempt < kReadAttempts; ++attempt) {
    UniqueFd fd = open_source(e);
    std::uint64_t size = e.size;
    char* data = slot.data(size);
    std::size_t got = read_with_extra(fd.get(), data, size, e.source);
    struct stat after {};
    if (::fstat(fd.get(), &after) != 0) throw_errno("cannot stat " + quoted_path(e.source));
    if (got == size && matches(e, after)) {
      Digest digest = Sha256::of(data, size);
      if (!is_racy(after) ||
          (hash_again(fd.get(), size, e.source) == digest && ::fstat(fd.get(), &after) == 0 && matches(e, after))) {
        finished(i);
        return digest;
      }
    }
    if (!S_ISREG(after.st_mode)) throw Error(quoted_path(e.source) + " stopped being a regular file while packing");
    // Changed since the scan or while read: try again against its new state.
    e.stamp = stamp_of(after, nullptr);
    auto dev = std::find(e.devices.begin(), e.devices.end(), static_cast<std::uint64_t>(after.st_dev));
    e.stamp.dev = dev == e.devices.end() ? UINT32_MAX : static_cast<std::uint32_t>(dev - e.devices.begin());
    e.size = static_cast<std::uint64_t>(after.st_size);
    scanned_.entries.set_file_size(i, e.size);
    slot.discard();
  }
  throw_changed(e.source, "kept changing while being read");
}

void FilesystemSource::read_piece(std::size_t i, std::uint64_t offset, std::uint64_t length, char* out) {
  const FileRef e{source_path(dirs_, scanned_.entries.path(i)), scanned_.stamps[i], scanned_.entries.file_size(i),
                  scanned_.devices};
  UniqueFd fd = open_source(e);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw_errno("cannot stat " + quoted_path(e.source));
  if (!matches(e, st)) throw_changed(e.source, "changed while being packed");
  if (pread_full(fd.get(), out, length, static_cast<off_t>(offset), quoted_path(e.source)) != length) {
    throw_changed(e.source, "shrank while being packed");
  }
}

// All pieces are read: the file must still be the one they came from, and a racy one must hash the same when
// read again.
void FilesystemSource::check_pieces(std::size_t i, const Digest& digest) {
  const FileRef e{source_path(dirs_, scanned_.entries.path(i)), scanned_.stamps[i], scanned_.entries.file_size(i),
                  scanned_.devices};
  UniqueFd fd = open_source(e);
  struct stat after {};
  if (::fstat(fd.get(), &after) != 0) throw_errno("cannot stat " + quoted_path(e.source));
  if (!matches(e, after) || (is_racy(after) && hash_again(fd.get(), e.size, e.source) != digest)) {
    throw_changed(e.source, "changed while being packed");
  }
  finished(i);
}

namespace {

// Stamps are released a chunk at a time, once every file in the chunk is read: create reads files roughly in
// archive order, so at a million files the stamps (28 bytes each) are gone in step with the packing rather than
// held beside the compressor's window until the end.
constexpr std::size_t kStampChunk = 4096;

}  // namespace

void FilesystemSource::open() {
  scanned_ = scan(dirs_);
  if (keep_) scanned_ = keep_only(scanned_, keep_);
  count_unread();
}

// The stamps move with their entries (a released chunk held no file's stamp), and are counted again.
void FilesystemSource::reorder(const std::vector<std::size_t>& order) {
  scanned_.entries = reordered(scanned_.entries, order);
  permute(scanned_.stamps, order);
  count_unread();
}

void FilesystemSource::count_unread() {
  const manifest::EntryList& list = scanned_.entries;
  std::size_t chunks = (list.size() + kStampChunk - 1) / kStampChunk;
  unread_ = std::make_unique<std::atomic<std::uint32_t>[]>(chunks);
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (list.type(i) == manifest::EntryType::file) unread_[i / kStampChunk].fetch_add(1, std::memory_order_relaxed);
  }
  for (std::size_t c = 0; c < chunks; ++c) {
    if (unread_[c].load(std::memory_order_relaxed) == 0) release_chunk(c);
  }
}

void FilesystemSource::finished(std::size_t i) {
  if (unread_[i / kStampChunk].fetch_sub(1, std::memory_order_acq_rel) == 1) release_chunk(i / kStampChunk);
}

// Gives the whole pages of a chunk of stamps back to the kernel (they read as zeros after; nothing reads them).
void FilesystemSource::release_chunk(std::size_t chunk) {
  const long page = ::sysconf(_SC_PAGESIZE);
  auto page_size = static_cast<std::uintptr_t>(page > 0 ? page : 4096);
  char* base = reinterpret_cast<char*>(scanned_.stamps.data());
  std::size_t end = std::min(scanned_.stamps.size(), (chunk + 1) * kStampChunk);
  auto from = reinterpret_cast<std::uintptr_t>(base + chunk * kStampChunk * sizeof(FileStamp));
  auto to = reinterpret_cast<std::uintptr_t>(base + end * sizeof(FileStamp));
  from = (from + page_size - 1) / page_size * page_size;
  to = to / page_size * page_size;
  if (to > from) (void)::madvise(base + (from - reinterpret_cast<std::uintptr_t>(base)), to - from, MADV_DONTNEED);
}

void testing::set_racy_window(int seconds) { g_racy_window.store(seconds, std::memory_order_relaxed); }

}  // namespace ccpack::pack
