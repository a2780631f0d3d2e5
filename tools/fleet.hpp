// What `push`, `pull` and `restore oci://` share: the registry options (--plain-http, --ca-file, --authfile), the
// transfer limits from the environment, and the signature hook.
//
// The machine an archive is chosen for is tools/machine.hpp's (probe, --fingerprint FILE, --select).
// check_archive_signature() runs on the header frame right after it is fetched, before the signed fingerprint is
// judged and before any payload byte is requested.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "manifest/format.hpp"
#include "manifest/locations.hpp"
#include "registry/oci.hpp"
#include "registry/payload_fetch.hpp"
#include "registry/remote_archive.hpp"
#include "registry/session.hpp"
#include "tools/cli.hpp"
#include "unpack/archive.hpp"
#include "util/fs.hpp"
#include "util/progress.hpp"

namespace ccpack::tools {

struct RegistryOptions {
  bool plain_http = false;
  std::string ca_file;
  std::string authfile;
  std::string registries_conf;  // --registries-conf ("" : $CONTAINERS_REGISTRIES_CONF, /etc/containers/...)
};

// `pulls`: the command reads from registries, so it takes --registries-conf (push writes to the origin only).
void add_registry_options(CLI::App* cmd, RegistryOptions& options, bool pulls = true);
// The session's settings: the options, and the low-speed limit from $CCPACK_LOW_SPEED_TIME (seconds a transfer
// may stay under $CCPACK_LOW_SPEED_LIMIT bytes per second before it is abandoned; defaults util/http.hpp's).
// Throws UsageError naming the variable when one is not a number in range.
// A pull also gets the mirrors registries.conf names for `ref` (registry/mirrors.hpp).
[[nodiscard]] registry::SessionOptions session_options(const RegistryOptions& options, bool push, const registry::oci::Reference& ref);

// Signature hook (see above): throws IntegrityError when the signature block does not verify. Returns a short
// status for reports.
std::string check_archive_signature(const manifest::ArchiveHeader& header, const std::string& what);

// `restore oci://REF` (tools/restore_oci.cpp): whether an archive argument names a registry, and the archive it
// names, opened from its header frame with the payload as a stream (the restore then runs as for a file).
[[nodiscard]] bool is_registry_reference(const std::string& text);

struct RegistryArchive {
  UniqueFd fetch_lock;  // held until the restore is over (see restore_oci.cpp)
  std::unique_ptr<registry::Session> session;
  registry::RemoteArchive remote;
  std::shared_ptr<registry::FetchLog> log;  // the payload's resumes (registry/payload_fetch.hpp)
  std::shared_ptr<Progress> download;  // the terminal's one progress line (the extraction shows none)
  unpack::Archive archive;  // declared last, destroyed first: the stream's thread is joined before the session goes
};
// `single_may_differ` as for select_remote (--on-mismatch force or purge); `dirs`: the folders the restore writes
// (restores of one machine into the same folders fetch one after the other); `out` hears of resumes and fallbacks.
[[nodiscard]] RegistryArchive open_from_registry(const std::string& reference, const manifest::Fingerprint& machine,
                                                 bool single_may_differ, const RegistryOptions& registry_options,
                                                 const unpack::Archive::HeaderGate& trust,
                                                 const std::vector<manifest::CacheDir>& dirs, const Reporter& out);
// The "registry" object of restore's --json report.
[[nodiscard]] nlohmann::ordered_json registry_json(const RegistryArchive& r);

}  // namespace ccpack::tools
