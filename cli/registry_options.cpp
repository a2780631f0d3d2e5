// The registry options and limits shared by push, pull and restore oci:// (see registry_options.hpp).
#include "cli/registry_options.hpp"

#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include "manifest/signature.hpp"
#include "manifest/trusted_keys.hpp"
#include "registry/cosign_signatures.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"
#include "util/fs.hpp"

namespace ccpack::cli {

void add_registry_options(CLI::App* cmd, RegistryOptions& options, bool pulls) {
  cmd->add_flag("--plain-http", options.plain_http,
                "Talk to the registry over plain HTTP (never the default; also $CCPACK_PLAIN_HTTP=1)");
  cmd->add_option("--ca-file", options.ca_file,
                  "PEM file of CA certificates to verify the registry's TLS with (default: $CCPACK_CA_FILE)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--authfile", options.authfile,
                  "Registry credentials file (default: $REGISTRY_AUTH_FILE, $DOCKER_CONFIG/config.json, "
                  "~/.docker/config.json, $XDG_RUNTIME_DIR/containers/auth.json)");
  if (!pulls) return;
  cmd->add_option("--registries-conf", options.registries_conf,
                  "Mirrors to pull through, as containers-registries.conf(5) (default: $CONTAINERS_REGISTRIES_CONF, else "
                  "/etc/containers/registries.conf and registries.conf.d/)");
}

namespace {

// A whole number of $NAME in [low, high], or `fallback` when unset or empty.
long env_number(const char* name, long fallback, long low, long high) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  errno = 0;
  long n = std::strtol(v, &end, 10);
  if (errno != 0 || *end != '\0' || n < low || n > high) {
    throw UsageError(std::string(name) + " must be a whole number from " + std::to_string(low) + " to " + std::to_string(high) +
                     ", got '" + escaped(v, 40) + "'");
  }
  return n;
}

// $NAME as a switch: 1 on, 0 or unset or empty off; anything else is a usage error.
bool env_switch(const char* name) {
  const char* v = std::getenv(name);
  std::string value = v != nullptr ? v : "";
  if (value != "" && value != "0" && value != "1")
    throw UsageError(std::string("$") + name + " must be 1 or 0, got '" + escaped(value, 40) + "'");
  return value == "1";
}

}  // namespace

registry::SessionOptions session_options(const RegistryOptions& options, bool push, const registry::oci::Reference& ref) {
  registry::SessionOptions s;
  const bool plain_http = options.plain_http || env_switch(kPlainHttpVar);
  const char* ca_env = std::getenv(kCaFileVar);
  s.http.plain_http = plain_http;
  s.http.ca_file = !options.ca_file.empty() ? options.ca_file : ca_env != nullptr ? ca_env : "";
  s.authfile = options.authfile;
  s.push = push;
  s.http.low_speed_time_s = env_number("CCPACK_LOW_SPEED_TIME", s.http.low_speed_time_s, 1, 3600);
  s.http.low_speed_limit = env_number("CCPACK_LOW_SPEED_LIMIT", s.http.low_speed_limit, 1, 1L << 30);
  if (!push) s.endpoints = registry::pull_endpoints(registry::load_registries_conf(options.registries_conf), ref, plain_http);
  return s;
}

void require_file_or_reference(const std::string& archive) {
  if (registry::oci::is_reference(archive)) return;
  std::error_code ec;
  if (std::filesystem::symlink_status(archive, ec).type() != std::filesystem::file_type::not_found) return;
  std::optional<std::string> ref = registry::oci::scheme_less_reference(archive);
  if (!ref) return;  // not a reference either: the file's own error follows
  throw UsageError("no file " + quoted_path(archive) +
                   "; a registry reference is written with its scheme: " + escaped(*ref, 300));
}

std::string check_archive_signature(const manifest::ArchiveHeader& header, const std::string& what) {
  // The signature is judged where the archive is used: `restore oci://` runs the trust gate on this header
  // before any payload byte (unpack/restore.hpp); a pulled file is judged by verify and restore like any other.
  (void)what;
  // A block that does not parse is judged there too (refused), as any signed one is.
  bool none = false;
  try {
    none = manifest::parse_signature_block(header.signatures).empty();
  } catch (const IntegrityError&) {
  }
  return none ? "none (unsigned)" : "present (checked by restore and verify)";
}

std::string require_cosign(registry::Session& session, const registry::RemoteArchive& remote, const registry::oci::Reference& ref,
                           const TrustOptions& trust) {
  registry::CosignSubject subject{remote.manifest_digest, remote.index_digest, ref};
  registry::CosignCheck check =
      registry::check_cosign_signatures(session, subject, manifest::load_trusted_keys(trust.trust), cosign_identity(trust));
  registry::require_cosign(check, remote.what);
  return check.verified_by;
}

}  // namespace ccpack::cli
