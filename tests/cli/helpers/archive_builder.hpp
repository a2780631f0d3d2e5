// Builds a complete, self-consistent archive from a list of entries, with ccpack's own tar and header encoders:
// one zstd frame, hashes and sizes all filled in. Hostile-archive tools start from it (tests/cli/helpers/craft_archive.cpp
// edits the manifest or header afterwards; tests/fuzz/fuzz_links.cpp builds symlink graphs), so that what a reader
// sees wrong is only the part under test. Test code only: it validates nothing.
#pragma once

#include <zstd.h>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "manifest/format.hpp"
#include "manifest/manifest.hpp"
#include "manifest/tar.hpp"
#include "util/sha256.hpp"

namespace ccpack::test {

struct BuiltArchive {
  manifest::Manifest manifest;  // frames, tar_size and component counts filled in
  std::string payload;          // the zstd frame
};

// `entries` in stream order, each component's root folder included; `content` maps file paths to their bytes.
inline BuiltArchive build_archive(std::vector<manifest::Component> components, std::vector<manifest::Entry> entries,
                                  const std::map<std::string, std::string>& content) {
  using namespace manifest;
  BuiltArchive out;
  Manifest& m = out.manifest;
  m.created_by = "ccpack test builder";
  m.compression = {"zstd", 1, 27};
  m.components = std::move(components);
  std::string tar;
  for (const Entry& e : entries) {
    append_tar_header(tar, TarHeader{e.path, e.type, e.mode, e.size, e.link_target});
    if (e.type != EntryType::file) continue;
    auto it = content.find(e.path);
    std::string bytes = it == content.end() ? std::string(e.size, 'x') : it->second;
    tar += bytes;
    tar.append(tar_padding(bytes.size()), '\0');
    for (Component& c : m.components) {
      if (c.name == component_of(e.path)) {
        ++c.files;
        c.bytes += e.size;
      }
    }
  }
  tar.append(2 * kTarBlock, '\0');
  out.payload.resize(ZSTD_compressBound(tar.size()));
  std::size_t n = ZSTD_compress(out.payload.data(), out.payload.size(), tar.data(), tar.size(), 1);
  if (ZSTD_isError(n)) throw std::runtime_error("zstd failed");
  out.payload.resize(n);
  m.frames = {{0, n, tar.size(), Sha256::of(out.payload), 0, entries.size()}};
  m.tar_size = tar.size();
  m.entries = std::move(entries);
  return out;
}

// The archive file's bytes: header (with `manifest_text`, normally manifest.to_json()) and payload.
inline std::string archive_file(const std::string& manifest_text, const std::string& payload, std::uint64_t payload_size) {
  manifest::ArchiveHeader h;
  h.manifest = manifest_text;
  h.payload_size = payload_size;
  return manifest::encode_header(h) + payload;
}

}  // namespace ccpack::test
