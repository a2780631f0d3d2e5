#include "unpack/archive.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <optional>

#include "manifest/top_level.hpp"
#include "util/error.hpp"

namespace ccpack::unpack {
namespace {

// Stage 1: parses the signature block, runs the gate (the trust check), then reads the manifest's top-level
// fields, from the text or, when it was streamed, from `scan`, or from the markers' copy (`marked`); sets
// a.signatures and a.manifest. The gate runs before the manifest parser (the scan copies bytes and interprets none).
void check_header(Archive& a, const Archive::HeaderGate& gate, manifest::TopLevelScan* scan = nullptr,
                  const std::string* marked = nullptr) {
  const std::filesystem::path& path = a.path;
  try {
    a.signatures = manifest::parse_signature_block(a.header.signatures);
  } catch (const IntegrityError& e) {
    throw IntegrityError(quoted_path(path) + ": " + e.what());
  }
  if (gate) gate(path, a.header, a.signatures);
  try {
    a.manifest = scan     ? scan->finish([&a] { return a.read_manifest_again(); })
                 : marked ? manifest::Manifest::parse_top_level(*marked)
                          : manifest::Manifest::parse_top_level(a.header.manifest);
  } catch (const IntegrityError& e) {
    throw IntegrityError(quoted_path(path) + ": " + e.what());
  }
  if (a.manifest.compression.codec != "zstd" || a.manifest.compression.window_log > manifest::kMaxWindowLog) {
    throw IntegrityError(quoted_path(path) + ": manifest field 'compression' names an unsupported codec or window");
  }
}

// The header of the file the markers name, unchanged (manifest/marker.hpp: ArchiveFile), read without its
// manifest; nullopt when `file` is another file, or its header records another digest than the markers.
std::optional<manifest::ArchiveHeader> marked_header(int fd, const std::filesystem::path& path, const manifest::ArchiveFile& file,
                                                     const MarkedArchive& marked) {
  // defence: marked-archive-same-file
  if (!marked.file.same_file(file)) return std::nullopt;
  manifest::ArchiveHeader h = manifest::read_header_recorded_digest(fd, path);
  if (to_hex(h.manifest_sha256) != marked.manifest_sha256_hex) return std::nullopt;
  return h;
}

bool same_top_level(const manifest::Manifest& a, const manifest::Manifest& b) {
  auto same_component = [](const manifest::Component& x, const manifest::Component& y) {
    return x.name == y.name && x.kind == y.kind && x.source == y.source && x.files == y.files && x.bytes == y.bytes;
  };
  return a.version == b.version && a.created_by == b.created_by && a.compression.codec == b.compression.codec &&
         a.compression.level == b.compression.level && a.compression.window_log == b.compression.window_log &&
         a.fingerprint == b.fingerprint && a.tar_size == b.tar_size && a.settle == b.settle && a.delta == b.delta &&
         a.merge == b.merge &&
         std::equal(a.components.begin(), a.components.end(), b.components.begin(), b.components.end(), same_component);
}

}  // namespace

std::string Archive::read_manifest_again() const {
  manifest::ArchiveHeader again = manifest::read_header(fd.get(), path);
  // defence: manifest-reread-digest
  if (again.manifest_sha256 != header.manifest_sha256) {
    throw IntegrityError(quoted_path(path) + " changed while it was read: its manifest is not the one checked");
  }
  return std::move(again.manifest);
}

void Archive::load_full() {
  if (depth_ == ManifestDepth::full) return;
  if (text_streamed_) {
    header.manifest = read_manifest_again();
    text_streamed_ = false;
  }
  manifest::Manifest full;
  try {
    full = manifest::Manifest::parse(header.manifest);
  } catch (const IntegrityError& e) {
    throw IntegrityError(quoted_path(path) + ": " + e.what());
  }
  // The two readers must agree on what restore planned with; a difference would be a bug in the stage-1 scan.
  // defence: two-stage-agree
  if (!same_top_level(full, manifest))
    throw IntegrityError(quoted_path(path) + ": manifest top-level fields read differently by the two stages");
  if (full.payload_size() != header.payload_size) {
    throw IntegrityError(quoted_path(path) + ": manifest frames cover " + std::to_string(full.payload_size()) +
                         " payload bytes, header says " + std::to_string(header.payload_size));
  }
  manifest = std::move(full);
  depth_ = ManifestDepth::full;
}

void Archive::drop_manifest_text() {
  if (depth_ != ManifestDepth::full) throw Error("internal: manifest text dropped before the full parse");
  std::string().swap(header.manifest);
}

Archive Archive::open(const std::filesystem::path& path, const HeaderGate& gate, ManifestDepth depth, ManifestText text,
                      const MarkedArchive* marked) {
  Archive a;
  a.path = path;
  a.fd.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!a.fd.valid()) throw_errno("cannot open archive " + quoted_path(path));
  struct stat st {};
  bool stat_ok = ::fstat(a.fd.get(), &st) == 0;
  if (stat_ok && !S_ISREG(st.st_mode)) throw Error("archive " + quoted_path(path) + " is not a regular file");
  if (stat_ok) a.file = manifest::ArchiveFile::of(st);
  std::optional<manifest::ArchiveHeader> recorded;
  if (marked != nullptr && a.file && depth == ManifestDepth::top_level) {
    recorded = marked_header(a.fd.get(), path, *a.file, *marked);
  }
  if (recorded) {
    a.header = std::move(*recorded);
    a.text_streamed_ = true;  // stage 2, if it comes, reads the text and checks it against the recorded digest
    a.from_markers_ = true;
    check_header(a, gate, nullptr, &marked->file.manifest_top_level);
  } else if (text == ManifestText::stream && depth == ManifestDepth::top_level) {
    manifest::TopLevelScan scan;
    a.header = manifest::read_header(a.fd.get(), path, [&scan](std::string_view piece) { scan.feed(piece); });
    a.text_streamed_ = true;
    check_header(a, gate, &scan);
  } else {
    a.header = manifest::read_header(a.fd.get(), path);
    check_header(a, gate);
  }
  a.depth_ = ManifestDepth::top_level;
  if (depth == ManifestDepth::full) a.load_full();
  return a;
}

Archive Archive::from_header(const std::string& name, manifest::ArchiveHeader header, std::shared_ptr<PayloadSource> payload,
                             const HeaderGate& gate) {
  Archive a;
  a.path = name;
  a.header = std::move(header);
  a.payload = std::move(payload);
  check_header(a, gate);
  a.depth_ = ManifestDepth::top_level;
  a.load_full();
  return a;
}

std::size_t Archive::read_payload(void* data, std::size_t size, std::uint64_t offset) const {
  if (payload) return payload->read(data, size, offset);
  return pread_full(fd.get(), data, size, static_cast<off_t>(offset), quoted_path(path));
}

}  // namespace ccpack::unpack
