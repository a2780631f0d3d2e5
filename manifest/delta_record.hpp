// The manifest's optional "delta" and "merge" fields: how an archive says it is not a whole cache but what one pod
// compiled since its restore (a delta, `create --since-restore`), or that it is a base with deltas merged into it
// (`ccpack merge`, converge/merge.hpp). docs/CONVERGE.md owns the behaviour; this file owns the fields.
//
// Both come after "settle" and before "tar_size"; a manifest without them (every archive made before them, every
// plain create) reads as a whole cache, not merged, and its bytes are what they were. Readers that predate them
// ignore them (unknown top-level keys are not checked); a reader that knows them refuses a malformed one, naming
// `delta.<field>` or `merge.<field>` (exit 4).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ccpack::manifest {

// The most deltas one merge records: far past a fleet's one merge round, and it bounds a hostile list.
inline constexpr std::size_t kMaxMergedDeltas = 10000;

//   "delta": {"base_manifest_sha256": "<64 hex>"}
// Written by `create --since-restore`: the SHA-256 of the exact manifest bytes of the archive the pod's folders
// were restored from (their restore markers name it). The delta's own top-level "fingerprint" is the pod's. A
// delta holds only the files and symlinks the folders gained since that restore, with the folders above them:
// restore refuses it (it is not a whole cache); merge reads it.
struct DeltaRecord {
  std::string base_manifest_sha256;  // lower-case hex

  [[nodiscard]] nlohmann::ordered_json to_tree() const;
  // Reads and checks the field of an untrusted manifest; throws IntegrityError naming "delta.<field>".
  [[nodiscard]] static DeltaRecord from_tree(const nlohmann::json& tree);
  bool operator==(const DeltaRecord&) const = default;
};

struct MergedDelta {
  std::string manifest_sha256;  // lower-case hex
  std::uint64_t added = 0;      // files and symlinks it added
  bool operator==(const MergedDelta&) const = default;
};

//   "merge": {"base_manifest_sha256": "<64 hex>",
//             "deltas": [{"manifest_sha256": "<64 hex>", "added": n}, ...]}
// Written by `ccpack merge`: the archive the deltas were merged into, and each delta merged (sorted by its digest,
// each once) with the files and symlinks it added. A merge of a merged archive records its own base and deltas
// only (the base's own "merge" field is not carried).
struct MergeRecord {
  std::string base_manifest_sha256;
  std::vector<MergedDelta> deltas;  // sorted by manifest_sha256, each once

  [[nodiscard]] nlohmann::ordered_json to_tree() const;
  // Reads and checks the field of an untrusted manifest; throws IntegrityError naming "merge.<field>".
  [[nodiscard]] static MergeRecord from_tree(const nlohmann::json& tree);
  bool operator==(const MergeRecord&) const = default;
};

}  // namespace ccpack::manifest
