// cli/trust_options.cpp: CCPACK_ALLOW_UNSIGNED's three values and the signing key's usage errors.
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
