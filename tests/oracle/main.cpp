// ccpack-oracle ARCHIVE...: reads each archive with libarchive and compares it with its manifest (oracle.hpp).
// Prints "ok ARCHIVE (N entries)" or every disagreement; exits 1 if any archive disagrees, 4 if one cannot be read.
#include <cstdio>

#include "oracle/oracle.hpp"
#include "unpack/archive.hpp"
#include "util/error.hpp"

int main(int argc, char** argv) {
  int status = 0;
  for (int i = 1; i < argc; ++i) {
    try {
      std::vector<std::string> problems = ccpack::oracle::check_archive(argv[i]);
      for (const std::string& p : problems) std::printf("FAIL %s: %s\n", argv[i], p.c_str());
      if (problems.empty()) {
        std::printf("ok %s (%zu entries)\n", argv[i], ccpack::unpack::Archive::open(argv[i]).manifest.entries.size());
      } else {
        status = 1;
      }
    } catch (const std::exception& e) {
      std::printf("FAIL %s: %s\n", argv[i], e.what());
      status = 4;
    }
  }
  return argc < 2 ? 2 : status;
}
