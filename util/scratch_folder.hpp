// A scratch folder made with mkdtemp beside where its result goes (same filesystem, so a move out of it is a
// rename), removed with everything in it when the object goes, whatever happened. With OnSignal::remove a SIGINT,
// SIGTERM or SIGHUP that ends the process in util/interrupt.hpp's handler removes it too (the caller installs the
// handlers). Merge and settle use it; the caller gives the name's prefix (a reserved name of the manifest's).
#pragma once

#include <filesystem>
#include <string_view>

namespace ccpack {

class ScratchFolder {
 public:
  enum class OnSignal : bool { keep, remove };
  // Makes `parent`/<prefix>XXXXXX; throws Error naming `parent` when it cannot.
  ScratchFolder(const std::filesystem::path& parent, std::string_view prefix, OnSignal on_signal = OnSignal::keep);
  ~ScratchFolder();
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  OnSignal on_signal_;
};

}  // namespace ccpack
