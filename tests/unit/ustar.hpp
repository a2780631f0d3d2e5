// A POSIX ustar archive written byte by byte, for the tests of `import` (pack/import_source.cpp): any name, type,
// mode and link target a hostile archive could hold, which a real tar would refuse to write. Test code only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace ccpack::test {

struct TarEntry {
  std::string name;
  char type = '0';  // '0' file, '1' hard link, '2' symlink, '5' folder, '6' FIFO, '3' character device
  std::string data;
  std::string link;
  unsigned mode = 0644;
};

inline void octal(std::string& block, std::size_t at, std::size_t width, std::uint64_t v) {
  std::snprintf(block.data() + at, width, "%0*llo", static_cast<int>(width - 1), static_cast<unsigned long long>(v));
}

// A POSIX ustar archive of `entries`, then the two zero blocks; `cut` bytes are dropped from its end.
inline std::string ustar(const std::vector<TarEntry>& entries, std::size_t cut = 0) {
  std::string out;
  for (const TarEntry& e : entries) {
    std::string h(512, '\0');
    std::memcpy(h.data(), e.name.data(), std::min<std::size_t>(e.name.size(), 100));
    octal(h, 100, 8, e.mode);
    octal(h, 108, 8, 0);
    octal(h, 116, 8, 0);
    octal(h, 124, 12, e.type == '0' ? e.data.size() : 0);
    octal(h, 136, 12, 1700000000);
    h[156] = e.type;
    std::memcpy(h.data() + 157, e.link.data(), std::min<std::size_t>(e.link.size(), 100));
    std::memcpy(h.data() + 257,
                "ustar\0"
                "00",
                8);
    std::memset(h.data() + 148, ' ', 8);
    unsigned sum = 0;
    for (unsigned char c : h) sum += c;
    std::snprintf(h.data() + 148, 8, "%06o", sum);
    out += h;
    if (e.type == '0') {
      out += e.data;
      out.append((512 - e.data.size() % 512) % 512, '\0');
    }
  }
  out.append(1024, '\0');
  out.resize(out.size() - cut);
  return out;
}

}  // namespace ccpack::test
