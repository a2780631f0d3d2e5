// libFuzzer target: a whole archive file (header, manifest, frames, tar) from arbitrary bytes, opened and
// verified, then restored into a scratch folder. Anything but success, Error or IntegrityError is a bug, and a
// restore must never write outside its scratch folder (checked by keeping the scratch folder's parent empty).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>

#include "manifest/locations.hpp"
#include "unpack/archive.hpp"
#include "unpack/extractor.hpp"
#include "unpack/installer.hpp"
#include "util/error.hpp"

namespace fs = std::filesystem;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fs::path work = fs::temp_directory_path() / ("ccpack-fuzz-" + std::to_string(::getpid()));
  fs::remove_all(work);
  fs::create_directories(work / "jail");
  fs::path archive = work / "a.ccpack";
  {
    std::ofstream out(archive, std::ios::binary);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    auto a = ccpack::unpack::Archive::open(archive);
    (void)ccpack::unpack::extract(a, {}, {1, false});
    std::vector<ccpack::manifest::CacheDir> dirs = {
        {"inductor", ccpack::manifest::ComponentKind::inductor, work / "jail/out/ind", "fuzz"},
        {"triton", ccpack::manifest::ComponentKind::triton, work / "jail/out/tri", "fuzz"}};
    (void)ccpack::unpack::restore(a, dirs, {1, false, false});
  } catch (const ccpack::Error&) {
  }
  for (const auto& e : fs::directory_iterator(work)) {
    auto name = e.path().filename().string();
    if (name != "jail" && name != "a.ccpack") __builtin_trap();  // something escaped the jail
  }
  return 0;
}
