// Base64 (RFC 4648), the one codec for the two places that speak it: registry credentials ("auth" in an auth
// file, the Basic authorization header) and the Ed25519 signatures of the signature block (manifest/signature.hpp,
// which also insists on the canonical form by encoding what it decoded again).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ccpack {

// Standard alphabet, '=' padded.
[[nodiscard]] std::string base64_encode(std::string_view bytes);
// nullopt when `text` is not valid base64. Lenient, as auth files written by other tools need: padding optional,
// the URL-safe '-' and '_' read as '+' and '/'.
[[nodiscard]] std::optional<std::string> base64_decode(std::string_view text);

}  // namespace ccpack
