// What `push` and `pull` share: the registry options (--plain-http, --ca-file, --authfile, --fingerprint) and the
// two hooks other work plugs into.
//
// Hooks (stubs until those pieces merge; each is one function so the merge touches one place):
//   - local_fingerprint_json(): this machine's fingerprint JSON (the agreed {"schema":1,"fields":{...}} shape).
//     Today: the file named by --fingerprint or $CCPACK_FINGERPRINT_FILE (tests fake machines with it), else an
//     empty fingerprint. The fingerprint probe replaces the fallback.
//   - check_archive_signature(): called on the header frame right after it is fetched, before the signed
//     fingerprint is compared and before any payload byte is requested. Today it accepts every archive and
//     says "unsigned"/"not checked"; the signing work makes it verify the block and throw IntegrityError.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "manifest/format.hpp"
#include "manifest/locations.hpp"
#include "manifest/oci.hpp"
#include "registry/session.hpp"
#include "unpack/installer.hpp"

namespace ccpack::tools {

struct RegistryOptions {
  bool plain_http = false;
  std::string ca_file;
  std::string authfile;
  std::string fingerprint_file;  // pull only
};

void add_registry_options(CLI::App* cmd, RegistryOptions& options, bool with_fingerprint);
[[nodiscard]] registry::SessionOptions session_options(const RegistryOptions& options, bool push);

// This machine's fingerprint JSON (hook; see above). Throws Error naming the file when it cannot be read.
[[nodiscard]] std::string local_fingerprint_json(const RegistryOptions& options);
// This machine's selection values.
[[nodiscard]] manifest::oci::Selection local_selection(const RegistryOptions& options);

// Signature hook (see above): throws IntegrityError when the signature block does not verify. Returns a short
// status for reports.
std::string check_archive_signature(const manifest::ArchiveHeader& header, const std::string& what);

// `restore oci://REF` (tools/restore_oci.cpp): whether an archive argument names a registry, and the restore.
[[nodiscard]] bool is_registry_reference(const std::string& text);
[[nodiscard]] unpack::RestoreReport restore_from_registry(const std::string& reference, const std::vector<manifest::CacheDir>& dirs,
                                                          const unpack::RestoreOptions& options, const RegistryOptions& registry_options,
                                                          const unpack::Archive::HeaderGate& trust);

}  // namespace ccpack::tools
