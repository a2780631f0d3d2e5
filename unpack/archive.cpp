#include "unpack/archive.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include "util/error.hpp"

namespace ccpack::unpack {

Archive Archive::open(const std::filesystem::path& path, const HeaderGate& gate) {
  Archive a;
  a.path = path;
  a.fd.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!a.fd.valid()) throw_errno("cannot open archive " + quoted_path(path));
  struct stat st {};
  if (::fstat(a.fd.get(), &st) == 0 && !S_ISREG(st.st_mode))
    throw Error("archive " + quoted_path(path) + " is not a regular file");
  a.header = manifest::read_header(a.fd.get(), path);
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
  return a;
}

}  // namespace ccpack::unpack
