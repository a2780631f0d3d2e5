// Reading the distributions on sys.path, in C++ (see python.cpp): run on every probe, memo or not.
//
// Each sys.path folder is listed once (names sorted, at most kMaxListing names kept per folder). A name ending in
// .dist-info or .egg-info is a distribution: "torch-2.11.0+cu130.dist-info" gives name "torch" (lowercase, '-'
// and '.' as '_') and version "2.11.0+cu130" (up to the next '-', as an .egg-info's "-py3.12" suffix); only
// names of printable ASCII count, and the first folder on sys.path holding a name wins, as for an import. Only the
// names the fingerprint records are kept: torch, triton (and its PyTorch-built names), ck4inductor, and the CUDA
// wheels (nvidia_*, cuda_*, *_cu1N, but not NVML's Python bindings). The same listing yields the start-up files
// the probe memo checks.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <memory>
#include <set>

#include "probe/probe.hpp"

namespace ccpack::probe {
namespace {

constexpr std::size_t kMaxListing = 200'000;
constexpr std::size_t kMaxTorchVersionPy = 64 << 10;

bool wanted(const std::string& n) {
  static const std::set<std::string, std::less<>> kNamed = {"torch", "triton", "pytorch_triton", "pytorch_triton_rocm",
                                                            "ck4inductor"};
  if (kNamed.count(n) != 0) return true;
  if ((n.starts_with("nvidia_") || n.starts_with("cuda_")) && n != "nvidia_ml_py" && n != "nvidia_ml_py3") return true;
  return n.size() >= 5 && n.compare(n.size() - 5, 4, "_cu1") == 0;
}

bool printable_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= ' ' && c < 0x7f; });
}

// A name `site` imports at start-up in any form: *.pth, and sitecustomize / usercustomize as a module (.py, a
// sourceless .pyc, an extension module: .so, .abi3.so, .cpython-312-x86_64-linux-gnu.so) or a package folder.
bool is_startup_file(std::string_view name) {
  if (name.ends_with(".pth") || name == "sitecustomize.py" || name == "usercustomize.py" || name == "sitecustomize" ||
      name == "usercustomize") {
    return true;
  }
  std::string_view stem = name.substr(0, name.find('.'));
  // defence: memo-startup-forms
  if (stem == "sitecustomize" || stem == "usercustomize") return true;
  return false;
}

std::vector<std::string> sorted_listing(const std::string& dir);

// The start-up file `name` in `dir`, and what Python may load for it besides: a package folder's files, and the
// compiled forms in __pycache__ (a .pyc there is loaded while its recorded source stat matches, so it can change
// alone).
void add_startup(const std::string& dir, const std::string& name, std::vector<StartupFile>& out) {
  std::string path = dir + "/" + name;
  std::optional<FileId> id = file_id(path);
  if (!id) return;
  out.push_back({path, *id});
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || name.ends_with(".pth")) return;
  const std::string cache = path + "/__pycache__";
  for (const std::string& inner : sorted_listing(path)) {
    if (inner == "__pycache__") {
      for (const std::string& pyc : sorted_listing(cache)) add_startup(cache, pyc, out);
      continue;
    }
    std::string file = path;
    file.append("/").append(inner);
    if (std::optional<FileId> f = file_id(file)) out.push_back({std::move(file), *f});
  }
}

std::vector<std::string> sorted_listing(const std::string& dir) {
  std::vector<std::string> names;
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
  if (!d) return names;
  while (dirent* e = ::readdir(d.get())) {
    if (names.size() >= kMaxListing) break;
    std::string_view n(e->d_name);
    if (n != "." && n != "..") names.emplace_back(n);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// "torch-2.11.0+cu130.dist-info" -> {"torch", "2.11.0+cu130"}; nullopt when not a distribution.
std::optional<std::pair<std::string, std::string>> distribution(std::string_view name) {
  std::string_view stem;
  for (std::string_view suffix : {std::string_view(".dist-info"), std::string_view(".egg-info")}) {
    if (name.ends_with(suffix)) stem = name.substr(0, name.size() - suffix.size());
  }
  if (stem.empty() || !printable_ascii(stem)) return std::nullopt;
  std::string_view n = stem.substr(0, stem.find('-'));
  std::string_view v = n.size() < stem.size() ? stem.substr(n.size() + 1) : std::string_view();
  v = v.substr(0, v.find('-'));
  std::string norm;
  for (char c : n) norm += c == '-' || c == '.' ? '_' : static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return std::pair{norm, std::string(v)};
}

// torch/version.py as text, bytes outside printable ASCII and line breaks shown as '?'.
std::optional<std::string> read_torch_version_py(const std::string& folder) {
  std::optional<std::string> text = read_prefix(folder + "/torch/version.py", kMaxTorchVersionPy);
  if (!text) return std::nullopt;
  for (char& c : *text) {
    if ((c < ' ' || c >= 0x7f) && c != '\n' && c != '\r' && c != '\t') c = '?';
  }
  return text;
}

}  // namespace

Discovery discover(const std::vector<std::string>& sys_path) {
  Discovery out;
  std::set<std::string> site;
  for (const std::string& dir : sys_path) {
    std::string_view trimmed(dir);
    while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.remove_suffix(1);
    if (trimmed.ends_with("site-packages") || trimmed.ends_with("dist-packages")) site.insert(dir);
    for (const std::string& name : sorted_listing(dir)) {
      if (is_startup_file(name)) {
        add_startup(dir, name, out.startup);
        continue;
      }
      // defence: memo-startup-forms
      if (name == "__pycache__") {
        for (const std::string& pyc : sorted_listing(dir + "/__pycache__")) {
          if (is_startup_file(pyc)) add_startup(dir + "/__pycache__", pyc, out.startup);
        }
        continue;
      }
      auto d = distribution(name);
      if (!d || !wanted(d->first) || out.dists.count(d->first) != 0) continue;
      out.dists[d->first] = {d->second, dir};
      site.insert(dir);
    }
  }
  out.site.assign(site.begin(), site.end());
  if (auto it = out.dists.find("torch"); it != out.dists.end()) out.torch_version_py = read_torch_version_py(it->second.second);
  return out;
}

}  // namespace ccpack::probe
