// See kernel_json.hpp.
#include "manifest/kernel_json.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "manifest/json_guard.hpp"
#include "manifest/manifest.hpp"

namespace ccpack::manifest {

std::optional<TritonTarget> parse_kernel_json(std::string_view text) {
  if (text.size() > kMaxKernelJsonBytes) return std::nullopt;
  // Only the root's "target" and "triton_version" are built; the other members (most of the bytes of a real
  // kernel's metadata) are checked by the parser and dropped. create reads every kernel's file (113,750 at a
  // million files), so the tree it does not build is most of that cost.
  JsonFilter<nlohmann::json> keep_needed = [](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    return !(depth == 1 && event == nlohmann::json::parse_event_t::key && parsed != "target" && parsed != "triton_version");
  };
  nlohmann::json j;
  try {
    j = parse_untrusted<nlohmann::json>(text, "kernel json", keep_needed, 16);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (!j.is_object()) return std::nullopt;
  auto t = j.find("target");
  auto v = j.find("triton_version");
  if (t == j.end() || !t->is_object() || v == j.end() || !v->is_string()) return std::nullopt;
  auto backend = t->find("backend");
  auto arch = t->find("arch");
  auto warp = t->find("warp_size");
  if (backend == t->end() || !backend->is_string() || arch == t->end() || warp == t->end() || !warp->is_number_unsigned()) {
    return std::nullopt;
  }
  TritonTarget out;
  out.backend = backend->get<std::string>();
  out.arch = arch->is_string()            ? arch->get<std::string>()
             : arch->is_number_unsigned() ? std::to_string(arch->get<std::uint64_t>())
                                          : "";
  out.triton_version = v->get<std::string>();
  std::uint64_t w = warp->get<std::uint64_t>();
  if (out.arch.empty() || out.arch.size() > 32 || out.backend.size() > 32 || out.triton_version.size() > 64 || w > 1024) {
    return std::nullopt;
  }
  out.warp_size = static_cast<int>(w);
  out.kernels = 1;
  return out;
}

bool is_kernel_json_name(std::string_view file_name) {
  return file_name.ends_with(".json") && !file_name.starts_with(kGroupFilePrefix);
}

namespace {

std::string_view parent_of(std::string_view relative) {
  std::size_t slash = relative.rfind('/');
  return slash == std::string_view::npos ? std::string_view{} : relative.substr(0, slash);
}

}  // namespace

TritonLevel folders_inside(ComponentKind kind, std::string_view folder) {
  if (kind == ComponentKind::triton) return folder.empty() ? TritonLevel::kernels : TritonLevel::other;
  if (kind != ComponentKind::inductor) return TritonLevel::other;
  if (folder == kInductorTritonFolder) return TritonLevel::devices;
  bool device = parent_of(folder) == kInductorTritonFolder && folder.size() > kInductorTritonFolder.size() + 1;
  return device ? TritonLevel::kernels : TritonLevel::other;
}

std::string_view kernel_folder_of(ComponentKind kind, std::string_view relative_path) {
  std::string_view folder = parent_of(relative_path);
  if (folder.empty()) return {};
  return folders_inside(kind, parent_of(folder)) == TritonLevel::kernels ? folder : std::string_view{};
}

bool is_kernel_json_path(std::string_view path) {
  if (!is_kernel_json_name(path.substr(path.rfind('/') + 1))) return false;
  return !kernel_folder_of(kind_of_component(component_of(path)), relative_of(path)).empty();
}

}  // namespace ccpack::manifest
