// libFuzzer target: the plain reader of Triton's kernel metadata (manifest/kernel_json.hpp, scan_plain_kernel_json)
// against the full JSON parser (parse_kernel_json_tree).
//
// Input: the text. Checks: whenever the plain reader decides (its text is in Triton's own form), its answer is the
// full parser's: the same target, or nothing for both; parse_kernel_json gives that answer too. Anything else
// aborts.
// fuzz-smoke: -max_len=4096
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "manifest/kernel_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  using ccpack::manifest::TritonTarget;
  std::optional<std::optional<TritonTarget>> plain = ccpack::manifest::scan_plain_kernel_json(text);
  std::optional<TritonTarget> full = ccpack::manifest::parse_kernel_json_tree(text);
  if (plain && *plain != full) std::abort();
  if (ccpack::manifest::parse_kernel_json(text) != full) std::abort();
  return 0;
}
