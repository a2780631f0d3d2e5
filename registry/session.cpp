// The registry's /v2/ calls and the challenge flow; see session.hpp.
#include "registry/session.hpp"

#include <nlohmann/json.hpp>

#include "registry/auth.hpp"
#include "util/error.hpp"

namespace ccpack::registry {
namespace oci = manifest::oci;
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

Session::Session(oci::Reference reference, SessionOptions options)
    : ref_(std::move(reference)), options_(std::move(options)), client_(std::make_unique<http::Client>(options_.http)) {
  base_ = std::string(options_.http.plain_http ? "http://" : "https://") + ref_.api_host();
  std::optional<std::string> origin = http::origin_of(base_);
  if (!origin) throw UsageError("registry host '" + http::escape_for_message(ref_.registry) + "' is not a valid host");
  origin_ = *origin;
}

std::string Session::url(const std::string& path) const { return base_ + "/v2/" + ref_.repository + path; }

void Session::fail(const http::Request& request, const http::Response& response, const std::string& doing) const {
  std::string what = doing + " " + ref_.repository + " on " + ref_.registry + ": ";
  std::string detail = registry_error(response.body);
  if (response.status == 401 || response.status == 403) {
    throw Error(what + "access denied (HTTP " + std::to_string(response.status) +
                "); check the credentials (--authfile, REGISTRY_AUTH_FILE, ~/.docker/config.json)" +
                (detail.empty() ? "" : " [" + detail + "]"));
  }
  throw Error(what + request.method + " " + http::display_url(response.url) + " answered HTTP " + std::to_string(response.status) +
              (detail.empty() ? "" : " [" + detail + "]"));
}

http::Response Session::send(http::Request request, const http::Sink& sink, std::size_t max_body) {
  bool ours = http::origin_of(request.url) == origin_;
  if (ours) request.authorization = authorization_;
  http::Response r = client_->send(request, sink, max_body);
  if (r.status == 401 && ours && authenticate(r)) {
    request.authorization = authorization_;
    r = client_->send(request, sink, max_body);
  }
  return r;
}

bool Session::authenticate(const http::Response& response) {
  std::optional<Challenge> c = parse_challenge(response.header("www-authenticate"));
  if (!c) return false;
  std::optional<Credentials> creds = find_credentials(ref_.registry, options_.authfile);
  std::string before = authorization_;
  if (c->scheme == "basic") {
    if (!creds || creds->username.empty()) return false;
    authorization_ = "Basic " + base64_encode(creds->username + ":" + creds->password);
  } else if (c->scheme == "bearer") {
    authorization_ = "Bearer " + fetch_token(*c);
  } else {
    return false;
  }
  return authorization_ != before;
}

std::string Session::fetch_token(const Challenge& c) {
  if (c.realm.empty()) throw Error("registry " + ref_.registry + " asked for a bearer token without naming a realm");
  std::string scope = "repository:" + ref_.repository + (options_.push ? ":pull,push" : ":pull");
  std::optional<Credentials> creds = find_credentials(ref_.registry, options_.authfile);
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
  http::Response resp = client_->send(r);
  std::string realm = http::display_url(c.realm);
  if (resp.status != 200) {
    throw Error("token server " + realm + " for " + ref_.registry + " answered HTTP " + std::to_string(resp.status) +
                (resp.status == 401 || resp.status == 403 ? " (check the credentials)" : ""));
  }
  json doc = json::parse(resp.body, nullptr, false);
  for (const char* key : {"token", "access_token"}) {
    if (doc.is_object() && doc.contains(key) && doc[key].is_string() && !doc[key].get_ref<const std::string&>().empty()) {
      std::string token = doc[key].get<std::string>();
      for (char ch : token) {  // it goes into a header: no control characters or spaces
        if (static_cast<unsigned char>(ch) <= 0x20 || ch == 0x7f) throw Error("token server " + realm + " sent a malformed token");
      }
      return token;
    }
  }
  throw Error("token server " + realm + " answered without a token");
}

std::optional<Document> Session::get_manifest(const std::string& reference) {
  http::Request r;
  r.url = url("/manifests/" + reference);
  r.headers.push_back("Accept: " + std::string(oci::kManifestAccept));
  http::Response resp = send(r);
  if (resp.status == 404) return std::nullopt;
  if (resp.status != 200) fail(r, resp, "reading manifest " + http::escape_for_message(reference) + " of");
  Document d;
  d.bytes = std::move(resp.body);
  d.digest = oci::digest_of(d.bytes);
  std::string expected = oci::parse_digest(reference) ? reference : resp.header("docker-content-digest");
  if (!expected.empty() && expected.starts_with("sha256:") && expected != d.digest) {
    throw IntegrityError("manifest " + http::escape_for_message(reference) + " of " + ref_.str() + " has digest " + d.digest +
                         ", expected " + http::escape_for_message(expected));
  }
  d.media_type = oci::media_type_of(d.bytes, resp.header("content-type"));
  return d;
}

std::string Session::put_manifest(const std::string& reference, const std::string& bytes, std::string_view media_type) {
  http::Request r;
  r.method = "PUT";
  r.url = url("/manifests/" + reference);
  r.headers.push_back("Content-Type: " + std::string(media_type));
  r.body = bytes;
  http::Response resp = send(r);
  if (resp.status != 201 && resp.status != 200) fail(r, resp, "storing manifest " + http::escape_for_message(reference) + " in");
  std::string digest = oci::digest_of(bytes);
  std::string claimed = resp.header("docker-content-digest");
  if (!claimed.empty() && claimed != digest) {
    throw IntegrityError("registry " + ref_.registry + " stored the manifest under digest " + http::escape_for_message(claimed) +
                         ", expected " + digest);
  }
  return digest;
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
  if (!location) throw Error("registry " + ref_.registry + " started an upload without a valid Location");
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

std::uint64_t Session::get_blob(const std::string& digest, std::uint64_t first, std::optional<std::uint64_t> last,
                                const http::Sink& sink, const std::atomic<bool>* cancelled) {
  http::Request r;
  r.url = url("/blobs/" + digest);
  r.cancelled = cancelled;
  if (first > 0 || last) r.range_first = first;
  r.range_last = last;
  http::Sink counting = [&](const char* data, std::size_t size) {
    blob_bytes_ += size;
    sink(data, size);
  };
  http::Response resp = send(r, counting);
  if (resp.status != 200 && resp.status != 206) fail(r, resp, "reading blob " + digest + " of");
  return resp.body_bytes;
}

}  // namespace ccpack::registry
