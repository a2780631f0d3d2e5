// libcurl behind http/http.hpp's contract; see there for the rules. One easy handle per Client (reset between
// requests, so connections are reused); redirects are followed here, not by curl, so the Authorization header is
// decided per hop (and a redirect's scheme checked here, since libcurl before 7.85 ignores CURLOPT_PROTOCOLS_STR);
// retries wrap the whole redirect chain. libcurl is loaded at run time (http/curl_loader.hpp): every call goes
// through its table, so the first Client or URL helper is where a missing libcurl is reported. What curl calls
// back during one exchange is in http/http_exchange.cpp; the pure URL helpers are in http/http_url.cpp.
#include "http/http.hpp"

#include <algorithm>
#include <exception>
#include <random>
#include <thread>
#include <type_traits>

#include "http/http_exchange.hpp"

namespace ccpack::http {
namespace {

CURL* handle(void* p) { return static_cast<CURL*>(p); }

// curl_easy_setopt through the loaded table with one argument of a type curl reads: long, curl_off_t or a pointer
// (an int or bool would be read as a long and misread).
template <class T>
CURLcode setopt(CURL* c, CURLoption option, T value) {
  static_assert(std::is_same_v<T, long> || std::is_same_v<T, curl_off_t> || std::is_pointer_v<T>,
                "curl options take a long, a curl_off_t or a pointer");
  return curl().easy_setopt(c, option, value);
}

struct CurlSlist {
  curl_slist* list = nullptr;
  ~CurlSlist() { curl().slist_free_all(list); }
  void add(const std::string& line) {
    curl_slist* next = curl().slist_append(list, line.c_str());
    if (next == nullptr) throw Error("out of memory building HTTP headers");
    list = next;
  }
};

}  // namespace

namespace {

// Where and how to connect: the URL, allowed protocols, timeouts, TLS verification.
void set_transport(CURL* c, const std::string& url, const Options& options) {
  setopt(c, CURLOPT_URL, url.c_str());
  setopt(c, CURLOPT_PROTOCOLS_STR, options.plain_http ? "http,https" : "https");
  setopt(c, CURLOPT_NOSIGNAL, 1L);
  setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  setopt(c, CURLOPT_CONNECTTIMEOUT, options.connect_timeout_s);
  setopt(c, CURLOPT_LOW_SPEED_LIMIT, options.low_speed_limit);
  setopt(c, CURLOPT_LOW_SPEED_TIME, options.low_speed_time_s);
  setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
  setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
  if (!options.ca_file.empty()) setopt(c, CURLOPT_CAINFO, options.ca_file.c_str());
  setopt(c, CURLOPT_USERAGENT, "ccpack");
}

// The method, and the request body streamed by on_read (every body is an upload of known size).
void set_method_and_body(CURL* c, const Request& request, Client::Attempt& a) {
  if (request.method == "HEAD") {
    setopt(c, CURLOPT_NOBODY, 1L);
  } else if (request.body || request.file_body) {
    a.mem_body = request.body ? &*request.body : nullptr;
    a.file_body = request.file_body ? &*request.file_body : nullptr;
    auto size = static_cast<curl_off_t>(request.body ? request.body->size() : request.file_body->total());
    setopt(c, CURLOPT_UPLOAD, 1L);
    setopt(c, CURLOPT_INFILESIZE_LARGE, size);
    setopt(c, CURLOPT_READFUNCTION, on_read);
    setopt(c, CURLOPT_READDATA, &a);
    if (request.method != "PUT") setopt(c, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  } else if (request.method == "POST") {
    setopt(c, CURLOPT_POSTFIELDS, "");
    setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t{0});
  } else if (request.method != "GET") {
    setopt(c, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }
}

bool is_redirect(long status) { return status == 301 || status == 302 || status == 303 || status == 307 || status == 308; }

}  // namespace

std::string Response::header(std::string_view name) const {
  for (auto it = headers.rbegin(); it != headers.rend(); ++it) {
    if (it->first == name) return it->second;
  }
  return {};
}

Client::Client(Options options) : options_(std::move(options)) {
  curl_ = curl().easy_init();
  if (curl_ == nullptr) throw Error("cannot initialise libcurl");
}

Client::~Client() { curl().easy_cleanup(handle(curl_)); }

// One HTTP exchange, no redirects, no retries. Fills attempt.response; throws nothing for HTTP statuses.
Response Client::send_once(const Request& request, const std::string& url, bool with_auth, const Sink& sink, std::size_t max_body,
                           Attempt& a) {
  CURL* c = handle(curl_);
  curl().easy_reset(c);
  a.start(url, sink, max_body);
  // Resume point: bytes already delivered by an earlier attempt are not asked for again.
  std::optional<std::uint64_t> first = request.range_first;
  if (a.delivered > 0) first = first.value_or(0) + a.delivered;
  if (first && request.range_last) a.want = *request.range_last - *first + 1;
  WriteContext w{&a, first, request.range_last, request.total_size};

  CurlSlist headers;
  for (const std::string& h : request.headers) headers.add(h);
  if (with_auth && !request.authorization.empty()) headers.add("Authorization: " + request.authorization);
  headers.add("Expect:");  // no 100-continue round trip
  std::string range;
  if (first) {
    range = std::to_string(*first) + "-" + (request.range_last ? std::to_string(*request.range_last) : "");
    setopt(c, CURLOPT_RANGE, range.c_str());
  }
  set_transport(c, url, options_);
  setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  setopt(c, CURLOPT_HEADERDATA, &a);
  setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  setopt(c, CURLOPT_WRITEDATA, &w);
  set_method_and_body(c, request, a);
  if (request.cancelled != nullptr) {
    a.cancelled = request.cancelled;
    setopt(c, CURLOPT_NOPROGRESS, 0L);
    setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    setopt(c, CURLOPT_XFERINFODATA, &a);
  }
  setopt(c, CURLOPT_HTTPHEADER, headers.list);

  CURLcode rc = curl().easy_perform(c);
  if (a.fatal) std::rethrow_exception(a.fatal);
  if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && a.finished)) {
    std::string why = !a.failure.empty() ? a.failure : curl().easy_strerror(rc);
    a.tls_handshake_failed = rc == CURLE_SSL_CONNECT_ERROR && url.starts_with("https:");
    // Without an overall timeout, a timeout once the answer has begun is the low-speed limit's.
    if (rc == CURLE_OPERATION_TIMEDOUT && a.response.status != 0) {
      why = "slower than " + std::to_string(options_.low_speed_limit) + " bytes/s for " +
            std::to_string(options_.low_speed_time_s) + " s (the low-speed limit)";
    }
    throw Error(request.method + " " + display_url(url) + ": " + why);
  }
  long status = 0;
  curl().easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  a.response.status = status;
  if (request.method != "HEAD" && status >= 200 && status < 300 && a.want && *a.want > 0 && sink) {
    throw Error(request.method + " " + display_url(url) + ": the body ended " + std::to_string(*a.want) + " bytes early");
  }
  return a.response;
}

