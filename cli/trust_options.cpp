// See trust_options.hpp.
#include "cli/trust_options.hpp"

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "manifest/signature.hpp"
#include "manifest/trusted_keys.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"
#include "util/fs.hpp"

namespace ccpack::cli {
namespace fs = std::filesystem;

void add_trust_options(CLI::App* cmd, TrustOptions& options, bool display_only) {
  cmd->add_option("--trust", options.trust,
                  "Trust this Ed25519 public key (PEM file) or every *.pub in this folder (repeatable; also "
                  "$CCPACK_TRUSTED_KEYS, colon-separated). Default when none is named: /etc/ccpack/trusted.d and "
                  "${XDG_CONFIG_HOME:-~/.config}/ccpack/trusted.d");
  if (display_only) return;
  cmd->add_flag("--allow-unsigned", options.allow_unsigned,
                "Accept an archive with no signature from a trusted key (also $CCPACK_ALLOW_UNSIGNED=1); warns every time");
}

void add_cosign_option(CLI::App* cmd, TrustOptions& options) {
  cmd->add_flag("--require-cosign", options.require_cosign,
                "Require a cosign signature of the registry artifact (tag sha256-<digest>.sig) by a trusted key, checked "
                "before any archive byte is fetched; the archive then needs no signature of its own (one by a trusted "
                "key must still verify)");
  cmd->add_option("--cosign-identity", options.cosign_identity,
                  "Which cosign signatures count for REG/REPO:TAG: `exact` (default), one for that tag or for the "
                  "artifact's digest; `repository`, one for any tag of the repository, as cosign signs by default (also "
                  "$CCPACK_COSIGN_IDENTITY)");
}

registry::cosign::IdentityRule cosign_identity(const TrustOptions& options) {
  namespace cosign = registry::cosign;
  const char* env = std::getenv(cosign::kIdentityVar);
  const bool flag = !options.cosign_identity.empty();
  if (!flag && (env == nullptr || *env == '\0')) return cosign::IdentityRule::exact;
  const std::string value = flag ? options.cosign_identity : std::string(env);
  if (std::optional<cosign::IdentityRule> rule = cosign::parse_identity_rule(value)) return *rule;
  throw UsageError((flag ? std::string("--cosign-identity") : std::string("$") + cosign::kIdentityVar) + " is '" +
                   escaped(value, 80) + "': expected exact or repository");
}

void add_signing_options(CLI::App* cmd, SigningOptions& options, bool required) {
  cmd->add_option("--sign-key", options.key_file,
                  std::string("Sign with this Ed25519 private key (PEM PKCS#8 file, mode 0600; default: the PEM text in $") +
                      manifest::kSigningKeyVar + (required ? ")" : ", when set)"));
  cmd->add_option("--note", options.note, "Note stored with the signature, e.g. a pipeline id or git commit (at most 256 bytes)");
}

bool allow_unsigned(const TrustOptions& options) {
  const char* env = std::getenv(kAllowUnsignedVar);
  std::string value = env != nullptr ? env : "";
  if (value != "" && value != "0" && value != "1")
    throw UsageError(std::string("$") + kAllowUnsignedVar + " must be 1 (accept unsigned archives) or 0");
  return options.allow_unsigned || value == "1";
}

unpack::Archive::HeaderGate trust_gate(const TrustOptions& options, const Reporter& out, unpack::TrustReport& report,
                                       const std::string* cosign_by) {
  const bool opt_out = allow_unsigned(options);
  auto store = std::make_shared<const manifest::TrustStore>(manifest::load_trusted_keys(options.trust));
  return [opt_out, store, &out, &report, cosign_by](const fs::path& p, const manifest::ArchiveHeader& header,
                                                    const std::vector<manifest::Signature>& signatures) {
    if (cosign_by != nullptr && !cosign_by->empty()) {
      report = unpack::check_trust_beside(p, header, signatures, *store, *cosign_by);
      return;
    }
    report = unpack::check_trust(p, header, signatures, *store, opt_out);
    if (!opt_out) return;
    out.alarm(report.trusted() ? "--allow-unsigned is set but not needed: " + quoted_path(p) + " is signed by trusted key " +
                                     report.verified_by
                               : "--allow-unsigned: accepting " + quoted_path(p) + " with no signature from a trusted key (" +
                                     report.describe() + ")");
  };
}

unpack::Archive open_trusted(const fs::path& path, const TrustOptions& options, const Reporter& out, unpack::TrustReport& report,
                             unpack::ManifestDepth depth, unpack::ManifestText text) {
  return unpack::Archive::open(path, trust_gate(options, out, report), depth, text);
}

std::optional<manifest::PrivateKey> load_signing_key(const SigningOptions& options, bool required) {
  if (auto why = manifest::note_problem(options.note)) throw UsageError("--note " + *why);
  if (!options.key_file.empty()) return manifest::PrivateKey::load(options.key_file);
  const char* env = std::getenv(manifest::kSigningKeyVar);
  if (env != nullptr && *env != '\0') return manifest::PrivateKey::from_env(manifest::kSigningKeyVar);
  if (required) throw UsageError(std::string("no signing key: pass --sign-key FILE or set $") + manifest::kSigningKeyVar);
  if (!options.note.empty())
    throw UsageError("--note needs a signing key (--sign-key FILE or $" + std::string(manifest::kSigningKeyVar) + ")");
  return std::nullopt;
}

std::function<std::vector<manifest::Signature>(std::string_view)> manifest_signer(const std::optional<manifest::PrivateKey>& key,
                                                                                  const SigningOptions& options) {
  if (!key) return {};
  return [&key, &options](std::string_view manifest_bytes) {
    return std::vector<manifest::Signature>{key->sign_manifest(manifest_bytes, options.note)};
  };
}

ojson signers_json(const unpack::TrustReport& report) {
  ojson list = ojson::array();
  for (const unpack::SignerStatus& s : report.signers) {
    ojson o{{"key_id", s.signature.key_id}, {"algorithm", s.signature.algorithm}, {"signed_at", s.signature.signed_at}};
    if (!s.signature.note.empty()) o["note"] = s.signature.note;
    o["status"] = std::string(unpack::to_string(s.state));
    list.push_back(std::move(o));
  }
  return list;
}

}  // namespace ccpack::cli
