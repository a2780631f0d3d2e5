// http/http.hpp's pure helpers: URLs through libcurl's URL API (an origin, a redirect resolved, a URL fit for a
// message), Retry-After, which statuses are transient; and the header-text helpers of http/http_exchange.hpp. No
// transfer happens here; a missing libcurl is reported by the first call that parses a URL.
#include <algorithm>
#include <cctype>
#include <ctime>
#include <memory>

#include "http/http_exchange.hpp"
#include "util/escape.hpp"

namespace ccpack::http {
namespace {

// A URL parsed by curl's URL API (empty when it does not parse), and its parts as owned strings.
struct ParsedUrl {
  std::unique_ptr<CURLU, decltype(CurlApi::url_cleanup)> handle{nullptr, nullptr};

  explicit operator bool() const { return handle != nullptr; }
  [[nodiscard]] std::optional<std::string> part(CURLUPart which, unsigned int flags = 0) const {
    char* text = nullptr;
    if (curl().url_get(handle.get(), which, &text, flags) != CURLUE_OK) return std::nullopt;
    std::string out(text);
    curl().free(text);
    return out;
  }
};

ParsedUrl parse_url(std::string_view url) {
  const CurlApi& lib = curl();
  ParsedUrl u{{lib.url(), lib.url_cleanup}};
  if (u.handle && lib.url_set(u.handle.get(), CURLUPART_URL, std::string(url).c_str(), 0) != CURLUE_OK) u.handle.reset();
  return u;
}

}  // namespace

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) s.remove_suffix(1);
  return std::string(s);
}

std::optional<std::string> origin_of(std::string_view url) {
  ParsedUrl u = parse_url(url);
  if (!u) return std::nullopt;
  std::optional<std::string> scheme = u.part(CURLUPART_SCHEME);
  std::optional<std::string> host = u.part(CURLUPART_HOST);
  std::optional<std::string> port = u.part(CURLUPART_PORT, CURLU_DEFAULT_PORT);
  if (!scheme || !host || !port) return std::nullopt;
  return lower(*scheme) + "://" + lower(*host) + ":" + *port;
}

std::string display_url(std::string_view url) {
  std::size_t cut = url.find_first_of("?#");
  return escape_for_message(url.substr(0, cut), 300);
}

std::optional<std::string> resolve_url(std::string_view base, std::string_view location) {
  if (location.empty()) return std::nullopt;
  ParsedUrl u = parse_url(base);
  if (!u || curl().url_set(u.handle.get(), CURLUPART_URL, std::string(location).c_str(), 0) != CURLUE_OK) return std::nullopt;
  return u.part(CURLUPART_URL);
}

std::optional<std::chrono::seconds> parse_retry_after(std::string_view value) {
  std::string v = trim(value);
  if (v.empty()) return std::nullopt;
  long long secs = -1;
  if (std::all_of(v.begin(), v.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
    secs = v.size() > 9 ? kMaxRetryAfter.count() : std::stoll(v);
  } else {
    time_t when = curl().getdate(v.c_str(), nullptr);
    if (when < 0) return std::nullopt;
    secs = std::max<long long>(0, static_cast<long long>(when - ::time(nullptr)));
  }
  return std::chrono::seconds(std::min<long long>(secs, kMaxRetryAfter.count()));
}

bool is_transient_status(long status) {
  return status == 408 || status == 429 || (status >= 500 && status != 501 && status != 505);
}

std::string escape_for_message(std::string_view text, std::size_t max) { return escaped(text, max); }

}  // namespace ccpack::http
