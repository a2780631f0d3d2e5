// Where trusted keys come from (trusted_keys.hpp).
#include "manifest/trusted_keys.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace ccpack::manifest {
namespace fs = std::filesystem;

std::vector<fs::path> default_trust_dirs() {
  std::vector<fs::path> dirs{"/etc/ccpack/trusted.d"};
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  const char* home = std::getenv("HOME");
  if (xdg != nullptr && *xdg == '/') {
    dirs.push_back(fs::path(xdg) / "ccpack/trusted.d");
  } else if (home != nullptr && *home == '/') {
    dirs.push_back(fs::path(home) / ".config/ccpack/trusted.d");
  }
  return dirs;
}

TrustStore load_trusted_keys(const std::vector<fs::path>& named) {
  std::vector<fs::path> paths = named;
  if (const char* env = std::getenv(kTrustedKeysVar)) {
    std::string list = env;
    for (std::size_t start = 0; start <= list.size();) {
      std::size_t end = std::min(list.find(':', start), list.size());
      if (end > start) paths.emplace_back(list.substr(start, end - start));
      start = end + 1;
    }
  }
  TrustStore store;
  if (!paths.empty()) {
    for (const fs::path& p : paths) store.add(p, true);
  } else {
    for (const fs::path& p : default_trust_dirs()) store.add(p, false);
  }
  return store;
}

}  // namespace ccpack::manifest
