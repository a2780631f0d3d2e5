// One conversation with an OCI distribution registry about one repository: the /v2/ API calls ccpack needs
// (manifests, blobs, uploads), authenticated the way container tools do it.
//
// Authentication is lazy: a request goes out anonymously (or with the header that worked before); on 401 the
// WWW-Authenticate challenge decides: Basic sends the configured user:password, Bearer fetches a token from the
// realm for "repository:<repo>:pull" (",push" when pushing), with Basic credentials or an identity token
// (OAuth2 refresh-token grant), and the request is sent again once. The Authorization header goes only to the
// registry's own origin (the HTTP layer enforces it across redirects; here for upload Locations).
//
// Everything the registry says is untrusted: manifests are fetched with a bounded size and checked against the
// digest they were asked by (or the Docker-Content-Digest the registry claims, when asked by tag), and blob
// bytes are handed to a sink that hashes them; error bodies are shown escaped and cut short.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "manifest/oci.hpp"
#include "registry/auth.hpp"
#include "util/http.hpp"

namespace ccpack::registry {

struct SessionOptions {
  http::Options http;
  std::string authfile;  // --authfile ("" for the standard places)
  bool push = false;     // ask for push rights as well as pull
};

// A manifest or index as fetched: its exact bytes (the digest covers them), media type and digest.
struct Document {
  std::string bytes;
  std::string media_type;
  std::string digest;  // "sha256:..." of `bytes`, checked
};

class Session {
 public:
  Session(manifest::oci::Reference reference, SessionOptions options);

  [[nodiscard]] const manifest::oci::Reference& reference() const { return ref_; }

  // GET /v2/<repo>/manifests/<reference>; nullopt on 404. Throws IntegrityError when the bytes do not match the
  // digest asked for or claimed.
  [[nodiscard]] std::optional<Document> get_manifest(const std::string& reference);
  // PUT a manifest or index under a tag or its digest; returns the digest the registry stored.
  std::string put_manifest(const std::string& reference, const std::string& bytes, std::string_view media_type);

  [[nodiscard]] bool blob_exists(const std::string& digest);
  // POST an upload, then PUT the bytes with ?digest= (a single POST's body is ignored by distribution).
  void upload_blob(const std::string& digest, const http::FileRange& body);
  void upload_blob(const std::string& digest, const std::string& body);
  // GET bytes [first, last] (last: to the end when nullopt) of a blob into `sink`; resumes after a cut
  // (Range), a 200 answer is skipped into; stops when `*cancelled` turns true. Returns the bytes delivered.
  std::uint64_t get_blob(const std::string& digest, std::uint64_t first, std::optional<std::uint64_t> last,
                         const http::Sink& sink, const std::atomic<bool>* cancelled = nullptr);

  // Bytes of blob content received so far (what a refused pull must keep at zero past the header).
  [[nodiscard]] std::uint64_t blob_bytes_received() const { return blob_bytes_; }

 private:
  http::Response send(http::Request request, const http::Sink& sink = {}, std::size_t max_body = http::kMaxDocumentBytes);
  void upload(const std::string& digest, http::Request put);
  bool authenticate(const http::Response& challenge_response);
  std::string fetch_token(const Challenge& c);
  [[nodiscard]] std::string url(const std::string& path) const;
  [[noreturn]] void fail(const http::Request& request, const http::Response& response, const std::string& doing) const;

  manifest::oci::Reference ref_;
  SessionOptions options_;
  std::unique_ptr<http::Client> client_;
  std::string base_;           // "https://host:port"
  std::string origin_;         // origin_of(base_)
  std::string authorization_;  // the header value that works, once known
  bool credentials_loaded_ = false;
  std::uint64_t blob_bytes_ = 0;
};

}  // namespace ccpack::registry
