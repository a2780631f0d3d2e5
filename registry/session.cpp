// The registry's /v2/ calls and the challenge flow; see session.hpp.
#include "registry/session.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "registry/auth.hpp"
#include "util/base64.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"

namespace ccpack::registry {
namespace {

using json = nlohmann::json;

std::string percent_encode(std::string_view s) {
  std::string out;
  for (unsigned char ch : s) {
    if (std::isalnum(ch) || ch == '-' || ch == '_' || ch == '.' || ch == '~') {
      out.push_back(static_cast<char>(ch));
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", ch);
      out += buf;
    }
  }
  return out;
}

// "NAME_UNKNOWN: repository name not known to registry" from a distribution error body, escaped and short.
std::string registry_error(const std::string& body) {
  json doc = json::parse(body, nullptr, false);
  if (!doc.is_object() || !doc.contains("errors") || !doc["errors"].is_array() || doc["errors"].empty()) return {};
  const json& e = doc["errors"][0];
  if (!e.is_object()) return {};
  std::string code = e.contains("code") && e["code"].is_string() ? e["code"].get<std::string>() : "";
  std::string message = e.contains("message") && e["message"].is_string() ? e["message"].get<std::string>() : "";
  return http::escape_for_message(code + (message.empty() ? "" : ": " + message), 160);
}

}  // namespace

Session::Session(oci::Reference reference, SessionOptions options) : ref_(std::move(reference)), options_(std::move(options)) {
  std::vector<Endpoint> endpoints = options_.endpoints;
  if (endpoints.empty() || options_.push) {
    Endpoint origin =
        endpoints.empty() ? Endpoint{ref_.registry, ref_.repository, options_.http.plain_http, false, false} : endpoints.back();
    endpoints = {origin};
  }
  for (const Endpoint& e : endpoints) {
    Site site;
    site.endpoint = e;
    std::string host = e.host == "docker.io" ? "registry-1.docker.io" : e.host;  // Docker Hub's API host
    site.base = std::string(e.insecure ? "http://" : "https://") + host;
    std::optional<std::string> origin = http::origin_of(site.base);
    if (!origin || e.repository.empty()) {
      throw UsageError("registry endpoint '" + http::escape_for_message(e.host + "/" + e.repository) +
                       "' is not a valid host and repository");
    }
    site.origin = *origin;
    http::Options http = options_.http;
    http.plain_http = e.insecure;
    if (e.mirror) {
      http.max_attempts = 1;
      http.connect_timeout_s = std::min(http.connect_timeout_s, kMirrorConnectTimeoutSeconds);
      http.low_speed_time_s = std::min(http.low_speed_time_s, kMirrorStallSeconds);
    }
    http.tls_failure_hint =
        e.mirror ? "if mirror " + e.host + " serves plain HTTP, set insecure = true in its registries.conf entry"
                 : "if " + e.host + " serves plain HTTP, pass --plain-http (or set insecure = true in its registries.conf entry)";
    site.client = std::make_unique<http::Client>(http);
    sites_.push_back(std::move(site));
  }
  at_ = served_ = sites_.size() - 1;
}

std::string Session::url(const std::string& path) const { return site().base + "/v2/" + site().endpoint.repository + path; }

std::vector<std::string> Session::endpoint_names() const {
  std::vector<std::string> out;
  for (const Site& s : sites_) out.push_back(s.endpoint.host + "/" + s.endpoint.repository);
  return out;
}

std::string Session::served_by() const { return sites_[served_].endpoint.host + "/" + sites_[served_].endpoint.repository; }

template <class F>
auto Session::each_site(bool by_digest, const std::atomic<bool>* cancelled, F request) {
  const std::size_t origin = sites_.size() - 1;
  cut_on_mirror_ = false;
  for (std::size_t i = 0;; ++i) {
    if (i < origin && ((sites_[i].endpoint.digest_only && !by_digest) || sites_[i].down)) continue;
    at_ = i;
    try {
      auto answer = request(i == origin);
      served_ = i;
      at_ = origin;
      return answer;
    } catch (const IntegrityError&) {
      at_ = origin;
      throw;  // a mirror serving other bytes is an integrity error, never a reason to ask elsewhere
    } catch (const http::Interrupted& e) {
      at_ = origin;
      if (i != origin && !(cancelled != nullptr && cancelled->load())) {
        sites_[i].down = true;  // defence: mirror-skip-down
        cut_on_mirror_ = true;
        if (on_fallback)
          on_fallback("mirror " + sites_[i].endpoint.host + " was cut (" + e.what() + "); skipping it from now on");
      }
      throw;  // bytes already reached the caller: it resumes from there, on the next endpoint
    } catch (const Error& e) {
      at_ = origin;
      if (i == origin || (cancelled != nullptr && cancelled->load())) throw;
      sites_[i].down = true;  // defence: mirror-skip-down
      if (on_fallback)
        on_fallback("mirror " + sites_[i].endpoint.host + " failed (" + e.what() +
                    "); trying the next endpoint, without this mirror from now on");
    }
  }
}

void Session::fail(const http::Request& request, const http::Response& response, const std::string& doing) const {
  std::string what = doing + " " + site().endpoint.repository + " on " + site().endpoint.host + ": ";
  std::string detail = registry_error(response.body);
  if (response.status == 401 || response.status == 403) {
    throw Error(what + "access denied (HTTP " + std::to_string(response.status) +
                "); check the credentials (--authfile, REGISTRY_AUTH_FILE, ~/.docker/config.json)" +
                (detail.empty() ? "" : " [" + detail + "]"));
  }
  throw Error(what + request.method + " " + http::display_url(response.url) + " answered HTTP " +
              std::to_string(response.status) + (detail.empty() ? "" : " [" + detail + "]"));
}

http::Response Session::send(http::Request request, const http::Sink& sink, std::size_t max_body) {
  bool ours = http::origin_of(request.url) == site().origin;
  if (ours) request.authorization = site().authorization;
  http::Response r = site().client->send(request, sink, max_body);
  if (r.status == 401 && ours && authenticate(r)) {
    request.authorization = site().authorization;
    r = site().client->send(request, sink, max_body);
  }
  return r;
}

bool Session::authenticate(const http::Response& response) {
  std::optional<Challenge> c = parse_challenge(response.header("www-authenticate"));
  if (!c) return false;
  std::optional<Credentials> creds = find_credentials(site().endpoint.host, options_.authfile);
  std::string& authorization = site().authorization;
  std::string before = authorization;
  if (c->scheme == "basic") {
    if (!creds || creds->username.empty()) return false;
    authorization = "Basic " + base64_encode(creds->username + ":" + creds->password);
  } else if (c->scheme == "bearer") {
    authorization = "Bearer " + fetch_token(*c);
  } else {
    return false;
  }
  return authorization != before;
}

std::string Session::fetch_token(const Challenge& c) {
  const std::string& host = site().endpoint.host;
  if (c.realm.empty()) throw Error("registry " + host + " asked for a bearer token without naming a realm");
  std::string scope = "repository:" + site().endpoint.repository + (options_.push ? ":pull,push" : ":pull");
  std::optional<Credentials> creds = find_credentials(host, options_.authfile);
  http::Request r;
  std::string query = "service=" + percent_encode(c.service) + "&scope=" + percent_encode(scope);
  if (creds && !creds->identity_token.empty()) {  // OAuth2 refresh-token grant, as docker does
    r.method = "POST";
    r.url = c.realm;
    r.headers.emplace_back("Content-Type: application/x-www-form-urlencoded");
    r.body = query + "&grant_type=refresh_token&client_id=ccpack&refresh_token=" + percent_encode(creds->identity_token);
  } else {
    r.url = c.realm + (c.realm.find('?') == std::string::npos ? "?" : "&") + query;
    if (creds && !creds->username.empty()) r.authorization = "Basic " + base64_encode(creds->username + ":" + creds->password);
  }
  http::Response resp = site().client->send(r);
  std::string realm = http::display_url(c.realm);
  if (resp.status != 200) {
    throw Error("token server " + realm + " for " + host + " answered HTTP " + std::to_string(resp.status) +
                (resp.status == 401 || resp.status == 403 ? " (check the credentials)" : ""));
  }
  json doc = json::parse(resp.body, nullptr, false);
  for (const char* key : {"token", "access_token"}) {
    if (doc.is_object() && doc.contains(key) && doc[key].is_string() && !doc[key].get_ref<const std::string&>().empty()) {
      std::string token = doc[key].get<std::string>();
      for (char ch : token) {  // it goes into a header: no control characters or spaces
        if (static_cast<unsigned char>(ch) <= 0x20 || ch == 0x7f)
          throw Error("token server " + realm + " sent a malformed token");
      }
      return token;
    }
  }
  throw Error("token server " + realm + " answered without a token");
}

std::optional<Document> Session::get_manifest(const std::string& reference) {
  bool by_digest = oci::parse_digest(reference).has_value();
  return each_site(by_digest, nullptr, [&](bool last) -> std::optional<Document> {
    http::Request r;
    r.url = url("/manifests/" + reference);
    r.headers.push_back("Accept: " + std::string(oci::kManifestAccept));
    http::Response resp = send(r);
    if (resp.status == 404 && last) return std::nullopt;
    if (resp.status != 200) fail(r, resp, "reading manifest " + http::escape_for_message(reference) + " of");
    Document d;
    d.bytes = std::move(resp.body);
    d.digest = oci::digest_of(d.bytes);
    std::string expected = by_digest ? reference : resp.header("docker-content-digest");
    if (!expected.empty() && expected.starts_with("sha256:") && expected != d.digest) {
      throw IntegrityError("manifest " + http::escape_for_message(reference) + " of " + ref_.str() + " from " +
                           site().endpoint.host + " has digest " + d.digest + ", expected " + http::escape_for_message(expected));
    }
    d.media_type = oci::media_type_of(d.bytes, resp.header("content-type"));
    return d;
  });
}

std::optional<std::string> Session::get_referrers(const std::string& digest) {
  return each_site(true, nullptr, [&](bool) -> std::optional<std::string> {
    http::Request r;
    r.url = url("/referrers/" + digest);
    r.headers.push_back("Accept: " + std::string(oci::kImageIndexType));
    http::Response resp = send(r);
    // No API (404, 405, a page that is not an index: a registry that routes the path elsewhere): the caller reads
    // the fallback tag. The API answers with an image index, and says so.
    if (resp.status != 200 || !resp.header("content-type").starts_with(oci::kImageIndexType)) return std::nullopt;
    return std::move(resp.body);
  });
}

std::string Session::put_manifest(const std::string& reference, const std::string& bytes, std::string_view media_type,
                                  bool* subject_indexed) {
  http::Request r;
  r.method = "PUT";
  r.url = url("/manifests/" + reference);
  r.headers.push_back("Content-Type: " + std::string(media_type));
  r.body = bytes;
  http::Response resp = send(r);
  if (resp.status != 201 && resp.status != 200) fail(r, resp, "storing manifest " + http::escape_for_message(reference) + " in");
  if (subject_indexed != nullptr) *subject_indexed = !resp.header("oci-subject").empty();
  std::string digest = oci::digest_of(bytes);
  std::string claimed = resp.header("docker-content-digest");
  if (!claimed.empty() && claimed != digest) {
    throw IntegrityError("registry " + site().endpoint.host + " stored the manifest under digest " +
                         http::escape_for_message(claimed) + ", expected " + digest);
  }
  return digest;
}

namespace {

// A page of the tag list, checked before any of it is kept: no more tags than asked for, no more in all than the
// bound, each a valid tag.
void check_tag_page(const nlohmann::json& list, std::size_t kept, const std::string& ref) {
  // defence: tag-page-count
  if (list.size() > Session::kTagPage) {
    throw Error("the tag list of " + ref + " sent " + std::to_string(list.size()) + " tags in one page, more than the " +
                std::to_string(Session::kTagPage) + " asked for");
  }
  // defence: tag-total-count
  if (kept + list.size() > Session::kTagPage * Session::kMaxTagPages) {
    throw Error("the tag list of " + ref + " has more than " + std::to_string(Session::kTagPage * Session::kMaxTagPages) +
                " tags");
  }
  for (const nlohmann::json& t : list) {
    if (!t.is_string()) throw IntegrityError("the tag list of " + ref + " holds a tag that is not a string");
    if (!oci::is_valid_tag(t.get_ref<const std::string&>())) {
      throw IntegrityError("the tag list of " + ref + " holds " + quoted_name(t.get_ref<const std::string&>()) +
                           ", not a valid tag");
    }
  }
}

}  // namespace

std::vector<std::string> Session::list_tags() {
  std::vector<std::string> tags;
  std::string last;                      // the last tag of the page before, as the registry listed it (its order is its own)
  for (std::size_t page = 0;; ++page) {  // ends at a short page, a repeated one, or check_tag_page's total bound
    http::Request r;
    r.url = url("/tags/list?n=" + std::to_string(kTagPage) + (last.empty() ? "" : "&last=" + last));
    // defence: tag-page-bytes
    http::Response resp = send(r, {}, kTagPageBytes);
    if (resp.status == 404 && page == 0) return tags;  // no repository yet: no tags
    if (resp.status != 200) fail(r, resp, "listing the tags of");
    nlohmann::json doc = nlohmann::json::parse(resp.body, nullptr, false);
    if (!doc.is_object()) throw IntegrityError("the tag list of " + ref_.str() + " is not a JSON object");
    auto list = doc.find("tags");
    if (list == doc.end() || list->is_null()) break;
    if (!list->is_array()) throw IntegrityError("the tag list of " + ref_.str() + " has no 'tags' array");
    check_tag_page(*list, tags.size(), ref_.str());
    for (const nlohmann::json& t : *list) tags.push_back(t.get<std::string>());
    if (list->size() < kTagPage || list->empty() || tags.back() == last) break;
    last = tags.back();
  }
  std::sort(tags.begin(), tags.end());
  tags.erase(std::unique(tags.begin(), tags.end()), tags.end());  // a registry that ignores `last` repeats itself
  return tags;
}

bool Session::blob_exists(const std::string& digest) {
  http::Request r;
  r.method = "HEAD";
  r.url = url("/blobs/" + digest);
  http::Response resp = send(r);
  if (resp.status == 200) return true;
  if (resp.status == 404) return false;
  fail(r, resp, "checking blob " + digest + " of");
}

// POST, then PUT `put` (which carries the body) at the Location the POST gave, with ?digest=.
void Session::upload(const std::string& digest, http::Request put) {
  http::Request start;
  start.method = "POST";
  start.url = url("/blobs/uploads/");
  http::Response resp = send(start);
  if (resp.status != 202) fail(start, resp, "starting an upload to");
  std::optional<std::string> location = http::resolve_url(resp.url, resp.header("location"));
  if (!location) throw Error("registry " + site().endpoint.host + " started an upload without a valid Location");
  put.method = "PUT";
  put.url = *location + (location->find('?') == std::string::npos ? "?" : "&") + "digest=" + percent_encode(digest);
  put.headers.emplace_back("Content-Type: application/octet-stream");
  resp = send(put);
  if (resp.status != 201) fail(put, resp, "uploading blob " + digest + " to");
}

void Session::upload_blob(const std::string& digest, const http::FileRange& body) {
  http::Request put;
  put.file_body = body;
  upload(digest, std::move(put));
}

void Session::upload_blob(const std::string& digest, const std::string& body) {
  http::Request put;
  put.body = body;
  upload(digest, std::move(put));
}

Session::BlobRead Session::get_blob(const std::string& digest, std::uint64_t first, std::optional<std::uint64_t> last,
                                    const http::Sink& sink, const BlobOptions& how) {
  std::uint64_t before = 0;  // bytes a mirror delivered before it was cut: the next endpoint gives the rest
  for (;;) {
    try {
      BlobRead read = each_site(true, how.cancelled, [&](bool) {
        http::Request r;
        r.url = url("/blobs/" + digest);
        r.cancelled = how.cancelled;
        r.resume_at_byte = how.resume_at_byte;
        r.total_size = how.total_size;
        if (first + before > 0 || last) r.range_first = first + before;
        r.range_last = last;
        http::Response resp = send(r, sink);
        if (resp.status != 200 && resp.status != 206) fail(r, resp, "reading blob " + digest + " of");
        return BlobRead{resp.body_bytes, resp.status};
      });
      read.bytes += before;
      return read;
    } catch (const http::Interrupted& e) {
      // A caller that resumes from its own checked point (resume_at_byte false) is told; else the rest comes
      // from the next endpoint (the mirror is down now, so this ends at the origin).
      if (!how.resume_at_byte || !cut_on_mirror_) throw;
      before += e.delivered();
    }
  }
}

}  // namespace ccpack::registry
