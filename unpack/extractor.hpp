// Streams an archive's payload, checks every byte against the manifest, and (optionally) writes the entries
// into staging folders. `ccpack verify` runs it with no targets; `ccpack restore` with one staging folder per
// component it restores.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "unpack/archive.hpp"
#include "unpack/relocate.hpp"

namespace ccpack::unpack {

struct StagingTarget {
  std::string component;
  int root_fd = -1;  // an open, empty folder; -1: check this component's entries but write nothing
  // Rewrites the component's Triton group files as they are written (unpack/relocate.hpp); null: as packed.
  PathRelocator* relocator = nullptr;
};

struct ExtractOptions {
  unsigned jobs = 0;  // 0: all cores
  bool progress = false;
  // Whether each file's SHA-256 is checked against its manifest entry. Where the frames were checked before
  // decoding (an archive file: FrameStream::authenticates), what is written is exactly the bytes create compressed
  // and signed for, so a restore leaves this off; verify, sign and merge keep it on, to also hold the manifest's
  // per-file digests to the content. A stream's files are always checked.
  bool file_digests = true;
};

struct ExtractStats {
  std::uint64_t files = 0;
  std::uint64_t bytes = 0;
  std::uint64_t written_files = 0;
};

// Throws IntegrityError naming the frame or entry on any mismatch, Error on I/O failure. On error, staging folders
// hold partial content: the caller discards them.
ExtractStats extract(const Archive& archive, const std::vector<StagingTarget>& targets, const ExtractOptions& options);

}  // namespace ccpack::unpack
