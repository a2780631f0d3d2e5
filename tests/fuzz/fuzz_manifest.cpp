// libFuzzer target: Manifest::parse on arbitrary bytes must either return a manifest that re-serialises and
// re-parses to the same bytes, or throw IntegrityError; never crash, hang or throw anything else.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "manifest/manifest.hpp"
#include "util/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    ccpack::manifest::Manifest m = ccpack::manifest::Manifest::parse(text);
    std::string again = m.to_json();
    if (ccpack::manifest::Manifest::parse(again).to_json() != again) __builtin_trap();
  } catch (const ccpack::IntegrityError&) {
  }
  return 0;
}
