#include "manifest/format.hpp"

#include <sys/mman.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <semaphore>
#include <thread>
#include <utility>

#include "util/big_buffer.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"

namespace ccpack::manifest {
namespace {

using L = HeaderLayout;

constexpr std::size_t kFixedBytes = L::manifest;  // up to and including the manifest length

void put_le_at(std::string& out, std::size_t at, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out[at + static_cast<std::size_t>(i)] = static_cast<char>(v >> (8 * i));
}
void put_u32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
std::uint64_t get_le(const char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(p[i]);
  return v;
}

// Sizes `out` to `size` bytes for pread to fill. A manifest at a million files is ~250 MB: with 4 KiB pages the
// first touch of the string (resize's zero fill) takes ~61,000 page faults, the top kernel cost of a no-op restore
// there; advising huge pages on its storage first cuts them 512-fold, where this process advises them at all
// (util/big_buffer.hpp says when).
void size_for_read(std::string& out, std::size_t size) {
  constexpr std::uintptr_t kHuge = 2u << 20;
  out.reserve(size);
  char* base = out.data();
  auto begin = reinterpret_cast<std::uintptr_t>(base);
  std::uintptr_t lo = (begin + kHuge - 1) & ~(kHuge - 1);
  std::uintptr_t hi = (begin + size) & ~(kHuge - 1);
  // The aligned start as an offset from the string's own pointer (no integer-to-pointer cast).
  if (hi > lo && huge_pages_advised()) (void)::madvise(base + (lo - begin), hi - lo, MADV_HUGEPAGE);  // best effort
  out.resize(size);
}

// The fixed part of the header frame as read from the file, and what read_header learns from it step by step.
struct HeaderReader {
  HeaderReader(int file, std::string quoted) : fd(file), name(std::move(quoted)) {}

  int fd;
  std::string name;  // the quoted path, for messages
  std::uint64_t file_size = 0;
  char fixed[kFixedBytes] = {};
  std::uint64_t frame_size = 0;
  std::uint64_t manifest_size = 0;
  ArchiveHeader h;

  // Magic first, on what is there: a short file that starts like ccpack is truncated, anything else is foreign.
  void read_fixed() {
    std::size_t got = pread_full(fd, fixed, sizeof fixed, 0, name);
    char expected[L::version] = {};
    std::memcpy(expected + L::skippable_magic, "\x5e\x2a\x4d\x18", 4);
    std::memcpy(expected + L::frame_size, fixed + L::frame_size, 4);  // any frame size matches here
    std::memcpy(expected + L::magic, kMagic, sizeof kMagic);
    if (std::memcmp(fixed, expected, std::min<std::size_t>(got, sizeof expected)) != 0 || got == 0) {
      throw IntegrityError(name + " is not a ccpack archive (bad magic)");
    }
    if (got != sizeof fixed) throw IntegrityError(name + " is truncated: too short for a ccpack header");
  }

  // Version, flags and the sizes; the frame must at least hold the manifest and the signature length.
  void decode_fixed_fields() {
    frame_size = get_le(fixed + L::frame_size, 4);
    h.version = static_cast<std::uint32_t>(get_le(fixed + L::version, 4));
    if (h.version != kFormatVersion) {
      throw IntegrityError(name + ": archive format version " + std::to_string(h.version) +
                           " is not supported (this ccpack reads " + std::to_string(kFormatVersion) + ")");
    }
    if (get_le(fixed + L::flags, 4) != 0) throw IntegrityError(name + ": header flags are set that this ccpack does not know");
    h.payload_size = get_le(fixed + L::payload_size, 8);
    manifest_size = get_le(fixed + L::manifest_size, 4);
    if (manifest_size > kMaxManifestBytes)
      throw IntegrityError(name + ": manifest size " + std::to_string(manifest_size) + " exceeds the limit");
    h.header_size = L::magic + frame_size;
    if (frame_size < kFixedBytes - L::magic + manifest_size + 4 || h.header_size > file_size) {
      throw IntegrityError(name + " is truncated: the header frame is incomplete");
    }
  }

  void read_manifest() {
    size_for_read(h.manifest, manifest_size);
    if (pread_full(fd, h.manifest.data(), manifest_size, kFixedBytes, name) != manifest_size) {
      throw IntegrityError(name + " is truncated inside the manifest");
    }
    h.manifest_sha256 = Sha256::of(h.manifest);  // the one hash of the manifest bytes a reader computes
    check_manifest_digest();
  }

