// Test helpers: scratch folders, file trees made from a spec, and a tree comparison that checks bytes and modes.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "manifest/locations.hpp"

namespace ccpack::test {

// A fresh folder under $TMPDIR, removed at scope exit unless CCPACK_KEEP_TEST_DIRS is set.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  [[nodiscard]] std::filesystem::path operator/(const std::string& rel) const { return path_ / rel; }

 private:
  std::filesystem::path path_;
};

void write_file(const std::filesystem::path& path, const std::string& content, unsigned mode = 0644);
[[nodiscard]] std::string slurp(const std::filesystem::path& path);

// Everything under `root`: relative path -> "type mode content-or-target" (folders: "dir mode").
[[nodiscard]] std::map<std::string, std::string> snapshot(const std::filesystem::path& root);

// The two standard components, Inductor and Triton, at the given folders (origin "test").
[[nodiscard]] inline std::vector<manifest::CacheDir> dirs_of(const std::filesystem::path& inductor,
                                                             const std::filesystem::path& triton) {
  return {{"inductor", manifest::ComponentKind::inductor, inductor, "test"},
          {"triton", manifest::ComponentKind::triton, triton, "test"}};
}

// Unpacks the real fixture once into a shared folder; returns empty when the fixture is absent.
[[nodiscard]] std::filesystem::path real_fixture();

}  // namespace ccpack::test
