// See foreign_reader.hpp. libarchive reads either the file itself (tar, zip, and the gzip, xz and zstd filters
// it detects), or, for zstd it cannot take, the output of ZstdPipe: ccpack's streaming decoder with a bounded
// window, behind libarchive's read callback.
#include "pack/foreign_reader.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include <vector>

#include "util/error.hpp"
#include "util/escape.hpp"
#include "util/fs.hpp"

namespace ccpack::pack {
namespace fs = std::filesystem;

namespace {

constexpr int kLibarchiveZstdWindowLog = ZSTD_WINDOWLOG_LIMIT_DEFAULT;  // libarchive's zstd filter keeps zstd's default
constexpr std::size_t kBlock = 1 << 20;

// Whether the file is zstd that libarchive's filter would refuse: a first frame that is skippable, or whose
// window is past the default limit. Reads the first bytes only.
bool needs_own_zstd(int fd) {
  unsigned char head[ZSTD_FRAMEHEADERSIZE_MAX];
  std::size_t n = pread_full(fd, reinterpret_cast<char*>(head), sizeof head, 0, "the foreign archive");
  ZSTD_frameHeader fh{};
  if (n < 4 || ZSTD_getFrameHeader(&fh, head, n) != 0) return false;  // not zstd, or too short: libarchive says
  return fh.frameType == ZSTD_skippableFrame || fh.windowSize > (1ULL << kLibarchiveZstdWindowLog);
}

// Decompresses a zstd file for libarchive's read callback, one block at a time.
class ZstdPipe {
 public:
  explicit ZstdPipe(int fd) : fd_(fd), dctx_(ZSTD_createDCtx()), in_(kBlock), out_(kBlock) {
    if (dctx_ == nullptr) throw Error("zstd: cannot create a decompression context");
    ZSTD_DCtx_setParameter(dctx_, ZSTD_d_windowLogMax, kMaxForeignWindowLog);
  }
  ~ZstdPipe() { ZSTD_freeDCtx(dctx_); }
  ZstdPipe(const ZstdPipe&) = delete;
  ZstdPipe& operator=(const ZstdPipe&) = delete;

  // The next decompressed block; empty at the end. Throws IntegrityError.
  std::size_t next(const void** data) {
    ZSTD_outBuffer out{out_.data(), out_.size(), 0};
    while (out.pos == 0) {
      if (in_pos_ == in_size_ && !eof_) {
        in_size_ = pread_full(fd_, in_.data(), in_.size(), static_cast<off_t>(offset_), "the foreign archive");
        offset_ += in_size_;
        in_pos_ = 0;
        eof_ = in_size_ == 0;
      }
      ZSTD_inBuffer in{in_.data(), in_size_, in_pos_};
      std::size_t rc = ZSTD_decompressStream(dctx_, &out, &in);
      if (in.pos != in_pos_ || out.pos != 0) frame_done_ = rc == 0;  // a call that did nothing says nothing new
      in_pos_ = in.pos;
      if (ZSTD_isError(rc)) {
        throw IntegrityError(std::string("the foreign archive's zstd stream cannot be decoded (window limit 2^") +
                             std::to_string(kMaxForeignWindowLog) + "): " + ZSTD_getErrorName(rc));
      }
      if (eof_ && out.pos == 0) {
        if (!frame_done_) throw IntegrityError("the foreign archive's zstd stream is truncated");
        break;
      }
    }
    *data = out_.data();
    return out.pos;
  }

 private:
  int fd_;
  ZSTD_DCtx* dctx_;
  std::vector<char> in_;
  std::vector<char> out_;
  std::size_t in_size_ = 0;
  std::size_t in_pos_ = 0;
  std::uint64_t offset_ = 0;
  bool eof_ = false;
  bool frame_done_ = false;  // the last frame seen ended (and was flushed)
};

ForeignEntry::Kind kind_of(archive_entry* e, std::string& name) {
  if (archive_entry_hardlink(e) != nullptr) return name = "hard link", ForeignEntry::Kind::hardlink;
  switch (archive_entry_filetype(e)) {
    case AE_IFREG:
      return name = "file", ForeignEntry::Kind::file;
    case AE_IFDIR:
      return name = "folder", ForeignEntry::Kind::dir;
    case AE_IFLNK:
      return name = "symlink", ForeignEntry::Kind::symlink;
    case AE_IFCHR:
      return name = "character device", ForeignEntry::Kind::other;
    case AE_IFBLK:
      return name = "block device", ForeignEntry::Kind::other;
    case AE_IFIFO:
      return name = "FIFO", ForeignEntry::Kind::other;
    case AE_IFSOCK:
      return name = "socket", ForeignEntry::Kind::other;
    default:
      return name = "entry of unknown type", ForeignEntry::Kind::other;
  }
}

}  // namespace

struct ForeignReader::State {
  State() = default;
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  ~State() {  // here, not in ~ForeignReader: a constructor that throws must free it too
    if (a != nullptr) archive_read_free(a);
  }

