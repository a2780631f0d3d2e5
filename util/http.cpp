// libcurl behind util/http.hpp's contract; see there for the rules. One easy handle per Client (reset between
// requests, so connections are reused); redirects are followed here, not by curl, so the Authorization header is
// decided per hop (and a redirect's scheme checked here, since libcurl before 7.85 ignores CURLOPT_PROTOCOLS_STR);
// retries wrap the whole redirect chain. libcurl is loaded at run time (util/curl_loader.hpp): every call goes
// through its table, so the first Client or URL helper is where a missing libcurl is reported.
#include "util/http.hpp"

#include "util/curl_loader.hpp"
#include "util/escape.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <exception>
#include <memory>
#include <random>
#include <thread>
#include <type_traits>

#include "util/fs.hpp"

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

// The state of one request/response exchange, shared with curl's callbacks.
struct Client::Attempt {
  const Sink* sink = nullptr;
  std::size_t max_body = 0;
  Response response;
  std::size_t header_bytes = 0;
  std::uint64_t skip = 0;           // bytes still to drop (a 200 answer to a Range request)
  std::optional<std::uint64_t> want;  // bytes still wanted after the skip (Range with a last byte)
  std::uint64_t delivered = 0;      // bytes given to the sink over all attempts of this request
  std::string failure;              // why a callback aborted the transfer (retried)
  std::exception_ptr fatal;         // a callback's error that no retry can fix (limits, the sink's own errors)
  const FileRange* file_body = nullptr;
  const std::string* mem_body = nullptr;
  std::uint64_t body_sent = 0;
  bool range_checked = false;
  bool length_checked = false;
  bool finished = false;  // every wanted byte arrived; the rest of a 200 answer is not downloaded
  const std::atomic<bool>* cancelled = nullptr;

  // Resets the per-exchange state (not `delivered`, which spans the attempts of one request).
  void start(const std::string& url, const Sink& with_sink, std::size_t with_max_body) {
    response = Response{};
    response.url = url;
    header_bytes = 0;
    failure.clear();
    fatal = nullptr;
    sink = &with_sink;
    max_body = with_max_body;
    file_body = nullptr;
    mem_body = nullptr;
    body_sent = 0;
    range_checked = false;
    length_checked = false;
    skip = 0;
    want.reset();
    finished = false;
    cancelled = nullptr;
  }
};

namespace {

size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto* a = static_cast<Client::Attempt*>(user);
  size_t n = size * count;
  a->header_bytes += n;
  if (a->header_bytes > kMaxHeaderBytes) {
    a->fatal = std::make_exception_ptr(Error("response headers exceed " + std::to_string(kMaxHeaderBytes) + " bytes"));
    return 0;
  }
  std::string_view line(data, n);
  if (line.starts_with("HTTP/")) {  // a new response (after 100-continue or an auth round): start over
    a->response.headers.clear();
    std::size_t sp = line.find(' ');
    a->response.status = sp == std::string_view::npos ? 0 : std::strtol(std::string(line.substr(sp + 1, 3)).c_str(), nullptr, 10);
    return n;
  }
  std::size_t colon = line.find(':');
  if (colon != std::string_view::npos) a->response.headers.emplace_back(lower(trim(line.substr(0, colon))), trim(line.substr(colon + 1)));
  return n;
}

// On the first body byte of a 2xx answer to a Range request: 206 must start where asked, 200 is skipped into.
bool check_range(Client::Attempt& a, std::uint64_t first) {
  a.range_checked = true;
  if (a.response.status == 200) {
    a.skip = first;
    return true;
  }
  std::string cr = a.response.header("content-range");  // "bytes 100-199/1000"
  unsigned long long start = 0;
  if (std::sscanf(cr.c_str(), "bytes %llu-", &start) != 1 || start != first) {
    a.failure = "the server answered a Range request from byte " + std::to_string(first) + " with Content-Range '" +
                escape_for_message(cr) + "'";
    return false;
  }
  return true;
}

struct WriteContext {
  Client::Attempt* attempt;
  std::optional<std::uint64_t> range_first;
  std::optional<std::uint64_t> range_last;
  std::optional<std::uint64_t> total_size;
};

