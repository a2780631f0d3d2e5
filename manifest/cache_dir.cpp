#include "manifest/cache_dir.hpp"

#include "util/error.hpp"

namespace ccpack::manifest {

const char* folder_variable(ComponentKind kind) {
  switch (kind) {
    case ComponentKind::inductor:
      return "TORCHINDUCTOR_CACHE_DIR";
    case ComponentKind::triton:
      return "TRITON_CACHE_DIR";
    case ComponentKind::extra:
      break;
  }
  return nullptr;
}
namespace fs = std::filesystem;

fs::path normal_folder(const fs::path& path) {
  fs::path out = (path.is_absolute() ? path : fs::absolute(path)).lexically_normal();
  std::string text = out.string();
  while (text.size() > 1 && text.back() == '/') text.pop_back();
  return text;
}

std::vector<CacheDir> build_dirs(const Manifest& manifest) {
  std::vector<CacheDir> out;
  for (const Component& c : manifest.components) {
    fs::path source(c.source);
    if (!source.is_absolute()) {
      throw IntegrityError("manifest field 'components' does not record an absolute build folder for '" + c.name + "'");
    }
    out.push_back(CacheDir{c.name, c.kind, normal_folder(source), "--at-build-paths"});
  }
  return out;
}

}  // namespace ccpack::manifest
