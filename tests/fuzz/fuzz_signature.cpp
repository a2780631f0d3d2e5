// libFuzzer target: parse_signature_block on arbitrary bytes must either return signatures whose canonical
// encoding is exactly the input (the block has one encoding), or throw IntegrityError; never crash, hang or throw
// anything else.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "manifest/signature.hpp"
#include "util/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view block(reinterpret_cast<const char*>(data), size);
  try {
    auto signatures = ccpack::manifest::parse_signature_block(block);
    if (ccpack::manifest::encode_signature_block(signatures) != block) __builtin_trap();
  } catch (const ccpack::IntegrityError&) {
  }
  return 0;
}
