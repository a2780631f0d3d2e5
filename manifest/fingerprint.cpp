// The fingerprint type and its JSON gate (see fingerprint.hpp): written with ordered keys so the bytes are
// deterministic, read through a parser callback that bounds depth and refuses repeated keys.
#include "manifest/fingerprint.hpp"

#include <nlohmann/json.hpp>
#include <set>

#include "util/error.hpp"
#include "util/escape.hpp"

namespace ccpack::manifest {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

// Bounds for an untrusted fingerprint: far above what a real one needs (about 30 fields, a few targets).
constexpr std::size_t kMaxBytes = 1 << 20;
constexpr int kMaxDepth = 4;  // root > fields > field > value, root > triton_targets > target > value
constexpr std::size_t kMaxFields = 256;
constexpr std::size_t kMaxNameLength = 64;
constexpr std::size_t kMaxValueLength = 16384;
constexpr std::size_t kMaxSourceLength = 512;
constexpr std::size_t kMaxTargets = 64;
constexpr std::size_t kMaxTargetText = 64;

[[noreturn]] void bad_field(const std::string& field, const std::string& why) {
  throw IntegrityError("fingerprint field '" + escaped(field, 80) + "' " + why);
}

// A field name: 1-64 of [a-z0-9_.], as the contract spells them.
bool valid_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxNameLength) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.')) return false;
  }
  return true;
}

// Parses with bounded depth and refuses a key repeated in one object (nlohmann keeps the last one silently).
json parse_bounded(std::string_view text) {
  if (text.size() > kMaxBytes) bad_field("(root)", "is larger than " + std::to_string(kMaxBytes) + " bytes");
  std::vector<std::set<std::string>> keys;
  std::vector<std::string> path;
  auto cb = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth > kMaxDepth) bad_field(path.empty() ? "(root)" : path.back(), "is nested deeper than " + std::to_string(kMaxDepth));
    switch (event) {
      case json::parse_event_t::object_start:
        keys.emplace_back();
        break;
      case json::parse_event_t::object_end:
        if (!keys.empty()) keys.pop_back();
        break;
      case json::parse_event_t::key: {
        std::string key = parsed.get<std::string>();
        if (!keys.empty() && !keys.back().insert(key).second) bad_field(key, "appears twice in one object");
        path.assign(1, key);
        break;
      }
      default:
        break;
    }
    return true;
  };
  try {
    return json::parse(text.begin(), text.end(), cb);
  } catch (const json::parse_error& e) {
    throw IntegrityError(std::string("fingerprint is not valid JSON: ") + e.what());
  }
}

const json& need_member(const json& obj, const char* key, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end()) bad_field(where + key, "is missing");
  return *it;
}

std::string bounded_string(const json& v, const std::string& where, std::size_t max) {
  if (!v.is_string()) bad_field(where, "is not a string");
  std::string s = v.get<std::string>();
  if (s.size() > max) bad_field(where, "is longer than " + std::to_string(max) + " bytes");
  return s;
}

void only_keys(const json& obj, std::initializer_list<std::string_view> allowed, const std::string& where) {
  for (const auto& [key, unused] : obj.items()) {
    bool known = false;
    for (std::string_view a : allowed) known = known || key == a;
    if (!known) bad_field(where + key, "is not a fingerprint key this ccpack knows");
  }
}

void parse_fields(const json& fields, Fingerprint& fp) {
  if (!fields.is_object()) bad_field("fields", "is not an object");
  if (fields.size() > kMaxFields) bad_field("fields", "has more than " + std::to_string(kMaxFields) + " fields");
  for (const auto& [name, entry] : fields.items()) {
    std::string where = "fields." + name;
    if (!valid_name(name)) bad_field(where, "is not a field name (1-64 of a-z 0-9 _ .)");
    if (!entry.is_object()) bad_field(where, "is not an object");
    only_keys(entry, {"value", "source"}, where + ".");
    FieldValue v;
    const json& value = need_member(entry, "value", where + ".");
    if (!value.is_null()) v.value = bounded_string(value, where + ".value", kMaxValueLength);
    v.source = bounded_string(need_member(entry, "source", where + "."), where + ".source", kMaxSourceLength);
    fp.fields.emplace(name, std::move(v));
  }
}

