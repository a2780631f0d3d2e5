// What `push`, `pull` and `restore oci://` share: the registry options (--plain-http, --ca-file, --authfile,
// --registries-conf), the session settings they make with the transfer limits from the environment, and the
// signature hook. The registry fetch itself is registry/'s (remote_archive.hpp, archive_stream.hpp).
//
// The machine an archive is chosen for is cli/machine.hpp's (probe, --fingerprint FILE, --select).
// check_archive_signature() runs on the header frame right after it is fetched, before the signed fingerprint is
// judged and before any payload byte is requested.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/trust_options.hpp"
#include "manifest/format.hpp"
#include "registry/oci.hpp"
#include "registry/remote_archive.hpp"
#include "registry/session.hpp"

namespace ccpack::cli {

// What an init container sets once in its environment instead of on every command line; a flag wins.
inline constexpr const char* kPlainHttpVar = "CCPACK_PLAIN_HTTP";  // 1: as --plain-http; 0 or empty: not
inline constexpr const char* kCaFileVar = "CCPACK_CA_FILE";        // as --ca-file FILE

struct RegistryOptions {
  bool plain_http = false;
  std::string ca_file;
  std::string authfile;
  std::string registries_conf;  // --registries-conf ("" : $CONTAINERS_REGISTRIES_CONF, /etc/containers/...)
};

// `pulls`: the command reads from registries, so it takes --registries-conf (push writes to the origin only).
void add_registry_options(CLI::App* cmd, RegistryOptions& options, bool pulls = true);
// The session's settings: the options (--plain-http or $CCPACK_PLAIN_HTTP=1, --ca-file or $CCPACK_CA_FILE), and the low-speed
// limit from $CCPACK_LOW_SPEED_TIME (seconds a transfer may stay under $CCPACK_LOW_SPEED_LIMIT bytes per second before it is
// abandoned; defaults http/http.hpp's). Throws UsageError naming the variable when one is not a number in range. A pull also gets
// the mirrors registries.conf names for `ref` (registry/mirrors.hpp).
[[nodiscard]] registry::SessionOptions session_options(const RegistryOptions& options, bool push,
                                                       const registry::oci::Reference& ref);

// restore and check take a file or oci://REF. An argument that names no file but reads as a registry reference
// with a host ("host:5000/repo:tag", "registry.example.com/team/cache:v1") is a usage error that says to write
// oci://, instead of "No such file or directory".
void require_file_or_reference(const std::string& archive);

// Signature hook (see above): throws IntegrityError when the signature block does not verify. Returns a short
// status for reports.
std::string check_archive_signature(const manifest::ArchiveHeader& header, const std::string& what);

// --require-cosign: the cosign signature of the chosen artifact (registry/cosign_signatures.hpp) by a key that
// `trust` names, for `ref`; throws IntegrityError (exit 4) otherwise. Returns the key id. Reads only the signature
// manifest and its payload blobs.
std::string require_cosign(registry::Session& session, const registry::RemoteArchive& remote, const registry::oci::Reference& ref,
                           const TrustOptions& trust);

}  // namespace ccpack::cli