  fs::path file;
  UniqueFd fd;
  std::unique_ptr<ZstdPipe> pipe;
  archive* a = nullptr;
  std::uint64_t count = 0;

  [[noreturn]] void fail(const std::string& what) const {
    const char* why = archive_error_string(a);
    // libarchive's messages may quote bytes of the archive: escaped like every name from it.
    throw IntegrityError("foreign archive " + quoted_path(file) + ": " + what + (why ? ": " + escaped(why) : ""));
  }
  static la_ssize_t read_pipe(archive*, void* self, const void** data) {
    try {
      return static_cast<la_ssize_t>(static_cast<State*>(self)->pipe->next(data));
    } catch (const std::exception& e) {
      archive_set_error(static_cast<State*>(self)->a, EIO, "%s", e.what());
      return -1;
    }
  }
};

ForeignReader::ForeignReader(const fs::path& file) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.file = file;
  s.fd.reset(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
  if (!s.fd.valid()) throw_errno("cannot read " + quoted_path(file));
  struct stat st {};
  if (::fstat(s.fd.get(), &st) != 0) throw_errno("cannot stat " + quoted_path(file));
  if (!S_ISREG(st.st_mode)) throw Error(quoted_path(file) + " is not a file");
  s.a = archive_read_new();
  if (s.a == nullptr) throw Error("libarchive: out of memory");
  // Only these: see the top of foreign_reader.hpp.
  archive_read_support_format_tar(s.a);
  archive_read_support_format_zip(s.a);
  archive_read_support_filter_gzip(s.a);
  archive_read_support_filter_xz(s.a);
  archive_read_support_filter_zstd(s.a);
  int rc = ARCHIVE_OK;
  if (needs_own_zstd(s.fd.get())) {
    s.pipe = std::make_unique<ZstdPipe>(s.fd.get());
    rc = archive_read_open(s.a, &s, nullptr, &State::read_pipe, nullptr);
  } else {
    rc = archive_read_open_fd(s.a, s.fd.get(), kBlock);
  }
  if (rc != ARCHIVE_OK) s.fail("cannot be opened as tar or zip");
}

ForeignReader::~ForeignReader() = default;

bool ForeignReader::next(ForeignEntry& out) {
  State& s = *state_;
  archive_entry* e = nullptr;
  int rc = archive_read_next_header(s.a, &e);
  if (rc == ARCHIVE_EOF) return false;
  if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) {
    s.fail(s.count == 0 ? "not a tar or zip archive" : "entry " + std::to_string(s.count + 1) + " cannot be read");
  }
  ++s.count;
  const char* path = archive_entry_pathname(e);
  if (path == nullptr) s.fail("entry " + std::to_string(s.count) + " has no path");
  out.path = path;
  out.kind = kind_of(e, out.kind_name);
  out.mode = static_cast<std::uint32_t>(archive_entry_perm(e)) & 07777u;
  out.size = archive_entry_size_is_set(e) && archive_entry_size(e) > 0 ? static_cast<std::uint64_t>(archive_entry_size(e)) : 0;
  const char* link = out.kind == ForeignEntry::Kind::hardlink ? archive_entry_hardlink(e) : archive_entry_symlink(e);
  out.link_target = link != nullptr ? link : "";
  return true;
}

std::size_t ForeignReader::read(char* buf, std::size_t size) {
  la_ssize_t n = archive_read_data(state_->a, buf, size);
  if (n < 0) state_->fail("entry " + std::to_string(state_->count) + " cannot be read");
  return static_cast<std::size_t>(n);
}

std::string ForeignReader::describe() const {
  std::string text = archive_format_name(state_->a) ? archive_format_name(state_->a) : "archive";
  if (state_->pipe) return text + ", zstd (ccpack's decoder)";
  for (int i = archive_filter_count(state_->a) - 1; i >= 0; --i) {
    const char* f = archive_filter_name(state_->a, i);
    if (f != nullptr && std::string_view(f) != "none") text += std::string(", ") + f;
  }
  return text;
}

}  // namespace ccpack::pack
