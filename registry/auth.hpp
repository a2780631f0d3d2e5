// Registry credentials and challenges, read the way docker, podman and skopeo read them, so a pod that can pull
// its images can pull its caches with the same secret.
//
// Where credentials come from, first match wins:
//   --authfile FILE, else $REGISTRY_AUTH_FILE (only that file, which must exist), else the first of
//   $DOCKER_CONFIG/config.json, ~/.docker/config.json, $XDG_RUNTIME_DIR/containers/auth.json that has an entry.
// In a file: "auths": {"<host[:port]>" or "https://<host>/v1/": {"auth": base64("user:pass")} or
// {"username","password"}, optionally "identitytoken"}, and "credHelpers": {"<host>": "<name>"} /
// "credsStore": "<name>", which run `docker-credential-<name> get` (server on stdin, JSON on stdout, bounded).
//
// Secrets never go into a message: errors name the file and the registry, never a value.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ccpack::registry {

struct Credentials {
  std::string username;
  std::string password;
  std::string identity_token;  // an OAuth2 refresh token (docker login with an identity provider)
  std::string source;          // where they came from, for messages: a file name or "docker-credential-x"
};

// The credentials for `registry` (host[:port]); nullopt when none are configured (anonymous access).
// `authfile` is the --authfile value ("" when not given). Throws Error naming the file when a file named by a
// flag or variable is missing or malformed.
[[nodiscard]] std::optional<Credentials> find_credentials(std::string_view registry, const std::string& authfile);

// The entry for `registry` in one config file's text; `helper` receives a credential helper name when the file
// names one for this registry instead. Throws Error naming `file` when it is malformed.
[[nodiscard]] std::optional<Credentials> credentials_in_config(std::string_view text, std::string_view registry,
                                                               const std::string& file, std::string* helper);

// A parsed WWW-Authenticate challenge: `Bearer realm="...",service="...",scope="..."` or `Basic realm="..."`.
struct Challenge {
  std::string scheme;  // lower case: "basic", "bearer"
  std::string realm;
  std::string service;
  std::string scope;
};
// The first challenge of a header value; nullopt when it does not parse (bounded: 4 KiB, 16 parameters).
[[nodiscard]] std::optional<Challenge> parse_challenge(std::string_view header);

}  // namespace ccpack::registry
