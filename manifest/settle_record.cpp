// The manifest's "settle" field (settle_record.hpp): written in a fixed key order, read back with every field
// checked and named.
#include "manifest/settle_record.hpp"

#include "manifest/manifest_refusal.hpp"

namespace ccpack::manifest {
namespace {

using json = nlohmann::json;
using detail::bad;
using detail::member;

constexpr std::uint64_t kMaxRuns = 1000;
constexpr std::size_t kMaxTuningEntries = 32;  // three settings today
constexpr std::size_t kMaxTuningText = 4096;   // one "K=V" (a ptxas path) or "K: why"

std::vector<std::string> texts(const json& obj, const char* key) {
  const std::string where = std::string("settle.tuning.") + key;
  const json& v = member(obj, key, "settle.tuning");
  if (!v.is_array() || v.size() > kMaxTuningEntries)
    bad(where, "is not an array of at most " + std::to_string(kMaxTuningEntries) + " strings");
  std::vector<std::string> out;
  for (const json& s : v) {
    if (!s.is_string() || s.get<std::string>().empty() || s.get<std::string>().size() > kMaxTuningText) {
      bad(where, "holds an entry that is not a string of 1-" + std::to_string(kMaxTuningText) + " bytes");
    }
    out.push_back(s.get<std::string>());
  }
  return out;
}  // far past any --settle=N a build runs; bounds a hostile value's use

std::uint64_t count(const json& obj, const char* key, const std::string& where) {
  const json& v = member(obj, key, where);
  if (!v.is_number_unsigned()) bad(where + "." + key, "is not a non-negative integer");
  return v.get<std::uint64_t>();
}

}  // namespace

nlohmann::ordered_json CompiledCounts::to_tree() const {
  return {{"triton_kernels", triton_kernels}, {"fx_graphs", fx_graphs}, {"autotune", autotune}, {"other", other}};
}

nlohmann::ordered_json TuningRecord::to_tree() const { return {{"applied", applied}, {"kept", kept}, {"skipped", skipped}}; }

TuningRecord TuningRecord::from_tree(const json& tree) {
  if (!tree.is_object()) bad("settle.tuning", "is not an object");
  return {texts(tree, "applied"), texts(tree, "kept"), texts(tree, "skipped")};
}

nlohmann::ordered_json SettleRecord::to_tree() const {
  nlohmann::ordered_json t = {
      {"runs", runs}, {"settled", settled}, {"stopped", stopped}, {"last_run_compiled", last_run_compiled.to_tree()}};
  if (tuning) t["tuning"] = tuning->to_tree();  // absent from the archives of a ccpack that set nothing: as before
  return t;
}

SettleRecord SettleRecord::from_tree(const json& tree) {
  if (!tree.is_object()) bad("settle", "is not an object");
  SettleRecord r;
  r.runs = count(tree, "runs", "settle");
  if (r.runs == 0 || r.runs > kMaxRuns) bad("settle.runs", "is not 1-" + std::to_string(kMaxRuns));
  const json& settled = member(tree, "settled", "settle");
  if (!settled.is_boolean()) bad("settle.settled", "is not true or false");
  r.settled = settled.get<bool>();
  const json& stopped = member(tree, "stopped", "settle");
  if (!stopped.is_string()) bad("settle.stopped", "is not a string");
  r.stopped = stopped.get<std::string>();
  if (r.stopped != kStoppedFixedPoint && r.stopped != kStoppedRunLimit) {
    bad("settle.stopped", "is " + detail::q(r.stopped) + ", not 'fixed-point' or 'run-limit'");
  }
  const json& last = member(tree, "last_run_compiled", "settle");
  if (!last.is_object()) bad("settle.last_run_compiled", "is not an object");
  const std::string where = "settle.last_run_compiled";
  r.last_run_compiled = {count(last, "triton_kernels", where), count(last, "fx_graphs", where), count(last, "autotune", where),
                         count(last, "other", where)};
  if (r.settled != (r.stopped == kStoppedFixedPoint) || r.settled != r.last_run_compiled.settled()) {
    bad("settle",
        "is inconsistent: 'settled' must be true exactly when stopped is 'fixed-point' and the last run compiled no kernel, FX graph or autotune result");
  }
  if (auto t = tree.find("tuning"); t != tree.end()) r.tuning = TuningRecord::from_tree(*t);
  return r;
}

}  // namespace ccpack::manifest
