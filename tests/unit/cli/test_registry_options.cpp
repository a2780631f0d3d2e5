// cli/registry_options.cpp, what push, pull and restore oci:// share: the registry options as CLI11 parses them, the
// session settings (the low-speed limits from the environment, checked and bounded; mirrors for pulls only) and
// the signature status of a fetched header.
#include <catch2/catch.hpp>
#include <functional>
#include <string>
#include <vector>

#include "cli/registry_options.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"

using namespace ccpack;

namespace {

using test::usage_error;

void parse(CLI::App& app, std::vector<std::string> args) {
  args.insert(args.begin(), "ccpack");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  app.parse(static_cast<int>(argv.size()), argv.data());
}

registry::oci::Reference ref() { return registry::oci::parse_reference("registry.example:5000/team/model:v1"); }

}  // namespace

TEST_CASE("registry options: the flags a pull has, --registries-conf only where the command pulls", "[fleet]") {
  test::ScratchDir t;
  test::write_file(t / "ca.pem", "-----BEGIN CERTIFICATE-----\n");
  CLI::App pull;
  cli::RegistryOptions o;
  cli::add_registry_options(&pull, o);
  parse(pull, {"--plain-http", "--ca-file", (t / "ca.pem").string(), "--authfile", "/a.json", "--registries-conf", "/r.conf"});
  CHECK(o.plain_http);
  CHECK(o.ca_file == (t / "ca.pem").string());
  CHECK(o.authfile == "/a.json");
  CHECK(o.registries_conf == "/r.conf");
  CLI::App missing_ca;
  cli::RegistryOptions m;
  cli::add_registry_options(&missing_ca, m);
  CHECK_THROWS_AS(parse(missing_ca, {"--ca-file", (t / "none.pem").string()}), CLI::ValidationError);
  CLI::App push;
  cli::RegistryOptions p;
  cli::add_registry_options(&push, p, false);
  CHECK_THROWS_AS(parse(push, {"--registries-conf", "/r.conf"}), CLI::ExtrasError);
  CHECK_FALSE(p.plain_http);
}

TEST_CASE("session options: --plain-http and --ca-file from the environment, the flags winning", "[fleet]") {
  test::ScopedEnv plain("CCPACK_PLAIN_HTTP", "1");
  test::ScopedEnv ca("CCPACK_CA_FILE", "/env-ca.pem");
  registry::SessionOptions from_env = cli::session_options({}, true, ref());
  CHECK(from_env.http.plain_http);
  CHECK(from_env.http.ca_file == "/env-ca.pem");
  cli::RegistryOptions flags;
  flags.ca_file = "/flag-ca.pem";
  CHECK(cli::session_options(flags, true, ref()).http.ca_file == "/flag-ca.pem");
  test::ScopedEnv off("CCPACK_PLAIN_HTTP", "0");
  CHECK_FALSE(cli::session_options({}, true, ref()).http.plain_http);
  flags.plain_http = true;
  CHECK(cli::session_options(flags, true, ref()).http.plain_http);
  test::ScopedEnv bad("CCPACK_PLAIN_HTTP", "yes");
  CHECK(usage_error([] { (void)cli::session_options({}, true, ref()); }) == "$CCPACK_PLAIN_HTTP must be 1 or 0, got 'yes'");
}

TEST_CASE("session options: the options carried over, the low-speed limits from the environment", "[fleet]") {
  test::ScopedEnv time("CCPACK_LOW_SPEED_TIME", "7");
  test::ScopedEnv limit("CCPACK_LOW_SPEED_LIMIT", "2048");
  cli::RegistryOptions o;
  o.plain_http = true;
  o.ca_file = "/ca.pem";
  o.authfile = "/auth.json";
  registry::SessionOptions s = cli::session_options(o, true, ref());
  CHECK(s.http.plain_http);
  CHECK(s.http.ca_file == "/ca.pem");
  CHECK(s.authfile == "/auth.json");
  CHECK(s.push);
  CHECK(s.http.low_speed_time_s == 7);
  CHECK(s.http.low_speed_limit == 2048);
  CHECK(s.endpoints.empty());  // a push goes to the origin only
  test::ScopedEnv unset_time("CCPACK_LOW_SPEED_TIME", "");
  test::ScopedEnv unset_limit("CCPACK_LOW_SPEED_LIMIT", std::nullopt);
  registry::SessionOptions defaults = cli::session_options({}, true, ref());
  http::Options stock;
  CHECK(defaults.http.low_speed_time_s == stock.low_speed_time_s);
  CHECK(defaults.http.low_speed_limit == stock.low_speed_limit);
  CHECK_FALSE(defaults.http.plain_http);
}

TEST_CASE("session options: a low-speed setting that is not a whole number in range is a usage error", "[fleet]") {
  auto with_time = [](const std::string& v) {
    test::ScopedEnv time("CCPACK_LOW_SPEED_TIME", v);
    return usage_error([] { (void)cli::session_options({}, true, ref()); });
  };
  const std::string time_range = "CCPACK_LOW_SPEED_TIME must be a whole number from 1 to 3600, got ";
  CHECK(with_time("1") == "(no UsageError)");
  CHECK(with_time("3600") == "(no UsageError)");
  CHECK(with_time("0") == time_range + "'0'");
  CHECK(with_time("3601") == time_range + "'3601'");
  CHECK(with_time("-5") == time_range + "'-5'");
  CHECK(with_time("12s") == time_range + "'12s'");
  CHECK(with_time("1.5") == time_range + "'1.5'");
  CHECK(with_time("99999999999999999999") == time_range + "'99999999999999999999'");
  CHECK(with_time("4\n") == time_range + "'4\\n'");
  CHECK(with_time(std::string(100, '9')) == time_range + "'" + std::string(37, '9') + "...'");  // cut at 40 bytes
  test::ScopedEnv limit("CCPACK_LOW_SPEED_LIMIT", "1073741825");
  CHECK(usage_error([] { (void)cli::session_options({}, true, ref()); }) ==
        "CCPACK_LOW_SPEED_LIMIT must be a whole number from 1 to 1073741824, got '1073741825'");
}

TEST_CASE("session options: a pull gets its endpoints from registries.conf, the origin last", "[fleet]") {
  test::ScratchDir t;
  test::write_file(t / "registries.conf",
                   "[[registry]]\nprefix = \"registry.example:5000\"\nlocation = \"registry.example:5000\"\n"
                   "[[registry.mirror]]\nlocation = \"mirror.example/cache\"\n");
  cli::RegistryOptions o;
  o.registries_conf = (t / "registries.conf").string();
  registry::SessionOptions s = cli::session_options(o, false, ref());
  REQUIRE(s.endpoints.size() == 2);
  CHECK(s.endpoints[0].host == "mirror.example");
  CHECK(s.endpoints[0].repository == "cache/team/model");
  CHECK(s.endpoints[0].mirror);
  CHECK(s.endpoints[1].host == "registry.example:5000");
  CHECK(s.endpoints[1].repository == "team/model");
  CHECK_FALSE(s.endpoints[1].mirror);
  CHECK_FALSE(s.push);
}

TEST_CASE("check_archive_signature: unsigned, signed, or a block for the trust gate to refuse", "[fleet]") {
  manifest::ArchiveHeader h;
  CHECK(cli::check_archive_signature(h, "x") == "none (unsigned)");
  h.signatures = "not json";
  CHECK(cli::check_archive_signature(h, "x") == "present (checked by restore and verify)");
  h.signatures = R"([{"key_id": "21fe31dfa154a261"}])";
  CHECK(cli::check_archive_signature(h, "x") == "present (checked by restore and verify)");
}
