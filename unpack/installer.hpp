// `ccpack restore`: put an archive's components into this machine's cache folders, safely and atomically.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "manifest/locations.hpp"
#include "unpack/archive.hpp"

namespace ccpack::unpack {

struct RestoreOptions {
  unsigned jobs = 0;
  bool progress = false;
  bool durable = false;  // one syncfs before the folders are swapped in
};

struct ComponentOutcome {
  std::string name;
  std::filesystem::path dir;
  enum class Status { restored, already, skipped } status = Status::skipped;
  std::string reason;  // for skipped
  std::uint64_t files = 0;
  std::uint64_t bytes = 0;
};

struct RestoreReport {
  std::vector<ComponentOutcome> components;
  [[nodiscard]] bool noop() const;
};

// Restores every component of `archive` that has a folder in `dirs`. Each target folder is replaced as a whole:
// built in a hidden staging folder beside it, checked, then swapped in with one atomic rename. Concurrent
// restores of the same folders serialise on a lock beside each folder; the later ones find the marker and do
// nothing. Throws IntegrityError / Error; on error no target folder has changed.
[[nodiscard]] RestoreReport restore(const Archive& archive, const std::vector<manifest::CacheDir>& dirs,
                                    const RestoreOptions& options);

// The manifest digest a restored folder carries in its marker, or empty.
[[nodiscard]] std::string read_marker_digest(const std::filesystem::path& dir);

}  // namespace ccpack::unpack
