// Options shared by the commands that check signatures (restore, verify, inspect, sign) and by those that sign
// (create, import, sign), with the environment variables that stand in for them in entrypoints and CI.
//
// Trusted keys: --trust FILE|DIR (repeatable), with CCPACK_TRUSTED_KEYS, else the default folders
// (manifest/trusted_keys.hpp).
//
// --allow-unsigned (or CCPACK_ALLOW_UNSIGNED=1) turns the requirement off, and says so on every use, even -q.
//
// Signing key: --sign-key FILE, else the PEM text in CCPACK_SIGNING_KEY; never key material on the command line.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cli.hpp"
#include "manifest/keys.hpp"
#include "registry/cosign.hpp"
#include "unpack/trust.hpp"

namespace ccpack::cli {

inline constexpr const char* kAllowUnsignedVar = "CCPACK_ALLOW_UNSIGNED";

struct TrustOptions {
  std::vector<std::filesystem::path> trust;
  bool allow_unsigned = false;
  bool require_cosign = false;  // restore oci://, pull: --require-cosign
  std::string cosign_identity;  // --cosign-identity exact|repository ("" : $CCPACK_COSIGN_IDENTITY, else exact)
};

struct SigningOptions {
  std::filesystem::path key_file;
  std::string note;
};

// `display_only` (inspect): --trust only, since nothing is refused.
void add_trust_options(CLI::App* cmd, TrustOptions& options, bool display_only = false);
// --require-cosign (restore oci://, pull): a cosign signature of the registry artifact by a trusted key is required,
// checked before any archive byte is fetched; the archive then needs no manifest signature of its own.
void add_cosign_option(CLI::App* cmd, TrustOptions& options);
// --cosign-identity, else $CCPACK_COSIGN_IDENTITY, else exact; anything else is a usage error naming where it came from.
[[nodiscard]] registry::cosign::IdentityRule cosign_identity(const TrustOptions& options);
// `required`: the command cannot run without a key (sign); else signing is optional (create).
void add_signing_options(CLI::App* cmd, SigningOptions& options, bool required);

// --allow-unsigned or CCPACK_ALLOW_UNSIGNED=1 (any value but 1, 0 or empty is a usage error).
[[nodiscard]] bool allow_unsigned(const TrustOptions& options);

// Opens `path` with the trust check (store and opt-out from `options`) run before its manifest is parsed; warns
// through `out` whenever the opt-out is in effect. `report` receives what the check found.
// The trust check as a header gate (unpack::Archive::HeaderGate), filling `report`; warns on every opt-out.
// With `cosign_by` (filled before the header arrives, by the cosign check) not empty, the archive is accepted on that
// signature and only its own signatures by trusted keys are checked (unpack::check_trust_beside).
[[nodiscard]] unpack::Archive::HeaderGate trust_gate(const TrustOptions& options, const Reporter& out,
                                                     unpack::TrustReport& report, const std::string* cosign_by = nullptr);
// `depth` and `text` as for unpack::Archive::open (restore reads the top level only, and the rest when it writes).
[[nodiscard]] unpack::Archive open_trusted(const std::filesystem::path& path, const TrustOptions& options, const Reporter& out,
                                           unpack::TrustReport& report, unpack::ManifestDepth depth = unpack::ManifestDepth::full,
                                           unpack::ManifestText text = unpack::ManifestText::keep);

// The key from --sign-key, else from CCPACK_SIGNING_KEY, else nullopt (with `required`: a usage error).
[[nodiscard]] std::optional<manifest::PrivateKey> load_signing_key(const SigningOptions& options, bool required);

// The signer of a command that writes a new archive (create, import; pack::PackOptions::sign): the one signature
// of `key` over the manifest's exact bytes, with `options.note`; an empty function (unsigned) without a key.
// `key` and `options` must outlive the returned function.
[[nodiscard]] std::function<std::vector<manifest::Signature>(std::string_view manifest)> manifest_signer(
    const std::optional<manifest::PrivateKey>& key, const SigningOptions& options);

// Each signer for --json: key_id, algorithm, signed_at, note (when set), status.
[[nodiscard]] ojson signers_json(const unpack::TrustReport& report);

}  // namespace ccpack::cli
