#include "manifest/format.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>

#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"

namespace ccpack::manifest {
namespace {

constexpr std::size_t kFixedBytes = 8 + 8 + 4 + 4 + 8 + 32 + 4;  // up to and including the manifest length

void put_u32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
std::uint64_t get_le(const char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(p[i]);
  return v;
}

}  // namespace

std::string encode_header(const ArchiveHeader& header) {
  std::string body;
  body.reserve(8 + kFixedBytes + header.manifest.size() + 4 + header.signatures.size());
  put_u32(body, kSkippableMagic);
  put_u32(body, 0);  // frame size, set below
  body.append(kMagic, sizeof kMagic);
  put_u32(body, header.version);
  put_u32(body, 0);
  put_u64(body, header.payload_size);
  Digest d = Sha256::of(header.manifest);
  body.append(reinterpret_cast<const char*>(d.data()), d.size());
  put_u32(body, static_cast<std::uint32_t>(header.manifest.size()));
  body += header.manifest;
  put_u32(body, static_cast<std::uint32_t>(header.signatures.size()));
  body += header.signatures;
  auto frame_size = static_cast<std::uint32_t>(body.size() - 8);
  for (int i = 0; i < 4; ++i) body[4 + i] = static_cast<char>(frame_size >> (8 * i));
  return body;
}

ArchiveHeader read_header(int fd, const std::filesystem::path& path) {
  const std::string name = quoted_path(path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw_errno("cannot stat " + name);
  auto file_size = static_cast<std::uint64_t>(st.st_size);
  char fixed[kFixedBytes] = {};
  std::size_t got = pread_full(fd, fixed, sizeof fixed, 0, name);
  // Magic first, on what is there: a short file that starts like ccpack is truncated, anything else is foreign.
  char expected[16] = {};
  std::memcpy(expected, "\x5e\x2a\x4d\x18", 4);
  std::memcpy(expected + 4, fixed + 4, 4);
  std::memcpy(expected + 8, kMagic, sizeof kMagic);
  if (std::memcmp(fixed, expected, std::min<std::size_t>(got, sizeof expected)) != 0 || got == 0) {
    throw IntegrityError(name + " is not a ccpack archive (bad magic)");
  }
  if (got != sizeof fixed) throw IntegrityError(name + " is truncated: too short for a ccpack header");
  ArchiveHeader h;
  auto frame_size = get_le(fixed + 4, 4);
  h.version = static_cast<std::uint32_t>(get_le(fixed + 16, 4));
  if (h.version != kFormatVersion) {
    throw IntegrityError(name + ": archive format version " + std::to_string(h.version) +
                         " is not supported (this ccpack reads " + std::to_string(kFormatVersion) + ")");
  }
  if (get_le(fixed + 20, 4) != 0) throw IntegrityError(name + ": header flags are set that this ccpack does not know");
  h.payload_size = get_le(fixed + 24, 8);
  auto manifest_size = get_le(fixed + 64, 4);
  if (manifest_size > kMaxManifestBytes)
    throw IntegrityError(name + ": manifest size " + std::to_string(manifest_size) + " exceeds the limit");
  h.header_size = 8 + frame_size;
  if (frame_size < kFixedBytes - 8 + manifest_size + 4 || h.header_size > file_size) {
    throw IntegrityError(name + " is truncated: the header frame is incomplete");
  }
  h.manifest.resize(manifest_size);
  if (pread_full(fd, h.manifest.data(), manifest_size, kFixedBytes, name) != manifest_size) {
    throw IntegrityError(name + " is truncated inside the manifest");
  }
  Digest d = Sha256::of(h.manifest);
  if (std::memcmp(d.data(), fixed + 32, d.size()) != 0)
    throw IntegrityError(name + ": manifest SHA-256 mismatch (corrupt header)");
  char len4[4];
  if (pread_full(fd, len4, 4, static_cast<off_t>(kFixedBytes + manifest_size), name) != 4) {
    throw IntegrityError(name + " is truncated inside the header");
  }
  auto sig_size = get_le(len4, 4);
  if (sig_size > kMaxSignatureBytes || kFixedBytes - 8 + manifest_size + 4 + sig_size != frame_size) {
    throw IntegrityError(name + ": signature block size does not match the header frame size");
  }
  h.signatures.resize(sig_size);
  if (pread_full(fd, h.signatures.data(), sig_size, static_cast<off_t>(kFixedBytes + manifest_size + 4), name) != sig_size) {
    throw IntegrityError(name + " is truncated inside the signature block");
  }
  // header_size <= file_size here, so this difference cannot wrap; header_size + payload_size could.
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
  return h;
}

}  // namespace ccpack::manifest