Response Client::send_following(const Request& request, const Sink& sink, std::size_t max_body, Attempt& a) {
  std::optional<std::string> home = origin_of(request.url);
  if (!home) throw UsageError("not a valid URL: '" + escape_for_message(display_url(request.url)) + "'");
  std::string url = request.url;
  for (int hop = 0;; ++hop) {
    std::optional<std::string> here = origin_of(url);
    bool same_origin = here && *here == *home;
    Response r = send_once(request, url, same_origin, sink, max_body, a);
    if (!request.follow_redirects || !is_redirect(r.status)) return r;
    if (hop >= kMaxRedirects) throw Error(request.method + " " + display_url(request.url) + ": too many redirects");
    std::optional<std::string> next = resolve_url(url, r.header("location"));
    if (!next) throw Error(request.method + " " + display_url(url) + ": redirect to an invalid Location");
    if (url.starts_with("https:") && next->starts_with("http:") && !options_.plain_http) {
      throw Error(request.method + " " + display_url(url) + ": refusing a redirect from https to plain http");
    }
    if (!next->starts_with("https:") && !(options_.plain_http && next->starts_with("http:"))) {
      throw Error(request.method + " " + display_url(url) + ": refusing a redirect to " + display_url(*next) +
                  " (not http or https)");
    }
    url = *next;
  }
}

Response Client::send(const Request& request, const Sink& sink, std::size_t max_body) {
  Attempt a;
  std::mt19937_64 rng(std::random_device{}());
  for (int attempt = 1;; ++attempt) {
    std::chrono::milliseconds delay = std::min(options_.backoff_cap, options_.backoff_base * (1L << std::min(attempt - 1, 20)));
    delay = std::chrono::milliseconds(std::uniform_int_distribution<long long>(delay.count() / 2, delay.count())(rng));
    try {
      Response r = send_following(request, sink, max_body, a);
      r.body_bytes = sink ? a.delivered : r.body_bytes;
      if (!is_transient_status(r.status) || attempt >= options_.max_attempts) return r;
      if (auto after = parse_retry_after(r.header("retry-after"))) delay = *after;
    } catch (const UsageError&) {
      throw;
    } catch (const Error& e) {
      if (a.fatal) throw;
      if (!request.resume_at_byte && a.delivered > 0) throw Interrupted(e.what(), a.delivered, a.response.status);
      // A retry resumes with Range after the bytes the sink already has (send_once asks from there).
      if (attempt >= options_.max_attempts) {
        std::string why = std::string(e.what()) + " (after " + std::to_string(attempt) + " attempts)";
        if (a.tls_handshake_failed && !options_.tls_failure_hint.empty()) why += "; " + options_.tls_failure_hint;
        if (a.delivered > 0) throw Interrupted(why, a.delivered);
        throw Error(why);
      }
    }
    std::this_thread::sleep_for(delay);
  }
}

LibcurlVersion libcurl_version() { return {LIBCURL_VERSION, loaded_curl_version()}; }

}  // namespace ccpack::http
