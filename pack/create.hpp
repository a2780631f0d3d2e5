// `ccpack create` as one call: every stage from the cache folders to a written archive, in order.
//
//   folders      the cache folders to pack (the front end resolves them once: flags, else variables, else the
//                defaults, and leaves out an absent default);
//   fingerprint  this machine's fingerprint for those folders (the caller's probe), made to agree with what the
//                cache's own Triton kernels say they were built for (kernel_targets.hpp: read_triton_targets, then
//                reconcile, whose disagreements come back as warnings);
//   pack         scan the folders, lay out frames, compress, sign the manifest (the caller's signer) and write the
//                archive atomically (packer.hpp: create_archive).
// The front end parses flags, loads the signing key, and prints what comes back.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "manifest/cache_dir.hpp"
#include "manifest/fingerprint.hpp"
#include "pack/packer.hpp"

namespace ccpack::pack {

struct CreateRequest {
  std::vector<manifest::CacheDir> dirs;  // the folders to pack, each existing
  std::filesystem::path output;
  // This machine's fingerprint (a probe); the folders are the ones the caches of this machine live in.
  std::function<manifest::Fingerprint()> machine;
  PackOptions pack;  // its `fingerprint` is set here, from the machine and the cache
  // The pack stage's writer: create_archive when empty; a caller above pack/ (settle) may write the same folders
  // its own way (settle::pack_settled records other build folders than the folders it reads).
  std::function<PackResult(const std::vector<manifest::CacheDir>&, const std::filesystem::path&, const PackOptions&)> write;
};

struct CreateResult {
  PackResult packed;
  std::vector<std::string> fingerprint_warnings;  // where the cache's kernels and the probe disagree
};

// Throws what the stages throw (Error, UsageError); on a throw the output path is untouched.
[[nodiscard]] CreateResult create(const CreateRequest& request);

}  // namespace ccpack::pack
