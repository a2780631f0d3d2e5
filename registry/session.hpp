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

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "http/http.hpp"
#include "registry/auth.hpp"
#include "registry/mirrors.hpp"
#include "registry/oci.hpp"

namespace ccpack::registry {

// A mirror is a shortcut, not a dependency: it gets one attempt per request, a shorter connect timeout and a
// shorter low-speed limit than the origin (http::Options), and once it fails or stalls it is skipped for the rest
// of the session (one run of ccpack), so a mirror that accepts connections and never answers costs one stall,
// not one per request and attempt.
inline constexpr long kMirrorConnectTimeoutSeconds = 5;
inline constexpr long kMirrorStallSeconds = 10;

struct SessionOptions {
  http::Options http;
  std::string authfile;  // --authfile ("" for the standard places)
  bool push = false;     // ask for push rights as well as pull
  // Where pulls go (registry/mirrors.hpp: mirrors first, the origin last); empty: the reference's registry alone.
  // Pushes always go to the origin (the last one).
  std::vector<Endpoint> endpoints;
};

// A manifest or index as fetched: its exact bytes (the digest covers them), media type and digest.
struct Document {
  std::string bytes;
  std::string media_type;
  std::string digest;  // "sha256:..." of `bytes`, checked
};

class Session {
 public:
  Session(registry::oci::Reference reference, SessionOptions options);

  [[nodiscard]] const registry::oci::Reference& reference() const { return ref_; }

  // GET /v2/<repo>/manifests/<reference>; nullopt on 404. Throws IntegrityError when the bytes do not match the
  // digest asked for or claimed.
  [[nodiscard]] std::optional<Document> get_manifest(const std::string& reference);
  // PUT a manifest or index under a tag or its digest; returns the digest the registry stored. `subject_indexed`:
  // whether the registry answered with an OCI-Subject header (it indexes the manifest's subject itself).
  std::string put_manifest(const std::string& reference, const std::string& bytes, std::string_view media_type,
                           bool* subject_indexed = nullptr);
  // GET /v2/<repo>/referrers/<digest>: the body when the registry answers 200 with an image index (its referrers
  // API), nullopt for any other answer (a registry without the API); the body is bounded as a manifest is, and
  // untrusted.
  [[nodiscard]] std::optional<std::string> get_referrers(const std::string& digest);

  // GET /v2/<repo>/tags/list from the origin (mirrors do not list), page by page (?n=&last=, as distribution
  // pages), at most kMaxTagPages pages of kTagPage tags (one more full page is refused, never cut off in silence).
  // Bounded before anything is kept (docs/REGISTRY.md,
  // "Bounds"): a page's body is read to kTagPageBytes and no further, a page with more than the kTagPage tags
  // asked for is refused at once (a registry that ignores `n`), every tag must be a valid tag (at most 128
  // characters, oci::valid_tag), and the tags kept never pass kTagPage * kMaxTagPages. Throws Error on a bound,
  // IntegrityError when an answer does not parse.
  static constexpr std::size_t kTagPage = 1000;
  static constexpr std::size_t kMaxTagPages = 100;
  // A full page of the longest tags, quoted and comma-separated, with room for the rest of the object.
  static constexpr std::size_t kTagPageBytes = kTagPage * (128 + 3) + (16u << 10);
  [[nodiscard]] std::vector<std::string> list_tags();

  [[nodiscard]] bool blob_exists(const std::string& digest);
  // POST an upload, then PUT the bytes with ?digest= (a single POST's body is ignored by distribution).
  void upload_blob(const std::string& digest, const http::FileRange& body);
  void upload_blob(const std::string& digest, const std::string& body);
  // GET bytes [first, last] (last: to the end when nullopt) of a blob into `sink`; a 200 answer is skipped into.
  // `how`: stop when `*cancelled` turns true; resume after a cut with Range from the last byte (or throw
  // http::Interrupted, for a caller that resumes from a checked point); the blob's size, which the registry's
  // announced lengths must agree with.
  struct BlobOptions {
    const std::atomic<bool>* cancelled = nullptr;
    bool resume_at_byte = true;
    std::optional<std::uint64_t> total_size;
  };
  struct BlobRead {
    std::uint64_t bytes = 0;  // delivered to the sink
    long status = 0;          // 206, or 200 when the registry ignored Range (and the start was skipped)
  };
  BlobRead get_blob(const std::string& digest, std::uint64_t first, std::optional<std::uint64_t> last, const http::Sink& sink,
                    const BlobOptions& how);
  BlobRead get_blob(const std::string& digest, std::uint64_t first, std::optional<std::uint64_t> last, const http::Sink& sink) {
    return get_blob(digest, first, last, sink, BlobOptions{});
  }

  // The endpoints this session tries, in order, and the one that answered the last pull request ("host/repo").
  [[nodiscard]] std::vector<std::string> endpoint_names() const;
  [[nodiscard]] std::string served_by() const;
  // Told when an endpoint fails and the next one is tried (a mirror that is down); may be empty.
  std::function<void(const std::string& line)> on_fallback;

 private:
  // One endpoint: a mirror or the origin, each with its client and the Authorization that works there.
  struct Site {
    Endpoint endpoint;
    std::string base;    // "https://host:port"
    std::string origin;  // origin_of(base)
    std::unique_ptr<http::Client> client;
    std::string authorization;
    bool down = false;  // a mirror that failed or stalled once: skipped from then on
  };
  // Runs `request` against each endpoint in turn (mirrors skipped for manifests by tag when digest-only, and
  // mirrors that are down) until one answers; a mirror that fails is marked down; an integrity error, a cut after bytes were
  // delivered or a cancellation is never retried elsewhere. `request(last)` is told whether it runs on the last endpoint (a
  // mirror's 404 means: try the next).
  template <class F>
  auto each_site(bool by_digest, const std::atomic<bool>* cancelled, F request);
  [[nodiscard]] Site& site() { return sites_[at_]; }
  [[nodiscard]] const Site& site() const { return sites_[at_]; }

  http::Response send(http::Request request, const http::Sink& sink = {}, std::size_t max_body = http::kMaxDocumentBytes);
  void upload(const std::string& digest, http::Request put);
  bool authenticate(const http::Response& challenge_response);
  std::string fetch_token(const Challenge& c);
  [[nodiscard]] std::string url(const std::string& path) const;
  [[noreturn]] void fail(const http::Request& request, const http::Response& response, const std::string& doing) const;

  registry::oci::Reference ref_;
  SessionOptions options_;
  std::vector<Site> sites_;     // mirrors, then the origin (last)
  std::size_t at_ = 0;          // the site of the request in flight
  std::size_t served_ = 0;      // the site that answered the last pull request
  bool cut_on_mirror_ = false;  // the last request was cut (http::Interrupted) on a mirror, now down
};

}  // namespace ccpack::registry
