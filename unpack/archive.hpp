// An opened .ccpack archive: the file, its header and its parsed, validated manifest. Nothing of the payload is
// read here, so every command can refuse a bad or mismatched archive before decompressing anything.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "manifest/format.hpp"
#include "manifest/manifest.hpp"
#include "manifest/signature.hpp"
#include "unpack/payload_source.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"

namespace ccpack::unpack {

struct Archive {
  std::filesystem::path path;
  UniqueFd fd;
  manifest::ArchiveHeader header;
  manifest::Manifest manifest;
  std::vector<manifest::Signature> signatures;  // the header's signature block, parsed (not yet verified)
  Digest manifest_digest{};  // SHA-256 of the exact manifest bytes: the archive's identity
  // Where payload bytes come from instead of `fd` (a stream for `restore oci://`); null: the file.
  std::shared_ptr<PayloadSource> payload;

  // Runs between reading the header (and parsing its signature block) and parsing the manifest: the trust
  // check goes here, so the manifest parser only ever reads manifests signed by a trusted key.
  using HeaderGate = std::function<void(const std::filesystem::path& path, const manifest::ArchiveHeader& header,
                                        const std::vector<manifest::Signature>& signatures)>;

  // Throws Error (missing, unreadable) or IntegrityError (anything wrong inside), or what `gate` throws.
  [[nodiscard]] static Archive open(const std::filesystem::path& path, const HeaderGate& gate = {});
  // An archive known by its header alone (fetched from a registry); `name` stands for the path in messages.
  // Parses the signature block, runs `gate`, then parses and checks the manifest as `open` does; the payload
  // comes from `payload`.
  [[nodiscard]] static Archive from_header(const std::string& name, manifest::ArchiveHeader header,
                                           std::shared_ptr<PayloadSource> payload, const HeaderGate& gate = {});

  // Reads payload bytes at archive offset `offset` (from `payload`, else the file); short only at the end.
  std::size_t read_payload(void* data, std::size_t size, std::uint64_t offset) const;
};

}  // namespace ccpack::unpack