// On the first body byte of a 2xx answer for a resource of known size: the announced lengths must be those of
// the resource (200) or of the range asked (206). Returns why not, or "".
std::string length_mismatch(const Client::Attempt& a, const WriteContext& w) {
  const std::uint64_t total = *w.total_size;
  std::string cl = a.response.header("content-length");
  unsigned long long length = 0;
  bool has_length = !cl.empty() && std::sscanf(cl.c_str(), "%llu", &length) == 1;
  std::uint64_t expected = total;
  if (a.response.status == 206) {
    unsigned long long start = 0, end = 0, whole = 0;
    std::string cr = a.response.header("content-range");
    if (std::sscanf(cr.c_str(), "bytes %llu-%llu/%llu", &start, &end, &whole) == 3 && whole != total) {
      return "Content-Range '" + escape_for_message(cr) + "' for a resource of " + std::to_string(total) + " bytes";
    }
    std::uint64_t first = w.range_first.value_or(0);
    expected = std::min<std::uint64_t>(w.range_last.value_or(total - 1), total - 1) - first + 1;
  }
  if (has_length && length != expected) {
    return "Content-Length " + std::to_string(length) + " where " + std::to_string(expected) + " bytes were due (the resource has " +
           std::to_string(total) + ")";
  }
  return {};
}

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto* w = static_cast<WriteContext*>(user);
  Client::Attempt& a = *w->attempt;
  size_t n = size * count;
  bool ok = a.response.status >= 200 && a.response.status < 300;
  if (!ok || a.sink == nullptr || !*a.sink) {
    std::size_t cap = ok ? a.max_body : Client::kMaxErrorBody;
    if (a.response.body.size() + n > cap) {
      if (!ok) {  // keep the start of an error body, drop the rest
        a.response.body.append(data, cap - a.response.body.size());
        return n;
      }
      a.fatal = std::make_exception_ptr(Error("response body of " + display_url(a.response.url) + " exceeds " + std::to_string(cap) + " bytes"));
      return 0;
    }
    a.response.body.append(data, n);
    a.response.body_bytes += n;
    return n;
  }
  if (w->range_first && !a.range_checked && !check_range(a, *w->range_first)) return 0;
  if (w->total_size && !a.length_checked) {
    a.length_checked = true;
    if (std::string why = length_mismatch(a, *w); !why.empty()) {
      a.fatal = std::make_exception_ptr(IntegrityError(display_url(a.response.url) + ": the server announced " + why));
      return 0;
    }
  }
  if (a.want && *a.want == 0) {
    a.finished = true;
    return 0;  // aborts the transfer; send_once reads it as success
  }
  const char* p = data;
  size_t left = n;
  std::uint64_t drop = std::min<std::uint64_t>(a.skip, left);
  a.skip -= drop;
  p += drop;
  left -= drop;
  if (a.want) {
    std::uint64_t take = std::min<std::uint64_t>(*a.want, left);
    *a.want -= take;
    left = take;
  }
  if (left == 0) return n;
  try {
    (*a.sink)(p, left);
  } catch (...) {
    a.fatal = std::current_exception();
    return 0;
  }
  a.delivered += left;
  a.response.body_bytes += left;
  return n;
}

size_t on_read(char* buffer, size_t size, size_t count, void* user) {
  auto* a = static_cast<Client::Attempt*>(user);
  size_t room = size * count;
  if (a->mem_body != nullptr) {
    size_t n = std::min<size_t>(room, a->mem_body->size() - a->body_sent);
    std::copy_n(a->mem_body->data() + a->body_sent, n, buffer);
    a->body_sent += n;
    return n;
  }
  const FileRange& f = *a->file_body;
  // Three segments: prefix, file range, suffix.
  std::uint64_t pos = a->body_sent;
  size_t n = 0;
  if (pos < f.prefix.size()) {
    n = std::min<size_t>(room, f.prefix.size() - pos);
    std::copy_n(f.prefix.data() + pos, n, buffer);
  } else if (pos < f.prefix.size() + f.size) {
    std::uint64_t in_file = pos - f.prefix.size();
    n = static_cast<size_t>(std::min<std::uint64_t>(room, f.size - in_file));
    try {
      if (pread_full(f.fd, buffer, n, static_cast<off_t>(f.offset + in_file), "the request body") != n) {
        a->fatal = std::make_exception_ptr(Error("the request body file ended early"));
        return CURL_READFUNC_ABORT;
      }
    } catch (...) {
      a->fatal = std::current_exception();
      return CURL_READFUNC_ABORT;
    }
  } else {
    std::uint64_t in_suffix = pos - f.prefix.size() - f.size;
    n = std::min<size_t>(room, f.suffix.size() - in_suffix);
    std::copy_n(f.suffix.data() + in_suffix, n, buffer);
  }
  a->body_sent += n;
  return n;
}

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

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* a = static_cast<Client::Attempt*>(user);
  if (a->cancelled == nullptr || !a->cancelled->load()) return 0;
  a->fatal = std::make_exception_ptr(Error("the transfer was cancelled"));
  return 1;
}

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
Response Client::send_once(const Request& request, const std::string& url, bool with_auth, const Sink& sink,
                           std::size_t max_body, Attempt& a) {
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
    // Without an overall timeout, a timeout once the answer has begun is the low-speed limit's.
    if (rc == CURLE_OPERATION_TIMEDOUT && a.response.status != 0) {
      why = "slower than " + std::to_string(options_.low_speed_limit) + " bytes/s for " + std::to_string(options_.low_speed_time_s) +
            " s (the low-speed limit)";
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
      throw Error(request.method + " " + display_url(url) + ": refusing a redirect to " + display_url(*next) + " (not http or https)");
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
        if (a.delivered > 0) throw Interrupted(why, a.delivered);
        throw Error(why);
      }
    }
    std::this_thread::sleep_for(delay);
  }
}

LibcurlVersion libcurl_version() { return {LIBCURL_VERSION, loaded_curl_version()}; }

// --- pure helpers -------------------------------------------------------------------------------------------

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

bool is_transient_status(long status) { return status == 408 || status == 429 || (status >= 500 && status != 501 && status != 505); }

std::string escape_for_message(std::string_view text, std::size_t max) { return escaped(text, max); }

}  // namespace ccpack::http
