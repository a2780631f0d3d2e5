// The manifest: the signed description of everything in a .ccpack archive.
//
// It lists the packed components (which cache folder each top-level tar folder came from), every zstd frame of
// the payload (offset, sizes, SHA-256 of the compressed bytes) and every tar entry in stream order (path, type,
// mode, size, SHA-256 of the content, frame). Signatures cover the exact manifest bytes and the manifest covers
// every byte of the payload, so one signature check plus hash checks cover the whole archive.
//
// It is serialised as compact JSON with a fixed key order, so the same content gives the same bytes.
// `Manifest::parse` is the gate for untrusted input: it rejects, naming the field, anything that is malformed,
// inconsistent or unsafe to extract (absolute paths, "..", duplicates, links out of the tree, setuid bits,
// entries out of order, sizes past the limits), so later stages may trust what it returns. The fingerprint is
// parsed there too (Fingerprint::from_json, behind the signature gate of unpack/archive.hpp), once.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "manifest/delta_record.hpp"
#include "manifest/entry_list.hpp"
#include "manifest/fingerprint.hpp"
#include "manifest/settle_record.hpp"
#include "manifest/tar.hpp"
#include "util/sha256.hpp"

namespace ccpack::manifest {

inline constexpr int kManifestVersion = 1;
// The longest name of one path component an entry may have: Linux's NAME_MAX, so restore can create every one.
inline constexpr std::size_t kMaxNameBytes = 255;

// Bounds that keep a hostile manifest from exhausting memory or disk before hashes catch it. A reader holds the
// manifest bytes (at most 512 MiB, format.hpp) and about 100 bytes plus the entry's name per entry (EntryList),
// plus the validation tree; docs/SECURITY.md has the measured worst case. Real caches hold thousands of entries,
// the scaling tests up to a million.
struct Limits {
  std::uint64_t max_entries = 2'000'000;
  std::uint64_t max_file_size = 64ULL << 30;  // 64 GiB
  std::uint64_t max_total_size = 1ULL << 40;  // 1 TiB
  std::size_t max_path_length = 4096;
  std::size_t max_frames = 1'000'000;
  // JSON values the parser keeps in its tree besides the streamed entries and frames (components, fingerprint
  // and the rest: a few dozen in practice); the tree costs about 100 bytes a value.
  std::size_t max_json_values = 65536;
};

enum class ComponentKind : std::uint8_t { inductor, triton, extra };

// The kinds and their names ("inductor", "triton", "extra"): the one table of them. parse_component_kind is
// nullopt for any other text.
[[nodiscard]] std::string_view to_string(ComponentKind kind);
[[nodiscard]] std::optional<ComponentKind> parse_component_kind(std::string_view text);
// The kind a component of this name has: the components named "inductor" and "triton" are built in, every other
// is extra.
[[nodiscard]] ComponentKind kind_of_component(std::string_view name);

struct Component {
  std::string name;  // top-level folder in the tar stream
  ComponentKind kind = ComponentKind::extra;
  std::string source;  // absolute folder it was packed from (informational; restore chooses its own target)
  std::uint64_t files = 0;
  std::uint64_t bytes = 0;
};

// The files and bytes of a list of components together: what an archive holds, as create, import and inspect say.
struct ComponentTotals {
  std::uint64_t files = 0;
  std::uint64_t bytes = 0;
};
[[nodiscard]] ComponentTotals totals(const std::vector<Component>& components);

struct Frame {
  std::uint64_t offset = 0;  // from the start of the payload (the first byte after the header frame)
  std::uint64_t compressed_size = 0;
  std::uint64_t raw_size = 0;  // bytes of tar stream it decompresses to
  Digest sha256{};             // of the compressed bytes
  std::uint64_t first_entry = 0;
  std::uint64_t entry_count = 0;
};

struct Compression {
  std::string codec = "zstd";
  int level = 0;
  int window_log = 0;
};

struct Manifest {
  int version = kManifestVersion;
  std::string created_by;
  Compression compression;
  Fingerprint fingerprint;  // the environment it was built for, parsed and checked with the rest (fingerprint.hpp)
  std::vector<Component> components;
  std::optional<SettleRecord> settle;  // `create --settle` only (settle_record.hpp); absent: not settled (not tried)
  std::optional<DeltaRecord> delta;    // `create --since-restore` only (delta_record.hpp); absent: a whole cache
  std::optional<MergeRecord> merge;    // `ccpack merge` only (delta_record.hpp); absent: not merged
  std::vector<Frame> frames;
  EntryList entries;  // compact (manifest/entry_list.hpp)
  std::uint64_t tar_size = 0;

  [[nodiscard]] std::string to_json() const;
  // The document without its frames and entries (both written empty): what parse_top_level reads back as these
  // top-level fields. A restore marker keeps it, so a no-op restore of the same file need not read the manifest.
  [[nodiscard]] std::string top_level_json() const;
  // Parses and validates untrusted bytes; throws IntegrityError naming the field.
  [[nodiscard]] static Manifest parse(std::string_view json, const Limits& limits = {});
  // The same, through the general reader only (parse reads the entries of a manifest in create's exact form by a
  // faster one, manifest/canonical_entries.hpp): tests and the fuzzer compare the two.
  [[nodiscard]] static Manifest parse_general(std::string_view json, const Limits& limits = {});
  // Checks every rule `parse` enforces; throws IntegrityError.
  void validate(const Limits& limits = {}) const;

  [[nodiscard]] std::uint64_t payload_size() const;
  // The rest of parse(): `root` is the document without its frames and entries, which parse() streamed out.
  [[nodiscard]] static Manifest from_json_tree(const nlohmann::json& root, std::vector<Frame> frames, EntryList entries,
                                               const Limits& limits);
  // Stage 1 of reading an archive (unpack/archive.hpp): the top-level fields only (format, created_by,
  // compression, fingerprint, components, tar_size), checked; frames and entries stay empty and are neither
  // parsed nor validated (manifest/top_level.cpp skips them). Throws IntegrityError naming the field.
  [[nodiscard]] static Manifest parse_top_level(std::string_view json, const Limits& limits = {});
  // The top-level fields of a document tree (what from_json_tree reads besides frames and entries), components checked.
  [[nodiscard]] static Manifest from_top_level_tree(const nlohmann::json& root);
};

// The component of an entry path ("triton/ABC/x.json" -> "triton") and the rest ("ABC/x.json").
[[nodiscard]] std::string_view component_of(std::string_view path);
[[nodiscard]] std::string_view relative_of(std::string_view path);

// A component name is 1-64 of [A-Za-z0-9_.-], not starting with '.' or '-'.
[[nodiscard]] bool is_valid_component_name(std::string_view name);

}  // namespace ccpack::manifest
