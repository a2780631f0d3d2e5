#include "unpack/archive.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include "util/error.hpp"

namespace ccpack::unpack {
namespace {

// Parses the signature block, runs the gate (the trust check), then parses and checks the manifest against the
// header; sets a.signatures, a.manifest and a.manifest_digest. The gate runs before the manifest parser.
void check_header(Archive& a, const Archive::HeaderGate& gate) {
  const std::filesystem::path& path = a.path;
  try {
    a.signatures = manifest::parse_signature_block(a.header.signatures);
  } catch (const IntegrityError& e) {
    throw IntegrityError(quoted_path(path) + ": " + e.what());
  }
  if (gate) gate(path, a.header, a.signatures);
  try {
    a.manifest = manifest::Manifest::parse(a.header.manifest);
  } catch (const IntegrityError& e) {
    throw IntegrityError(quoted_path(path) + ": " + e.what());
  }
  if (a.manifest.payload_size() != a.header.payload_size) {
    throw IntegrityError(quoted_path(path) + ": manifest frames cover " + std::to_string(a.manifest.payload_size()) +
                         " payload bytes, header says " + std::to_string(a.header.payload_size));
  }
  if (a.manifest.compression.codec != "zstd" || a.manifest.compression.window_log > manifest::kMaxWindowLog) {
    throw IntegrityError(quoted_path(path) + ": manifest field 'compression' names an unsupported codec or window");
  }
  a.manifest_digest = Sha256::of(a.header.manifest);
}

}  // namespace

Archive Archive::open(const std::filesystem::path& path, const HeaderGate& gate) {
  Archive a;
  a.path = path;
  a.fd.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!a.fd.valid()) throw_errno("cannot open archive " + quoted_path(path));
  struct stat st {};
  if (::fstat(a.fd.get(), &st) == 0 && !S_ISREG(st.st_mode))
    throw Error("archive " + quoted_path(path) + " is not a regular file");
  a.header = manifest::read_header(a.fd.get(), path);
  check_header(a, gate);
  return a;
}

Archive Archive::from_header(const std::string& name, manifest::ArchiveHeader header, std::shared_ptr<PayloadSource> payload,
                             const HeaderGate& gate) {
  Archive a;
  a.path = name;
  a.header = std::move(header);
  a.payload = std::move(payload);
  check_header(a, gate);
  return a;
}

std::size_t Archive::read_payload(void* data, std::size_t size, std::uint64_t offset) const {
  if (payload) return payload->read(data, size, offset);
  return pread_full(fd.get(), data, size, static_cast<off_t>(offset), quoted_path(path));
}

}  // namespace ccpack::unpack
