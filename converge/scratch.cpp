// Merge's scratch folder (scratch.hpp).
#include "converge/scratch.hpp"

#include "manifest/reserved_names.hpp"

namespace ccpack::converge {

Scratch::Scratch(const std::filesystem::path& output)
    : ScratchFolder(std::filesystem::absolute(output).parent_path(), manifest::kMergeScratchPrefix, OnSignal::remove) {}

}  // namespace ccpack::converge
