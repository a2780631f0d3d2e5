// Merge's scratch folder `.ccpack-merge-XXXXXX` beside its output (util/scratch_folder.hpp; a reserved name of
// manifest/reserved_names.hpp: no archive can hold it, create never packs it), removed also by a signal that ends
// merge (merge installs util/interrupt.hpp's handlers).
#pragma once

#include <filesystem>

#include "util/scratch_folder.hpp"

namespace ccpack::converge {

class Scratch : public ScratchFolder {
 public:
  explicit Scratch(const std::filesystem::path& output);
};

}  // namespace ccpack::converge
