// libFuzzer target: Manifest::parse on arbitrary bytes must either return a manifest that re-serialises and
// re-parses to the same bytes, or throw IntegrityError; never crash, hang or throw anything else. The no-op
// restore's Manifest::parse_top_level (stage 1, which steps over the entries) gets the same bytes: it may throw
// only IntegrityError, and wherever the full parse accepts, it must accept and read the same components.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "manifest/manifest.hpp"
#include "util/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  bool top_ok = false;
  std::size_t top_components = 0;
  try {
    top_components = ccpack::manifest::Manifest::parse_top_level(text).components.size();
    top_ok = true;
  } catch (const ccpack::IntegrityError&) {
  }
  try {
    ccpack::manifest::Manifest m = ccpack::manifest::Manifest::parse(text);
    if (!top_ok || top_components != m.components.size()) __builtin_trap();
    std::string again = m.to_json();
    if (ccpack::manifest::Manifest::parse(again).to_json() != again) __builtin_trap();
  } catch (const ccpack::IntegrityError&) {
  }
  return 0;
}
