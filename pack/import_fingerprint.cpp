// The fingerprint of an imported cache when the machine that built it did not give one (`import` without
// --fingerprint): what the cache itself says. Every Triton kernel folder holds `<name>.json` with the target it
// was compiled for ("target": {"backend": "cuda", "arch": 90, "warp_size": 32}) and "triton_version"; the distinct
// values are collected from the Triton component and from Inductor's own Triton subtree (inductor/triton/<n>/).
// Every field it sets has the source "derived:triton-json": it was read off the cache, not probed on the machine
// that built it; the fields a probe would fill stay unrecorded.
// The metadata files are untrusted: only small ones are read, parsed with a depth limit, and a file that does
// not parse or lacks the fields is ignored.
#include <nlohmann/json.hpp>
#include <map>
#include <tuple>

#include "pack/import_source.hpp"
#include "manifest/fingerprint.hpp"
#include "util/error.hpp"

namespace ccpack::pack {

namespace {

constexpr std::uint64_t kMaxMetadataBytes = 256 << 10;
constexpr int kMaxJsonDepth = 32;

// A Triton kernel's metadata: triton/<hash>/<name>.json or inductor/triton/<n>/<hash>/<name>.json, not __grp__.
bool is_kernel_metadata(const SourceEntry& e) {
  if (e.type != manifest::EntryType::file || e.size > kMaxMetadataBytes || !e.path.ends_with(".json")) return false;
  std::string_view name = std::string_view(e.path).substr(e.path.rfind('/') + 1);
  if (name.starts_with("__grp__")) return false;
  auto depth = std::count(e.path.begin(), e.path.end(), '/');
  std::string_view component = manifest::component_of(e.path);
  return (component == "triton" && depth == 2) ||
         (component == "inductor" && depth == 4 && e.path.starts_with("inductor/triton/"));
}

std::optional<nlohmann::json> parse_bounded(const std::string& text) {
  try {
    auto limit = [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
      if (depth > kMaxJsonDepth) throw std::range_error("too deep");
      return true;
    };
    nlohmann::json j = nlohmann::json::parse(text, limit);
    if (j.is_object()) return j;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> ImportSource::derived_fingerprint() const {
  std::map<std::tuple<std::string, std::string, int, std::string>, std::uint64_t> kernels;  // target -> kernel count
  std::string text;
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (!is_kernel_metadata(entries_[i])) continue;
    text.resize(entries_[i].size);
    if (pread_full(spool_.get(), text.data(), text.size(), static_cast<off_t>(offsets_[i]), "the import scratch file") != text.size()) {
      throw Error("the import scratch file is shorter than expected");
    }
    std::optional<nlohmann::json> j = parse_bounded(text);
    if (!j) continue;
    auto target = j->find("target");
    auto version = j->find("triton_version");
    if (target == j->end() || !target->is_object() || version == j->end() || !version->is_string()) continue;
    auto text_of = [&](const char* key) -> std::string {
      auto v = target->find(key);
      if (v == target->end()) return {};
      return v->is_string() ? v->get<std::string>() : v->is_number_integer() ? std::to_string(v->get<long long>()) : std::string();
    };
    auto warp = target->find("warp_size");
    int warp_size = warp != target->end() && warp->is_number_integer() ? warp->get<int>() : 0;
    ++kernels[{text_of("backend"), text_of("arch"), warp_size, version->get<std::string>()}];
  }
  // The contract's shape (manifest/fingerprint.hpp): what the cache says, every probed field absent.
  manifest::Fingerprint fp;
  for (const auto& [key, count] : kernels) {
    const auto& [backend, arch, warp_size, version] = key;
    fp.triton_targets.push_back({backend, arch, warp_size, version, count});
  }
  constexpr const char* kSource = "derived:triton-json (ccpack import)";
  if (fp.triton_targets.size() == 1) {
    const manifest::TritonTarget& t = fp.triton_targets.front();
    fp.set(manifest::field::gpu_arch, manifest::arch_name(t), kSource);
    fp.set(manifest::field::triton_version, t.triton_version, kSource);
    if (t.warp_size != 0) fp.set(manifest::field::gpu_warp_size, std::to_string(t.warp_size), kSource);
    if (t.backend == "cuda" || t.backend == "hip") fp.set(manifest::field::gpu_vendor, t.backend == "cuda" ? "nvidia" : "amd", kSource);
  }
  return fp.to_json();
}

}  // namespace ccpack::pack
