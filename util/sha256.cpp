#include "util/sha256.hpp"

#include <openssl/evp.h>

#include <array>

#include "util/error.hpp"

namespace ccpack {
namespace {

const EVP_MD* sha256_md() {
  static EVP_MD* md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  if (md == nullptr) throw Error("OpenSSL: SHA-256 is not available");
  return md;
}

}  // namespace

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (ctx_ == nullptr || EVP_DigestInit_ex(ctx_, sha256_md(), nullptr) != 1) throw Error("OpenSSL: SHA-256 init failed");
}

Sha256::~Sha256() { EVP_MD_CTX_free(ctx_); }

Sha256::Sha256(Sha256&& other) noexcept : ctx_(other.ctx_) { other.ctx_ = nullptr; }

Sha256& Sha256::operator=(Sha256&& other) noexcept {
  if (this != &other) {
    EVP_MD_CTX_free(ctx_);
    ctx_ = other.ctx_;
    other.ctx_ = nullptr;
  }
  return *this;
}

void Sha256::update(const void* data, std::size_t size) {
  if (size != 0 && EVP_DigestUpdate(ctx_, data, size) != 1) throw Error("OpenSSL: SHA-256 update failed");
}

Digest Sha256::finish() {
  Digest out{};
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(ctx_, out.data(), &len) != 1 || len != out.size() ||
      EVP_DigestInit_ex(ctx_, sha256_md(), nullptr) != 1) {
    throw Error("OpenSSL: SHA-256 final failed");
  }
  return out;
}

Digest Sha256::of(const void* data, std::size_t size) {
  Digest out{};
  unsigned int len = 0;
  if (EVP_Digest(data, size, out.data(), &len, sha256_md(), nullptr) != 1) throw Error("OpenSSL: SHA-256 failed");
  return out;
}

void append_hex(std::string& out, std::span<const std::uint8_t> bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::size_t at = out.size();
  out.resize(at + bytes.size() * 2);
  for (std::uint8_t b : bytes) {
    out[at++] = digits[b >> 4];
    out[at++] = digits[b & 0xf];
  }
}

std::string to_hex(std::span<const std::uint8_t> bytes) {
  std::string out;
  append_hex(out, bytes);
  return out;
}

namespace {
// Value of a lower-case hex digit, or 0xFF: one lookup per digit (manifests hold a digest per file).
constexpr std::array<std::uint8_t, 256> hex_values() {
  std::array<std::uint8_t, 256> t{};
  t.fill(0xFF);
  for (int c = '0'; c <= '9'; ++c) t[static_cast<std::size_t>(c)] = static_cast<std::uint8_t>(c - '0');
  for (int c = 'a'; c <= 'f'; ++c) t[static_cast<std::size_t>(c)] = static_cast<std::uint8_t>(c - 'a' + 10);
  return t;
}
constexpr std::array<std::uint8_t, 256> kHexValue = hex_values();
}  // namespace

std::optional<Digest> digest_from_hex(std::string_view hex) {
  if (hex.size() != 64) return std::nullopt;
  Digest out{};
  std::uint8_t any_bad = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::uint8_t hi = kHexValue[static_cast<unsigned char>(hex[2 * i])];
    std::uint8_t lo = kHexValue[static_cast<unsigned char>(hex[2 * i + 1])];
    any_bad |= static_cast<std::uint8_t>((hi | lo) & 0xF0);
    out[i] = static_cast<std::uint8_t>(hi << 4 | (lo & 0x0F));
  }
  if (any_bad != 0) return std::nullopt;
  return out;
}

}  // namespace ccpack
