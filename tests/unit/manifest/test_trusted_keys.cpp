// manifest/trusted_keys.cpp: where trusted keys come from (--trust, CCPACK_TRUSTED_KEYS as a colon list, else the
// default folders, of which ~/.config's follows XDG_CONFIG_HOME or HOME).
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <optional>
#include <string>

#include "manifest/trusted_keys.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"

using namespace ccpack;
namespace fs = std::filesystem;
using test::ScopedEnv;

TEST_CASE("default trust folders: /etc, then XDG_CONFIG_HOME's or HOME's .config (absolute only)") {
  {
    ScopedEnv xdg("XDG_CONFIG_HOME", "/cfg");
    ScopedEnv home("HOME", "/home/u");
    CHECK(manifest::default_trust_dirs() == std::vector<fs::path>{"/etc/ccpack/trusted.d", "/cfg/ccpack/trusted.d"});
  }
  {
    ScopedEnv xdg("XDG_CONFIG_HOME", "relative");
    ScopedEnv home("HOME", "/home/u");
    CHECK(manifest::default_trust_dirs() == std::vector<fs::path>{"/etc/ccpack/trusted.d", "/home/u/.config/ccpack/trusted.d"});
  }
  ScopedEnv xdg("XDG_CONFIG_HOME", std::nullopt);
  ScopedEnv home("HOME", std::nullopt);
  CHECK(manifest::default_trust_dirs() == std::vector<fs::path>{"/etc/ccpack/trusted.d"});
}

TEST_CASE("load_trusted_keys: --trust and CCPACK_TRUSTED_KEYS's list name exactly the keys, a named file must exist") {
  test::ScratchDir t;
  manifest::PrivateKey a = manifest::PrivateKey::generate();
  manifest::PrivateKey b = manifest::PrivateKey::generate();
  test::write_file(t / "a.pub", a.public_key().pem());
  test::write_file(t / "keys/b.pub", b.public_key().pem());
  ScopedEnv xdg("XDG_CONFIG_HOME", (t / "cfg").string());  // default folders: none of ours
  {
    ScopedEnv env(manifest::kTrustedKeysVar, ":" + (t / "a.pub").string() + "::" + (t / "keys").string() + ":");
    std::vector<std::string> ids = {a.key_id(), b.key_id()};
    std::sort(ids.begin(), ids.end());
    CHECK(manifest::load_trusted_keys({}).key_ids() == ids);
    std::vector<fs::path> flag{t / "a.pub"};  // --trust adds to the variable's keys
    CHECK(manifest::load_trusted_keys(flag).key_ids() == ids);
  }
  ScopedEnv env(manifest::kTrustedKeysVar, std::nullopt);
  std::vector<fs::path> flag{t / "keys"};
  CHECK(manifest::load_trusted_keys(flag).key_ids() == std::vector<std::string>{b.key_id()});
  CHECK(manifest::load_trusted_keys({}).empty());
  flag = {t / "missing.pub"};
  CHECK_THROWS_AS(manifest::load_trusted_keys(flag), Error);
}
