#include "manifest/cache_dir.hpp"

#include "util/error.hpp"

namespace ccpack::manifest {
namespace fs = std::filesystem;

std::vector<CacheDir> build_dirs(const Manifest& manifest) {
  std::vector<CacheDir> out;
  for (const Component& c : manifest.components) {
    fs::path source(c.source);
    if (!source.is_absolute()) {
      throw IntegrityError("manifest field 'components' does not record an absolute build folder for '" + c.name + "'");
    }
    out.push_back(CacheDir{c.name, c.kind, source.lexically_normal(), "--at-build-paths"});
  }
  return out;
}

}  // namespace ccpack::manifest
