// The manifest's "delta" and "merge" fields (delta_record.hpp): written in a fixed key order, read back with every
// field checked and named.
#include "manifest/delta_record.hpp"

#include "manifest/manifest_refusal.hpp"
#include "util/sha256.hpp"

namespace ccpack::manifest {
namespace {

using json = nlohmann::json;
using detail::bad;
using detail::member;

// A lower-case 64-hex SHA-256, as every digest of the format is written.
std::string digest_hex(const json& obj, const char* key, const std::string& where) {
  const json& v = member(obj, key, where);
  if (!v.is_string()) bad(where + "." + key, "is not a string");
  std::string s = v.get<std::string>();
  if (!digest_from_hex(s) || to_hex(*digest_from_hex(s)) != s) bad(where + "." + key, "is not 64 lowercase hex digits");
  return s;
}

}  // namespace

nlohmann::ordered_json DeltaRecord::to_tree() const { return {{"base_manifest_sha256", base_manifest_sha256}}; }

DeltaRecord DeltaRecord::from_tree(const json& tree) {
  if (!tree.is_object()) bad("delta", "is not an object");
  return DeltaRecord{digest_hex(tree, "base_manifest_sha256", "delta")};
}

nlohmann::ordered_json MergeRecord::to_tree() const {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const MergedDelta& d : deltas) list.push_back({{"manifest_sha256", d.manifest_sha256}, {"added", d.added}});
  return {{"base_manifest_sha256", base_manifest_sha256}, {"deltas", std::move(list)}};
}

MergeRecord MergeRecord::from_tree(const json& tree) {
  if (!tree.is_object()) bad("merge", "is not an object");
  MergeRecord r;
  r.base_manifest_sha256 = digest_hex(tree, "base_manifest_sha256", "merge");
  const json& list = member(tree, "deltas", "merge");
  if (!list.is_array()) bad("merge.deltas", "is not an array");
  if (list.size() > kMaxMergedDeltas) bad("merge.deltas", "holds more than " + std::to_string(kMaxMergedDeltas) + " deltas");
  for (std::size_t i = 0; i < list.size(); ++i) {
    std::string where = "merge.deltas[" + std::to_string(i) + "]";
    if (!list[i].is_object()) bad(where, "is not an object");
    MergedDelta d;
    d.manifest_sha256 = digest_hex(list[i], "manifest_sha256", where);
    const json& added = member(list[i], "added", where);
    if (!added.is_number_unsigned()) bad(where + ".added", "is not a non-negative integer");
    d.added = added.get<std::uint64_t>();
    if (!r.deltas.empty() && !(r.deltas.back().manifest_sha256 < d.manifest_sha256)) {
      bad(where + ".manifest_sha256", "is not after the one before it (sorted, each once)");
    }
    r.deltas.push_back(std::move(d));
  }
  return r;
}

}  // namespace ccpack::manifest
