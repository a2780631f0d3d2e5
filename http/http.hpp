// A small, bounded HTTP client over libcurl, for talking to OCI registries (nothing else in ccpack needs it).
// libcurl is loaded at run time (http/curl_loader.hpp): where it is absent, Client's constructor and the URL
// helpers throw one Error saying so. Why its own layer: a pod's entrypoint must never hang on a stalled registry,
// never hold a multi-GB blob in memory, and never leak a credential (how: Client below).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/error.hpp"

namespace ccpack::http {

// The largest response body collected in memory (JSON documents: manifests, indexes, tokens, errors).
inline constexpr std::size_t kMaxDocumentBytes = 4u << 20;
// Response headers of one request past this are refused (a hostile server cannot grow them without bound).
inline constexpr std::size_t kMaxHeaderBytes = 256u << 10;
inline constexpr int kMaxRedirects = 5;
// A Retry-After above this is clamped: a pod waits at most this long per attempt.
inline constexpr std::chrono::seconds kMaxRetryAfter{60};

struct Options {
  std::string ca_file;      // PEM bundle to verify TLS with instead of the system's
  bool plain_http = false;  // allow http:// URLs
  long connect_timeout_s = 15;
  long low_speed_limit = 1024;  // bytes per second, below which for low_speed_time_s the transfer is abandoned
  long low_speed_time_s = 30;
  int max_attempts = 5;
  std::chrono::milliseconds backoff_base{200};
  std::chrono::milliseconds backoff_cap{10'000};
  // Appended to the error when the TLS handshake of an https URL failed (the caller's advice: a plain-HTTP server
  // answers a TLS hello with bytes that are no TLS record, which libcurl reports only as "SSL connect error").
  std::string tls_failure_hint;
};

// A request body read with pread from `fd`, `size` bytes from `offset` (never loaded whole), between two small
// in-memory pieces (say a tar header and its padding).
struct FileRange {
  int fd = -1;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::string prefix;
  std::string suffix;

  [[nodiscard]] std::uint64_t total() const { return prefix.size() + size + suffix.size(); }
};

struct Request {
  std::string method = "GET";  // GET, HEAD, PUT, POST, PATCH, DELETE
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string authorization;         // value of Authorization; sent only to the origin of `url`
  std::optional<std::string> body;   // a small body held in memory
  std::optional<FileRange> file_body;
  // Range: bytes from range_first, to range_last (inclusive) when set. A 200 answer is accepted too: the
  // client skips the first range_first bytes and stops after range_last.
  std::optional<std::uint64_t> range_first;
  std::optional<std::uint64_t> range_last;
  bool follow_redirects = true;
  // A failure after body bytes reached the sink: true retries with Range from the last byte delivered; false
  // throws Interrupted at once, so that the caller resumes from a point it has checked (a verified frame).
  bool resume_at_byte = true;
  // The size of the whole resource when the caller knows it (a blob's descriptor): a 2xx answer whose
  // Content-Length or Content-Range disagrees with it or with the range asked is refused with IntegrityError
  // before any body byte reaches the sink (a registry announcing far more than the blob holds).
  std::optional<std::uint64_t> total_size;
  // When set and true, the transfer stops within about a second (no retry): a reader that has gone away.
  const std::atomic<bool>* cancelled = nullptr;
};

struct Response {
  long status = 0;
  std::string url;                                           // after redirects
  std::vector<std::pair<std::string, std::string>> headers;  // of the final response; names lower-cased
  std::string body;              // collected body (bounded), or the start of an error body when streaming
  std::uint64_t body_bytes = 0;  // bytes delivered (to the sink or to `body`), after any Range skip

  // The last value of header `name` (lower case), or "" when absent.
  [[nodiscard]] std::string header(std::string_view name) const;
};

// Receives response body bytes of a successful (2xx) response; it may throw to abort the transfer, and its
// exception then leaves send() as it is, without a retry.
using Sink = std::function<void(const char* data, std::size_t size)>;

// A transfer that failed after some of its body had reached the sink: the caller may resume from there.
class Interrupted : public Error {
 public:
  Interrupted(const std::string& message, std::uint64_t delivered, long status = 0)
      : Error(message), delivered_(delivered), status_(status) {}
  [[nodiscard]] std::uint64_t delivered() const noexcept { return delivered_; }
  // The status of the answer that was cut (200 when a Range request was answered from byte zero).
  [[nodiscard]] long status() const noexcept { return status_; }

