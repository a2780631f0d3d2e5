// A scratch folder removed when it goes (scratch_folder.hpp).
#include "util/scratch_folder.hpp"

#include <cstdlib>
#include <string>

#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/interrupt.hpp"

namespace ccpack {

ScratchFolder::ScratchFolder(const std::filesystem::path& parent, std::string_view prefix, OnSignal on_signal)
    : on_signal_(on_signal) {
  std::string pattern = (parent / (std::string(prefix) + "XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) throw_errno("cannot make a scratch folder in " + quoted_path(parent));
  path_ = pattern;
  if (on_signal_ == OnSignal::keep) return;
  // A SIGINT, SIGTERM or SIGHUP ends the process in util/interrupt's handler, which removes this folder first.
  interrupt::remove_on_signal(path_);  // defence: merge-scratch-signal
}

ScratchFolder::~ScratchFolder() {
  if (on_signal_ == OnSignal::remove) interrupt::forget_on_signal(path_);
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace ccpack
