// cli/trust_options.cpp: where trusted keys come from (--trust, CCPACK_TRUSTED_KEYS as a colon list, else the
// default folders, of which ~/.config's follows XDG_CONFIG_HOME or HOME), CCPACK_ALLOW_UNSIGNED's three values,
// and the signing key's usage errors.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "cli/trust_options.hpp"
#include "manifest/keys.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"

using namespace ccpack;
namespace fs = std::filesystem;

namespace {

using test::ScopedEnv;
using test::usage_error;

}  // namespace

TEST_CASE("default trust folders: /etc, then XDG_CONFIG_HOME's or HOME's .config (absolute only)") {
  {
    ScopedEnv xdg("XDG_CONFIG_HOME", "/cfg");
    ScopedEnv home("HOME", "/home/u");
    CHECK(cli::default_trust_dirs() == std::vector<fs::path>{"/etc/ccpack/trusted.d", "/cfg/ccpack/trusted.d"});
  }
  {
    ScopedEnv xdg("XDG_CONFIG_HOME", "relative");
    ScopedEnv home("HOME", "/home/u");
    CHECK(cli::default_trust_dirs() == std::vector<fs::path>{"/etc/ccpack/trusted.d", "/home/u/.config/ccpack/trusted.d"});
  }
  ScopedEnv xdg("XDG_CONFIG_HOME", std::nullopt);
  ScopedEnv home("HOME", std::nullopt);
  CHECK(cli::default_trust_dirs() == std::vector<fs::path>{"/etc/ccpack/trusted.d"});
}

TEST_CASE("load_trust: --trust and CCPACK_TRUSTED_KEYS's list name exactly the keys, a named file must exist") {
  test::ScratchDir t;
  manifest::PrivateKey a = manifest::PrivateKey::generate();
  manifest::PrivateKey b = manifest::PrivateKey::generate();
  test::write_file(t / "a.pub", a.public_key().pem());
  test::write_file(t / "keys/b.pub", b.public_key().pem());
  ScopedEnv xdg("XDG_CONFIG_HOME", (t / "cfg").string());  // default folders: none of ours
  {
    ScopedEnv env(cli::kTrustedKeysVar, ":" + (t / "a.pub").string() + "::" + (t / "keys").string() + ":");
    std::vector<std::string> ids = {a.key_id(), b.key_id()};
    std::sort(ids.begin(), ids.end());
    CHECK(cli::load_trust({}).key_ids() == ids);
    cli::TrustOptions flag;
    flag.trust = {t / "a.pub"};  // --trust adds to the variable's keys
    CHECK(cli::load_trust(flag).key_ids() == ids);
  }
  ScopedEnv env(cli::kTrustedKeysVar, std::nullopt);
  cli::TrustOptions flag;
  flag.trust = {t / "keys"};
  CHECK(cli::load_trust(flag).key_ids() == std::vector<std::string>{b.key_id()});
  CHECK(cli::load_trust({}).empty());
  flag.trust = {t / "missing.pub"};
  CHECK_THROWS_AS(cli::load_trust(flag), Error);
}

TEST_CASE("CCPACK_ALLOW_UNSIGNED: 1 allows, 0 and empty do not, anything else is a usage error") {
  cli::TrustOptions none;
  cli::TrustOptions flag;
  flag.allow_unsigned = true;
  {
    ScopedEnv env(cli::kAllowUnsignedVar, std::nullopt);
    CHECK_FALSE(cli::allow_unsigned(none));
    CHECK(cli::allow_unsigned(flag));
  }
  for (const char* off : {"0", ""}) {
    ScopedEnv env(cli::kAllowUnsignedVar, std::string(off));
    CHECK_FALSE(cli::allow_unsigned(none));
    CHECK(cli::allow_unsigned(flag));
  }
  {
    ScopedEnv env(cli::kAllowUnsignedVar, "1");
    CHECK(cli::allow_unsigned(none));
  }
  ScopedEnv env(cli::kAllowUnsignedVar, "yes");
  CHECK(usage_error([&] { (void)cli::allow_unsigned(flag); }) ==
        "$CCPACK_ALLOW_UNSIGNED must be 1 (accept unsigned archives) or 0");
}

TEST_CASE("the signing key: required and absent, or a note without a key, are usage errors") {
  ScopedEnv env(manifest::kSigningKeyVar, std::nullopt);
  cli::SigningOptions o;
  CHECK_FALSE(cli::load_signing_key(o, false));
  CHECK(usage_error([&] { (void)cli::load_signing_key(o, true); }) ==
        "no signing key: pass --sign-key FILE or set $CCPACK_SIGNING_KEY");
  o.note = "pipeline 7";
  CHECK(usage_error([&] { (void)cli::load_signing_key(o, false); }) ==
        "--note needs a signing key (--sign-key FILE or $CCPACK_SIGNING_KEY)");
  CHECK_FALSE(cli::manifest_signer(std::nullopt, o));  // unsigned: an empty function
}
