// A scratch folder `.ccpack-merge-XXXXXX` beside merge's output (on its filesystem, so moving a file into the
// merged tree is a rename, not a copy), removed with everything in it when it goes, whatever happened. The name is
// one of ccpack's reserved names (manifest/reserved_names.hpp): no archive can hold it, create never packs it. A
// signal that ends merge removes it too (util/interrupt.hpp's remove_on_signal; merge installs the handlers).
#pragma once

#include <filesystem>

namespace ccpack::converge {

class Scratch {
 public:
  explicit Scratch(const std::filesystem::path& output);
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace ccpack::converge
