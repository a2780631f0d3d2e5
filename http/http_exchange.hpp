// The inside of http/http.cpp's Client, shared by the three files of http/http and by no one else: the state of
// one request/response exchange (Client::Attempt) and the libcurl callbacks that fill it (http/http_exchange.cpp),
// and the header-text helpers that the callbacks and the URL helpers share (http/http_url.cpp). http/http.cpp sets
// the callbacks on its easy handle, with the Attempt (or a WriteContext around it) as their user pointer.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>

#include "http/curl_loader.hpp"
#include "http/http.hpp"

namespace ccpack::http {

// The state of one request/response exchange, shared with curl's callbacks.
struct Client::Attempt {
  const Sink* sink = nullptr;
  std::size_t max_body = 0;
  Response response;
  std::size_t header_bytes = 0;
  std::uint64_t skip = 0;             // bytes still to drop (a 200 answer to a Range request)
  std::optional<std::uint64_t> want;  // bytes still wanted after the skip (Range with a last byte)
  std::uint64_t delivered = 0;        // bytes given to the sink over all attempts of this request
  std::string failure;                // why a callback aborted the transfer (retried)
  std::exception_ptr fatal;           // a callback's error that no retry can fix (limits, the sink's own errors)
  const FileRange* file_body = nullptr;
  const std::string* mem_body = nullptr;
  std::uint64_t body_sent = 0;
  bool range_checked = false;
  bool length_checked = false;
  bool finished = false;              // every wanted byte arrived; the rest of a 200 answer is not downloaded
  bool tls_handshake_failed = false;  // the last attempt's TLS handshake failed (Options::tls_failure_hint applies)
  const std::atomic<bool>* cancelled = nullptr;

  // Resets the per-exchange state (not `delivered`, which spans the attempts of one request).
  void start(const std::string& url, const Sink& with_sink, std::size_t with_max_body);
};

// The body callback's user pointer: the exchange, and what the request asked for (from which byte, to which, of
// a resource of which size), against which the answer's first body byte is checked.
struct WriteContext {
  Client::Attempt* attempt;
  std::optional<std::uint64_t> range_first;
  std::optional<std::uint64_t> range_last;
  std::optional<std::uint64_t> total_size;
};

// CURLOPT_HEADERFUNCTION (user: Attempt): the status and the headers, bounded by kMaxHeaderBytes.
size_t on_header(char* data, size_t size, size_t count, void* user);
// CURLOPT_WRITEFUNCTION (user: WriteContext): a 2xx body to the sink (after the range and length checks, the
// skip into a 200 answer to a Range request, the cut after the last byte wanted); any other body collected, capped.
size_t on_body(char* data, size_t size, size_t count, void* user);
// CURLOPT_READFUNCTION (user: Attempt): the request body, from memory or from a FileRange.
size_t on_read(char* buffer, size_t size, size_t count, void* user);
// CURLOPT_XFERINFOFUNCTION (user: Attempt): stops the transfer once Request::cancelled is set.
int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t);

// ASCII lower case (header names, URL schemes and hosts).
[[nodiscard]] std::string lower(std::string_view s);
// `s` without surrounding blanks, nor a line end (header names and values).
[[nodiscard]] std::string trim(std::string_view s);

}  // namespace ccpack::http
