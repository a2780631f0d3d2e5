// `ccpack merge BASE DELTA... -o NEXT`: the base plus what the deltas of a fleet's pods add, as one new archive.
// The stages (detailed at merge() below):
//
//   base     open the base through the caller's trust gate, as restore does;
//   deltas   open each delta as untrusted input, refused unless it was made from this base and fits its fingerprint;
//   tree     the base extracted into a scratch folder, then each delta's entries, relocated to the base's build
//            folders, decided by the rule of merge_plan.hpp and moved in;
//   pack     the tree packed as create packs folders, recorded with the base's fields and a "merge" field.
//
// Memory is bounded as create's: contents stream from archive to disk and from disk to archive, and what is held
// is one record per path (the manifests, the plan). Disk: the scratch folder holds the base's files and one
// delta's at a time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "converge/merge_plan.hpp"
#include "pack/packer.hpp"
#include "unpack/archive.hpp"

namespace ccpack::converge {

struct MergeRequest {
  std::filesystem::path base;
  unpack::Archive::HeaderGate base_gate;  // the trust check of the base (the front end's, as restore's)
  std::vector<std::filesystem::path> deltas;
  std::filesystem::path output;
  pack::PackOptions pack;  // sign, jobs, progress; fingerprint, level, settle and merge come from the base here
};

struct SkippedEntry {
  std::string path;
  std::string reason;
};

struct DeltaReport {
  std::filesystem::path file;
  std::string manifest_sha256;
  bool duplicate = false;          // the same delta given again: read once
  std::vector<std::string> added;  // archive paths of the files and symlinks it added (replacements included)
  std::vector<SkippedEntry> skipped;
  std::uint64_t kept = 0;       // of `added`, what the merged archive holds (less what a later delta won in a conflict)
  std::uint64_t relocated = 0;  // paths in its group files and pickles moved from its pod's folders to the base's
};

struct MergeResult {
  pack::PackResult packed;
  std::string base_manifest_sha256;
  std::vector<DeltaReport> deltas;  // in merge order (by manifest digest)
  std::vector<Conflict> conflicts;  // Conflict::kept/dropped index `deltas`; identities of the relocated bytes
};

// The flow:
//
//   base     open the base through the caller's trust gate (as restore does), its whole manifest validated; a
//            delta given as the base is refused;
//   deltas   open each delta as untrusted input: no signature is required, and every check of a restore's reader
//            applies (manifest/manifest.hpp: names, links, sizes, counts; unpack/extractor.hpp: frames, tar
//            headers, SHA-256 of every file). A delta whose "delta.base_manifest_sha256" is not the base's digest,
//            or whose fingerprint does not fit the base's (manifest::compare), is refused with exit 3 naming the
//            field. They are sorted by their manifest digests; the same delta twice counts once;
//   tree     the base extracted as packed (no relocation) into a scratch folder beside the output; then each
//            delta in turn, extracted beside it relocated to the base's build folders (delta_folders.hpp: its
//            pod's folders left out of its bytes), its entries decided on those bytes by the rule of
//            merge_plan.hpp and moved in;
//   pack     the tree packed as create packs folders (pack/packer.hpp: same order, same layout, mtime 0), recorded
//            with the base's components (build folders), fingerprint, compression level and settle record, and a
//            "merge" field naming the base and each delta merged (manifest/delta_record.hpp); signed, written
//            atomically; the scratch folder removed.
//
// Throws Error(refused) for a delta of another base or fingerprint, IntegrityError for a hostile or corrupt one,
// what the base's gate throws, Error for I/O; on a throw the output path is untouched and the scratch folder gone.
[[nodiscard]] MergeResult merge(const MergeRequest& request);

}  // namespace ccpack::converge
