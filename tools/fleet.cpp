#include "tools/fleet.hpp"

#include "tools/comparison.hpp"

#include <fcntl.h>

#include <cstdlib>

#include "util/error.hpp"
#include "util/fs.hpp"

namespace ccpack::tools {

void add_registry_options(CLI::App* cmd, RegistryOptions& options, bool with_fingerprint) {
  cmd->add_flag("--plain-http", options.plain_http, "Talk to the registry over plain HTTP (never the default)");
  cmd->add_option("--ca-file", options.ca_file, "PEM file of CA certificates to verify the registry's TLS with")
      ->check(CLI::ExistingFile);
  cmd->add_option("--authfile", options.authfile,
                  "Registry credentials file (default: $REGISTRY_AUTH_FILE, $DOCKER_CONFIG/config.json, "
                  "~/.docker/config.json, $XDG_RUNTIME_DIR/containers/auth.json)");
  if (with_fingerprint) {
    cmd->add_option("--fingerprint", options.fingerprint_file,
                    "This machine's fingerprint as JSON (default: $CCPACK_FINGERPRINT_FILE)");
  }
}

registry::SessionOptions session_options(const RegistryOptions& options, bool push) {
  registry::SessionOptions s;
  s.http.plain_http = options.plain_http;
  s.http.ca_file = options.ca_file;
  s.authfile = options.authfile;
  s.push = push;
  return s;
}

std::string local_fingerprint_json(const RegistryOptions& options) {
  std::string file = options.fingerprint_file;
  if (file.empty()) {
    const char* env = std::getenv("CCPACK_FINGERPRINT_FILE");
    if (env != nullptr) file = env;
  }
  // This machine as probed (tools/comparison.hpp); the selection fields do not depend on the cache folders.
  if (file.empty()) return probe_local("", manifest::resolve_cache_dirs({})).to_json();
  return read_fingerprint_file(file);
}

manifest::oci::Selection local_selection(const RegistryOptions& options) {
  std::string what = "this machine's fingerprint";
  try {
    return manifest::oci::selection_of_fingerprint(local_fingerprint_json(options), what);
  } catch (const IntegrityError& e) {
    throw Error(e.what());  // a bad local file is a local error (exit 1), not a bad archive
  }
}

std::string check_archive_signature(const manifest::ArchiveHeader& header, const std::string& what) {
  // The signature is judged where the archive is used: `restore oci://` runs the trust gate on this header
  // before any payload byte (restore_oci.cpp); a pulled file is judged by verify and restore like any other.
  (void)what;
  return header.signatures == "[]" ? "none (unsigned)" : "present (checked by restore and verify)";
}

}  // namespace ccpack::tools
