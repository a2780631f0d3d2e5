// libFuzzer target: Manifest::parse on arbitrary bytes must either return a manifest that re-serialises and
// re-parses to the same bytes, or throw IntegrityError; never crash, hang or throw anything else. The no-op
// restore's Manifest::parse_top_level (stage 1, which steps over the entries) gets the same bytes: it may throw
// only IntegrityError, and wherever the full parse accepts, it must accept and read the same components. parse
// reads create's exact form through a faster reader (manifest/canonical_entries.hpp): Manifest::parse_general must
// give the same manifest or the same refusal, message included. Stage 1 streamed (manifest/top_level.hpp) gets
// the bytes in three pieces cut where the input's first bytes say: it must conclude as the whole-text scan did.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "manifest/manifest.hpp"
#include "manifest/top_level.hpp"
#include "util/error.hpp"

namespace {

// What stage 1 concludes on `text` fed as `pieces`: the top-level fields it read, or its refusal.
std::string top_level_outcome(std::string_view text, const std::string_view* pieces, std::size_t count) {
  ccpack::manifest::TopLevelScan scan;
  for (std::size_t i = 0; i < count; ++i) scan.feed(pieces[i]);
  try {
    return scan.finish([text] { return std::string(text); }).to_json();
  } catch (const ccpack::IntegrityError& e) {
    return std::string("refused: ") + e.what();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  bool top_ok = false;
  std::size_t top_components = 0;
  try {
    top_components = ccpack::manifest::Manifest::parse_top_level(text).components.size();
    top_ok = true;
  } catch (const ccpack::IntegrityError&) {
  }
  if (size >= 2) {
    std::size_t a = data[0] % size, b = a + data[1] % (size - a + 1);
    std::string_view cut[3] = {text.substr(0, a), text.substr(a, b - a), text.substr(b)};
    if (top_level_outcome(text, cut, 3) != top_level_outcome(text, &text, 1)) __builtin_trap();
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