void parse_targets(const json& targets, Fingerprint& fp) {
  if (!targets.is_array()) bad_field("triton_targets", "is not an array");
  if (targets.size() > kMaxTargets) bad_field("triton_targets", "has more than " + std::to_string(kMaxTargets) + " targets");
  for (std::size_t i = 0; i < targets.size(); ++i) {
    std::string where = "triton_targets[" + std::to_string(i) + "].";
    const json& t = targets[i];
    if (!t.is_object()) bad_field(where, "is not an object");
    only_keys(t, {"backend", "arch", "warp_size", "triton_version", "kernels"}, where);
    TritonTarget target;
    target.backend = bounded_string(need_member(t, "backend", where), where + "backend", kMaxTargetText);
    target.arch = bounded_string(need_member(t, "arch", where), where + "arch", kMaxTargetText);
    target.triton_version = bounded_string(need_member(t, "triton_version", where), where + "triton_version", kMaxTargetText);
    const json& warp = need_member(t, "warp_size", where);
    if (!warp.is_number_unsigned() || warp.get<std::uint64_t>() > 1024)
      bad_field(where + "warp_size", "is not an integer 0-1024");
    target.warp_size = warp.get<int>();
    const json& kernels = need_member(t, "kernels", where);
    if (!kernels.is_number_unsigned()) bad_field(where + "kernels", "is not a non-negative integer");
    target.kernels = kernels.get<std::uint64_t>();
    fp.triton_targets.push_back(std::move(target));
  }
}

}  // namespace

std::string arch_name(const TritonTarget& target) {
  if (target.backend == "cuda") return "sm_" + target.arch;
  return target.arch;
}

std::optional<std::string> gpu_vendor_of(const TritonTarget& target) {
  if (target.backend == "cuda") return "nvidia";
  if (target.backend == "hip") return "amd";
  return std::nullopt;
}

void Fingerprint::set(std::string_view name, std::string value, std::string source) {
  fields.insert_or_assign(std::string(name), FieldValue{std::move(value), std::move(source)});
}

void Fingerprint::absent(std::string_view name, std::string why) {
  fields.insert_or_assign(std::string(name), FieldValue{std::nullopt, std::move(why)});
}

const FieldValue* Fingerprint::get(std::string_view name) const {
  auto it = fields.find(name);
  return it == fields.end() ? nullptr : &it->second;
}

std::string Fingerprint::to_json() const { return to_tree().dump(); }

nlohmann::ordered_json Fingerprint::to_tree() const {
  if (!recorded()) return ojson::object();  // "{}"
  ojson root;
  root["schema"] = kFingerprintSchema;
  ojson f = ojson::object();
  for (const auto& [name, v] : fields) {
    f[name] = {{"value", v.value ? ojson(*v.value) : ojson(nullptr)}, {"source", v.source}};
  }
  root["fields"] = std::move(f);
  ojson targets = ojson::array();
  for (const TritonTarget& t : triton_targets) {
    targets.push_back({{"backend", t.backend},
                       {"arch", t.arch},
                       {"warp_size", t.warp_size},
                       {"triton_version", t.triton_version},
                       {"kernels", t.kernels}});
  }
  root["triton_targets"] = std::move(targets);
  return root;
}

Fingerprint Fingerprint::from_json(std::string_view text) {
  json root = parse_bounded(text);
  if (!root.is_object()) bad_field("(root)", "is not an object");
  Fingerprint fp;
  if (root.empty()) return fp;  // archives made before fingerprints
  only_keys(root, {"schema", "fields", "triton_targets"}, "");
  const json& schema = need_member(root, "schema", "");
  if (!schema.is_number_integer()) bad_field("schema", "is not an integer");
  if (schema.get<std::int64_t>() != kFingerprintSchema) {
    bad_field("schema", "is " + std::to_string(schema.get<std::int64_t>()) + ", this ccpack reads schema " +
                            std::to_string(kFingerprintSchema));
  }
  parse_fields(need_member(root, "fields", ""), fp);
  if (root.contains("triton_targets")) parse_targets(root["triton_targets"], fp);
  return fp;
}

std::string Fingerprint::to_table() const {
  std::size_t width = 5;
  for (const auto& [name, v] : fields) width = std::max(width, name.size());
  std::string out;
  auto row = [&](const std::string& a, const std::string& b, const std::string& c) {
    out += a + std::string(width + 2 - a.size(), ' ') + b;
    if (!c.empty()) out += std::string(b.size() < 40 ? 42 - b.size() : 2, ' ') + c;
    out += '\n';
  };
  row("field", "value", "source");
  for (const auto& [name, v] : fields)
    row(name, !v.value ? "absent" : v.value->empty() ? "(none)" : escaped(*v.value, 200), escaped(v.source, 200));
  for (const TritonTarget& t : triton_targets) {
    row("cache target", escaped(t.backend + ":" + t.arch, 40),
        "triton " + escaped(t.triton_version, 40) + ", warp " + std::to_string(t.warp_size) + ", " + std::to_string(t.kernels) +
            " kernels");
  }
  return out;
}

}  // namespace ccpack::manifest
