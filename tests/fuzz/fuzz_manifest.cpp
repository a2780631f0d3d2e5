// libFuzzer target: Manifest::parse on arbitrary bytes must either return a manifest that re-serialises and
// re-parses to the same bytes, or throw IntegrityError; never crash, hang or throw anything else. The no-op
// restore's Manifest::parse_top_level (stage 1, which steps over the entries) gets the same bytes: it may throw
// only IntegrityError, and wherever the full parse accepts, it must accept and read the same components. parse
// reads create's exact form through a faster reader (manifest/canonical_entries.hpp): Manifest::parse_general must
// give the same manifest or the same refusal, message included.
#include <cstddef>
#include <cstdint>
#include <string>
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
  std::string fast, general;
  try {
    ccpack::manifest::Manifest m = ccpack::manifest::Manifest::parse(text);
    if (!top_ok || top_components != m.components.size()) __builtin_trap();
    fast = m.to_json();
    if (ccpack::manifest::Manifest::parse(fast).to_json() != fast) __builtin_trap();
  } catch (const ccpack::IntegrityError& e) {
    fast = std::string("refused: ") + e.what();
  }
  try {
    general = ccpack::manifest::Manifest::parse_general(text).to_json();
  } catch (const ccpack::IntegrityError& e) {
    general = std::string("refused: ") + e.what();
  }
  if (fast != general) __builtin_trap();
  return 0;
}
