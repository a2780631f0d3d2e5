// An opened .ccpack archive: the file, its header and its parsed, validated manifest. Nothing of the payload is
// read here, so every command can refuse a bad or mismatched archive before decompressing anything.
//
// The manifest is read in two stages. Stage 1 (always): the header's bounds and the manifest's SHA-256
// (manifest/format.hpp, hashed once), the signature block and the gate (the trust check: signatures cover the
// exact manifest bytes), then the manifest's top-level fields (Manifest::parse_top_level: components,
// fingerprint, compression; frames and entries stepped over). Stage 2 (load_full): the full parse and validation
// of every frame and entry, which anything that reads the payload needs. open() does both unless asked for
// ManifestDepth::top_level; restore asks for that (unpack/restore.cpp) and runs stage 2 only when it writes
// (unpack/installer.cpp).
// A restore whose folders all hold markers also asks for ManifestText::stream: stage 1 then hashes and scans the
// manifest in pieces and keeps none of it, and stage 2, if it comes, reads the text again and checks its digest.
// When those markers also name this very file, unchanged (MarkedArchive), stage 1 reads no manifest at all: the
// top-level fields come from the markers' copy and the digest from the header; stage 2 checks both if it comes.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "manifest/format.hpp"
#include "manifest/manifest.hpp"
#include "manifest/marker.hpp"
#include "manifest/signature.hpp"
#include "unpack/payload_source.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"

namespace ccpack::unpack {

enum class ManifestDepth {
  top_level,  // stage 1: manifest.frames and manifest.entries are empty, not yet validated
  full,       // stage 2 done: the whole manifest parsed and validated
};

// Whether stage 1 keeps the manifest text for stage 2 (keep), or reads it in pieces through one small buffer
// (stream: manifest/top_level.hpp) and stage 2, if it comes, reads it again and checks that it hashes the same.
// A restore that will most likely write nothing streams: at a million files the text is ~250 MB of fresh memory.
enum class ManifestText { keep, stream };

// What every folder's restore marker says of the archive the folders hold (manifest/marker.hpp): the file as a
// restore saw it, with its top-level fields, and its manifest digest.
struct MarkedArchive {
  manifest::ArchiveFile file;
  std::string manifest_sha256_hex;
};

struct Archive {
  std::filesystem::path path;
  UniqueFd fd;
  manifest::ArchiveHeader header;
  manifest::Manifest manifest;                  // at ManifestDepth::top_level, without frames and entries (see depth())
  std::vector<manifest::Signature> signatures;  // the header's signature block, parsed (not yet verified)
  // Where payload bytes come from instead of `fd` (a stream for `restore oci://`); null: the file.
  std::shared_ptr<PayloadSource> payload;
  // The file as open() found it (what a restore marker records); nullopt for an archive known by its header.
  std::optional<manifest::ArchiveFile> file;

  // Runs between reading the header (and parsing its signature block) and parsing the manifest: the trust
  // check goes here, so the manifest parser only ever reads manifests signed by a trusted key.
  using HeaderGate = std::function<void(const std::filesystem::path& path, const manifest::ArchiveHeader& header,
                                        const std::vector<manifest::Signature>& signatures)>;

  // Throws Error (missing, unreadable) or IntegrityError (anything wrong inside), or what `gate` throws.
  // `text` matters only at ManifestDepth::top_level.
  // `marked`: the markers' record, used (at ManifestDepth::top_level) only when this file is that file, unchanged,
  // and its header records that digest.
  [[nodiscard]] static Archive open(const std::filesystem::path& path, const HeaderGate& gate = {},
                                    ManifestDepth depth = ManifestDepth::full, ManifestText text = ManifestText::keep,
                                    const MarkedArchive* marked = nullptr);
  // An archive known by its header alone (fetched from a registry); `name` stands for the path in messages.
  // Parses the signature block, runs `gate`, then parses and checks the manifest as `open` does; the payload
  // comes from `payload`.
  [[nodiscard]] static Archive from_header(const std::string& name, manifest::ArchiveHeader header,
                                           std::shared_ptr<PayloadSource> payload, const HeaderGate& gate = {});

  // Stage 2: parses and validates the whole manifest (frames, entries, the payload size they cover) and checks
  // that its top-level fields are those stage 1 read; nothing when already done. Throws IntegrityError, also
  // when a streamed manifest read again is not the one stage 1 hashed (the file changed in between).
  void load_full();
  // The manifest text read again from the file, checked to hash as stage 1's did (ManifestText::stream).
  [[nodiscard]] std::string read_manifest_again() const;

  // Frees the manifest text (header.manifest) once load_full has parsed it: what reads the payload needs only the
  // parsed manifest and the digest, and the text is ~250 MB at a million entries. Precondition: depth is full.
  void drop_manifest_text();

  // SHA-256 of the exact manifest bytes: the archive's identity (restore markers). Its one owner is the header.
  [[nodiscard]] const Digest& manifest_digest() const { return header.manifest_sha256; }

  // Reads payload bytes at archive offset `offset` (from `payload`, else the file); short only at the end.
  std::size_t read_payload(void* data, std::size_t size, std::uint64_t offset) const;

  // The stage reached; only open, from_header and load_full move it.
  [[nodiscard]] ManifestDepth depth() const { return depth_; }
  // Stage 1 streamed the manifest: header.manifest is empty until load_full.
  [[nodiscard]] bool text_streamed() const { return text_streamed_; }
  // Stage 1 took the top-level fields from the restore markers (MarkedArchive) and read no manifest byte.
  [[nodiscard]] bool top_level_from_markers() const { return from_markers_; }

 private:
  ManifestDepth depth_ = ManifestDepth::full;
  bool text_streamed_ = false;
  bool from_markers_ = false;
};

}  // namespace ccpack::unpack