 private:
  std::uint64_t delivered_;
  long status_;
};

// Every request of a Client
//   - has a connect timeout and a low-speed timeout (CURLOPT_LOW_SPEED_LIMIT/TIME);
//   - streams a request body from a file range (pread) and a response body to a caller's sink; only small
//     documents are collected in memory, and those are capped (kMaxDocumentBytes);
//   - is retried with exponential backoff and full jitter on connection errors, 408, 429 (honouring Retry-After,
//     capped) and 5xx; a retry after body bytes reached the caller's sink asks with Range for the rest only
//     (a 200 answer is skipped into), so the sink sees one continuous stream; when the attempts run out,
//     Interrupted says how many bytes the sink got;
//   - follows redirects itself, and sends the Authorization header only to the origin (scheme, host, port) it
//     was given for; a redirect to another origin (an S3 or CDN backend) goes without it, and an https->http
//     downgrade is refused unless plain http was asked for;
//   - verifies TLS (CA bundle of the system or --ca-file); plain http only with Options::plain_http.
// URLs in messages are shown without their query string, which in presigned redirect targets holds secrets.
class Client {
 public:
  explicit Client(Options options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Sends `request`, following redirects and retrying transient failures. With a sink, a 2xx body goes to it;
  // otherwise it is collected into Response::body and a body over `max_body` bytes is an error. A non-2xx body is
  // never given to the sink; its first kMaxErrorBody bytes land in Response::body. Returns the final response
  // whatever its status (the caller decides what a 404 means); throws Error on transport failure after retries.
  Response send(const Request& request, const Sink& sink = {}, std::size_t max_body = kMaxDocumentBytes);

  [[nodiscard]] const Options& options() const noexcept { return options_; }

  static constexpr std::size_t kMaxErrorBody = 16u << 10;

  struct Attempt;  // one exchange's state, shared with curl's callbacks (defined in http/http_exchange.hpp)

 private:
  Response send_once(const Request& request, const std::string& url, bool with_auth, const Sink& sink, std::size_t max_body,
                     Attempt& attempt);
  Response send_following(const Request& request, const Sink& sink, std::size_t max_body, Attempt& attempt);

  Options options_;
  void* curl_ = nullptr;  // CURL*, reused between requests for connection reuse
};

// The libcurl headers ccpack was built with, and the libcurl it loads at run time ("" when none loads; see
// http/curl_loader.hpp), for --version. Never throws.
struct LibcurlVersion {
  std::string built;
  std::string runs;
};
[[nodiscard]] LibcurlVersion libcurl_version();

// --- pure helpers (unit-tested) ----------------------------------------------------------------------------

// "scheme://host:port" with the default port filled in, lower case; nullopt when `url` does not parse.
[[nodiscard]] std::optional<std::string> origin_of(std::string_view url);
// `url` without its query string and fragment, for messages.
[[nodiscard]] std::string display_url(std::string_view url);
// Resolves `location` (absolute or relative) against `base`; nullopt when it does not parse.
[[nodiscard]] std::optional<std::string> resolve_url(std::string_view base, std::string_view location);
// Retry-After: delay-seconds or an HTTP-date, clamped to [0, kMaxRetryAfter]; nullopt when absent or unparsable.
[[nodiscard]] std::optional<std::chrono::seconds> parse_retry_after(std::string_view value);
// Whether a status is worth retrying: 408, 429 and 5xx (but not 501/505, which never change).
[[nodiscard]] bool is_transient_status(long status);
// Printable form of untrusted text for a one-line message: control and non-ASCII bytes escaped, capped.
// util/escape.hpp's escaped(), cut at `max` bytes: registry and URL text in one-line messages.
[[nodiscard]] std::string escape_for_message(std::string_view text, std::size_t max = 200);

}  // namespace ccpack::http
