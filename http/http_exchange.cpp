// libcurl's callbacks for one exchange of http/http.cpp's Client (declared in http/http_exchange.hpp): the
// response's status and headers, its body (to the caller's sink, or collected and capped) with the checks made on
// its first byte, the request body read from memory or a file range, and the cancel poll. A callback never throws
// into curl: it records why in the Attempt (`failure`, retried; `fatal`, rethrown as it is) and returns curl's
// abort value.
#include "http/http_exchange.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "util/fs.hpp"

namespace ccpack::http {

void Client::Attempt::start(const std::string& url, const Sink& with_sink, std::size_t with_max_body) {
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
  tls_handshake_failed = false;
  skip = 0;
  want.reset();
  finished = false;
  cancelled = nullptr;
}

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
  if (colon != std::string_view::npos)
    a->response.headers.emplace_back(lower(trim(line.substr(0, colon))), trim(line.substr(colon + 1)));
  return n;
}

namespace {

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
    return "Content-Length " + std::to_string(length) + " where " + std::to_string(expected) +
           " bytes were due (the resource has " + std::to_string(total) + ")";
  }
  return {};
}

}  // namespace

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
      a.fatal = std::make_exception_ptr(
          Error("response body of " + display_url(a.response.url) + " exceeds " + std::to_string(cap) + " bytes"));
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

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* a = static_cast<Client::Attempt*>(user);
  if (a->cancelled == nullptr || !a->cancelled->load()) return 0;
  a->fatal = std::make_exception_ptr(Error("the transfer was cancelled"));
  return 1;
}

}  // namespace ccpack::http
