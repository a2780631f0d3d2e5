// SHA-256 over OpenSSL 3's EVP interface (SHA-NI where the CPU has it).
//
// The digest algorithm is fetched once per process: OpenSSL 3's implicit fetch on every EVP_DigestInit costs
// more than hashing a small file, and caches hold thousands of them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

using evp_md_ctx_st = struct evp_md_ctx_st;

namespace ccpack {

using Digest = std::array<std::uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&& other) noexcept;
  Sha256& operator=(Sha256&& other) noexcept;
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(const void* data, std::size_t size);
  void update(std::string_view data) { update(data.data(), data.size()); }
  // Returns the digest and resets the context for reuse.
  [[nodiscard]] Digest finish();

  [[nodiscard]] static Digest of(const void* data, std::size_t size);
  [[nodiscard]] static Digest of(std::string_view data) { return of(data.data(), data.size()); }

 private:
  evp_md_ctx_st* ctx_;
};

[[nodiscard]] std::string to_hex(std::span<const std::uint8_t> bytes);
// Appends the lower-case hex of `bytes` to `out` (to_hex without a string of its own).
void append_hex(std::string& out, std::span<const std::uint8_t> bytes);
// Lower-case hex of exactly 64 digits; anything else gives nullopt.
[[nodiscard]] std::optional<Digest> digest_from_hex(std::string_view hex);

}  // namespace ccpack
