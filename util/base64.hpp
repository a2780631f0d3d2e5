// Base64 (RFC 4648), the one codec for the places that speak it: registry credentials ("auth" in an auth file, the
// Basic authorization header), the Ed25519 signatures of the signature block (manifest/signature.hpp, which also
// insists on the canonical form by encoding what it decoded again) and cosign's signature annotations (strict, as
// cosign and containers/image decode them with Go's padded standard encoding).
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
// nullopt unless `text` is exactly what base64_encode writes for some bytes: the standard alphabet only, a length
// that is a multiple of 4, '=' only as the last one or two characters, and the bits padding leaves unused zero
// (so one text for each bytes). No blank or line break anywhere.
[[nodiscard]] std::optional<std::string> base64_decode_strict(std::string_view text);

}  // namespace ccpack
