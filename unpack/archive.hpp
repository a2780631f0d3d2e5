// An opened .ccpack archive: the file, its header and its parsed, validated manifest. Nothing of the payload is
// read here, so every command can refuse a bad or mismatched archive before decompressing anything.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "manifest/format.hpp"
#include "manifest/manifest.hpp"
#include "unpack/payload_source.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"

namespace ccpack::unpack {

struct Archive {
  std::filesystem::path path;
  UniqueFd fd;
  manifest::ArchiveHeader header;
  manifest::Manifest manifest;
  Digest manifest_digest{};  // SHA-256 of the exact manifest bytes: the archive's identity
  // Where payload bytes come from instead of `fd` (a stream for `restore oci://`); null: the file.
  std::shared_ptr<PayloadSource> payload;

  // Throws Error (missing, unreadable) or IntegrityError (anything wrong inside).
  [[nodiscard]] static Archive open(const std::filesystem::path& path);
  // An archive known by its header alone (fetched from a registry); `name` stands for the path in messages.
  // Parses and checks the manifest as `open` does; the payload comes from `payload`.
  [[nodiscard]] static Archive from_header(const std::string& name, manifest::ArchiveHeader header,
                                           std::shared_ptr<PayloadSource> payload);

  // Reads payload bytes at archive offset `offset` (from `payload`, else the file); short only at the end.
  std::size_t read_payload(void* data, std::size_t size, std::uint64_t offset) const;
};

}  // namespace ccpack::unpack
