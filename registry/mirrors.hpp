// Registry mirrors as container tools read them: containers-registries.conf(5), so a file written for podman
// works unchanged.
//
// A reference matches the [[registry]] with the longest prefix that equals it up to a '/' or ':' boundary (no
// prefix: the location is the prefix). A pull then tries each mirror in order and the (possibly rewritten)
// location last: the part of the reference after the prefix is appended to each location. With
// mirror-by-digest-only, manifests asked by tag skip the mirrors (blobs are always asked by digest). An
// insecure endpoint is spoken to over plain HTTP. Whatever a mirror serves is checked exactly as the origin's
// would be: a digest that differs is an integrity error, never a reason to try the next endpoint.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "registry/oci.hpp"

namespace ccpack::registry {

struct MirrorEntry {
  std::string location;
  bool insecure = false;
};

struct RegistryEntry {
  std::string prefix;
  std::string location;
  bool insecure = false;
  bool blocked = false;
  bool mirror_by_digest_only = false;
  std::vector<MirrorEntry> mirrors;
};

struct RegistriesConf {
  std::vector<RegistryEntry> registries;
  std::vector<std::string> files;  // the files read, for messages
};

// Parses one file's text; `what` names it in errors ("FILE:LINE: ..."). The TOML subset read (everything else is
// ignored):
//   [[registry]]            prefix = "host[:port][/path]"  location = "host[:port][/path]"  insecure = true|false
//                           blocked = true|false  mirror-by-digest-only = true|false
//   [[registry.mirror]]     location = "..."  insecure = true|false   (belongs to the [[registry]] above it)
// Strings are "double-quoted" (with \" and \\ escapes) or 'literal'; # starts a comment.
[[nodiscard]] std::vector<RegistryEntry> parse_registries_conf(std::string_view text, std::string_view what);
// Reads the configuration; `explicit_file` is --registries-conf ("" for the defaults). Where: --registries-conf
// FILE, else $CONTAINERS_REGISTRIES_CONF, else /etc/containers/registries.conf and then the *.conf files of
// /etc/containers/registries.conf.d/ in name order (a later [[registry]] with the same prefix replaces an earlier
// one, as in containers/image). A file that does not exist is no error; one that does not parse is (Error naming
// the file and line).
[[nodiscard]] RegistriesConf load_registries_conf(const std::string& explicit_file);

// One place to ask: the registry host[:port] and the repository there.
struct Endpoint {
  std::string host;
  std::string repository;
  bool insecure = false;
  bool mirror = false;
  bool digest_only = false;  // a mirror of a mirror-by-digest-only entry: not for manifests asked by tag
};

// The endpoints a pull of `ref` tries, in order (mirrors first, the origin last; the origin alone when nothing
// matches). `plain_http` (--plain-http) applies to the origin. Throws Error when the matching entry is blocked.
[[nodiscard]] std::vector<Endpoint> pull_endpoints(const RegistriesConf& conf, const registry::oci::Reference& ref,
                                                   bool plain_http);

}  // namespace ccpack::registry