  // The manifest through two small buffers, piece by piece to `sink` and the hash; nothing of it is kept. A
  // helper thread hashes each piece while this thread gives it to the sink and reads the next piece into the other
  // buffer (the read, the scan and the hash in turn would be most of a no-op restore; docs/PERFORMANCE.md).
  void stream_manifest(const ManifestSink& sink) {
    const std::size_t piece_size = std::min<std::uint64_t>(manifest_size, kManifestPiece);
    std::string pieces[2] = {std::string(piece_size, '\0'), std::string(piece_size, '\0')};
    Sha256 hash;
    std::binary_semaphore go{0};
    std::binary_semaphore hashed{0};
    const std::string* to_hash = nullptr;  // set before `go` is released; nullptr: stop
    std::jthread hasher([&] {
      while (true) {
        go.acquire();
        if (to_hash == nullptr) return;
        hash.update(*to_hash);
        hashed.release();
      }
    });
    auto stop = [&] {  // the hasher is idle whenever this runs
      to_hash = nullptr;
      go.release();
    };
    auto read_piece = [&](std::string& piece, std::uint64_t at) {
      piece.resize(std::min<std::uint64_t>(manifest_size - at, piece_size));
      if (pread_full(fd, piece.data(), piece.size(), static_cast<off_t>(kFixedBytes + at), name) != piece.size()) {
        throw IntegrityError(name + " is truncated inside the manifest");
      }
    };
    try {
      if (manifest_size > 0) read_piece(pieces[0], 0);
      for (std::uint64_t at = 0, k = 0; at < manifest_size; at += piece_size, ++k) {
        const std::string& piece = pieces[k % 2];
        to_hash = &piece;
        go.release();
        struct WaitHashed {
          std::binary_semaphore& s;
          ~WaitHashed() { s.acquire(); }  // no piece is refilled, nor the thread stopped, while one is hashed
        } wait{hashed};
        sink(piece);
        if (at + piece_size < manifest_size) read_piece(pieces[(k + 1) % 2], at + piece_size);
      }
    } catch (...) {
      stop();
      throw;
    }
    stop();
    hasher.join();
    h.manifest_sha256 = hash.finish();
    check_manifest_digest();
  }

  void check_manifest_digest() const {
    // defence: manifest-digest
    if (std::memcmp(h.manifest_sha256.data(), fixed + L::manifest_sha256, h.manifest_sha256.size()) != 0)
      throw IntegrityError(name + ": manifest SHA-256 mismatch (corrupt header)");
  }

  // The signature block must end exactly where the header frame does.
  void read_signatures() {
    char len4[4];
    if (pread_full(fd, len4, 4, static_cast<off_t>(kFixedBytes + manifest_size), name) != 4) {
      throw IntegrityError(name + " is truncated inside the header");
    }
    auto sig_size = get_le(len4, 4);
    if (sig_size > kMaxSignatureBytes || kFixedBytes - L::magic + manifest_size + 4 + sig_size != frame_size) {
      throw IntegrityError(name + ": signature block size does not match the header frame size");
    }
    h.signatures.resize(sig_size);
    if (pread_full(fd, h.signatures.data(), sig_size, static_cast<off_t>(kFixedBytes + manifest_size + 4), name) != sig_size) {
      throw IntegrityError(name + " is truncated inside the signature block");
    }
  }

  // Header plus payload must be the whole file: catches truncation and appended bytes before any decompression.
  void check_file_size() const {
    // header_size <= file_size here, so this difference cannot wrap; header_size + payload_size could.
    // defence: payload-size-overflow
    if (h.payload_size > UINT64_MAX - h.header_size) {
      throw IntegrityError(name + ": header field 'payload_size' is " + std::to_string(h.payload_size) +
                           ": the header and payload sizes overflow 64 bits");
    }
    if (h.header_size + h.payload_size != file_size) {
      if (h.header_size + h.payload_size > file_size) {
        throw IntegrityError(name + " is truncated: " + std::to_string(file_size) + " bytes, expected " +
                             std::to_string(h.header_size + h.payload_size));
      }
      throw IntegrityError(name + " has " + std::to_string(file_size - h.header_size - h.payload_size) +
                           " unexpected bytes after the payload");
    }
  }
};

}  // namespace

HeaderAround encode_header_around(const ArchiveHeader& header) {
  HeaderAround h{std::string(kFixedBytes, '\0'), {}};
  std::string& body = h.before;
  put_le_at(body, L::skippable_magic, kSkippableMagic, 4);
  std::memcpy(body.data() + L::magic, kMagic, sizeof kMagic);
  put_le_at(body, L::version, header.version, 4);
  put_le_at(body, L::flags, 0, 4);
  put_le_at(body, L::payload_size, header.payload_size, 8);
  Digest d = Sha256::of(header.manifest);
  std::memcpy(body.data() + L::manifest_sha256, d.data(), d.size());
  put_le_at(body, L::manifest_size, header.manifest.size(), 4);
  put_u32(h.after, static_cast<std::uint32_t>(header.signatures.size()));
  h.after += header.signatures;
  // bytes that follow the frame size field's end
  put_le_at(body, L::frame_size, body.size() + header.manifest.size() + h.after.size() - L::magic, 4);
  return h;
}

std::string encode_header(const ArchiveHeader& header) {
  HeaderAround h = encode_header_around(header);
  return h.before + header.manifest + h.after;
}

namespace {
enum class ManifestRead { keep, sink, recorded };

ArchiveHeader read_header_with(int fd, const std::filesystem::path& path, ManifestRead how, const ManifestSink& sink) {
  HeaderReader r(fd, quoted_path(path));
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw_errno("cannot stat " + r.name);
  r.file_size = static_cast<std::uint64_t>(st.st_size);
  r.read_fixed();
  r.decode_fixed_fields();
  if (how == ManifestRead::sink)
    r.stream_manifest(sink);
  else if (how == ManifestRead::keep)
    r.read_manifest();
  else
    std::memcpy(r.h.manifest_sha256.data(), r.fixed + L::manifest_sha256, r.h.manifest_sha256.size());
  r.read_signatures();
  r.check_file_size();
  return std::move(r.h);
}
}  // namespace

ArchiveHeader read_header(int fd, const std::filesystem::path& path, const ManifestSink& sink) {
  return read_header_with(fd, path, sink ? ManifestRead::sink : ManifestRead::keep, sink);
}

ArchiveHeader read_header_recorded_digest(int fd, const std::filesystem::path& path) {
  return read_header_with(fd, path, ManifestRead::recorded, {});
}

}  // namespace ccpack::manifest
