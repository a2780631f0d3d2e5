// Merge's scratch folder (scratch.hpp).
#include "converge/scratch.hpp"

#include <cstdlib>
#include <string>

#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/interrupt.hpp"

namespace ccpack::converge {

Scratch::Scratch(const std::filesystem::path& output) {
  std::filesystem::path parent = std::filesystem::absolute(output).parent_path();
  std::string pattern = (parent / ".ccpack-merge-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw_errno("cannot make a scratch folder in " + quoted_path(parent));
  path_ = pattern;
  // A SIGINT, SIGTERM or SIGHUP ends merge in util/interrupt's handler, which removes this folder first.
  interrupt::remove_on_signal(path_);  // defence: merge-scratch-signal
}

Scratch::~Scratch() {
  interrupt::forget_on_signal(path_);
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace ccpack::converge
