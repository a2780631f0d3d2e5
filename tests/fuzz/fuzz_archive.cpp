// libFuzzer target: a whole archive file (header, manifest, frames, tar) from arbitrary bytes, opened and
// verified, then restored into a scratch folder. Anything but success, Error or IntegrityError is a bug, a
// restore must never write outside its scratch folder (checked by keeping the scratch folder's parent empty),
// and after a restore every symlink in it must resolve inside its component folder (fuzz/jail_check.hpp).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "fuzz/jail_check.hpp"
#include "manifest/cache_dir.hpp"
#include "manifest/format.hpp"
#include "unpack/archive.hpp"
#include "unpack/extractor.hpp"
#include "unpack/installer.hpp"
#include "util/error.hpp"
#include "util/sha256.hpp"

namespace fs = std::filesystem;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fs::path work = fs::temp_directory_path() / ("ccpack-fuzz-" + std::to_string(::getpid()));
  fs::remove_all(work);
  fs::create_directories(work / "jail");
  fs::path archive = work / "a.ccpack";
  {
    // Fix up the header's manifest digest where the lengths allow, so mutations reach the manifest and tar parsers
    // instead of stopping at the first hash check.
    std::string bytes(reinterpret_cast<const char*>(data), size);
    using L = ccpack::manifest::HeaderLayout;
    if (bytes.size() >= L::manifest) {
      std::uint32_t m = 0;
      for (int i = 3; i >= 0; --i) m = m << 8 | static_cast<unsigned char>(bytes[L::manifest_size + static_cast<std::size_t>(i)]);
      if (std::uint64_t{L::manifest} + m <= bytes.size()) {
        ccpack::Digest d = ccpack::Sha256::of(bytes.data() + L::manifest, m);
        bytes.replace(L::manifest_sha256, 32, reinterpret_cast<const char*>(d.data()), 32);
      }
    }
    std::ofstream out(archive, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  try {
    auto a = ccpack::unpack::Archive::open(archive);
    (void)ccpack::unpack::extract(a, {}, {1, false});
    std::vector<ccpack::manifest::CacheDir> dirs = {
        {"inductor", ccpack::manifest::ComponentKind::inductor, work / "jail/out/ind", "fuzz"},
        {"triton", ccpack::manifest::ComponentKind::triton, work / "jail/out/tri", "fuzz"}};
    (void)ccpack::unpack::install(a, dirs, {1, false, false});
    for (const auto& d : dirs) ccpack::fuzz::check_jail(d.dir);
  } catch (const ccpack::Error&) {
  }
  for (const auto& e : fs::directory_iterator(work)) {
    auto name = e.path().filename().string();
    if (name != "jail" && name != "a.ccpack") __builtin_trap();  // something escaped the jail
  }
  return 0;
}
