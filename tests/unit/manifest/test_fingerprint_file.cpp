// manifest/fingerprint_file.cpp: the fingerprint file's bounds (a pipe too), and the contract checked on what it holds.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "manifest/fingerprint_file.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"

using namespace ccpack;
using test::ccpack_error;

TEST_CASE("read_fingerprint_file: the whole file up to 1 MiB, else an error naming it", "[fingerprint_file]") {
  test::ScratchDir t;
  test::write_file(t / "fp.json", "{\"schema\": 1}\n");
  CHECK(manifest::read_fingerprint_file((t / "fp.json").string()) == "{\"schema\": 1}\n");
  test::write_file(t / "empty.json", "");
  CHECK(manifest::read_fingerprint_file((t / "empty.json").string()).empty());
  test::write_file(t / "max.json", std::string(1u << 20, ' '));
  CHECK(manifest::read_fingerprint_file((t / "max.json").string()).size() == 1u << 20);
  test::write_file(t / "big.json", std::string((1u << 20) + 1, ' '));
  const std::string big = (t / "big.json").string();
  CHECK(ccpack_error([&] { (void)manifest::read_fingerprint_file(big); }) ==
        "fingerprint file '" + big + "' is larger than 1 MiB");
  const std::string none = (t / "none.json").string();
  CHECK(ccpack_error([&] { (void)manifest::read_fingerprint_file(none); }) ==
        "cannot open fingerprint file '" + none + "': No such file or directory");
  const std::string dir = t.path().string();
  CHECK(ccpack_error([&] { (void)manifest::read_fingerprint_file(dir); }) ==
        "cannot read fingerprint file '" + dir + "': Is a directory");
  const std::string odd = (t / "a\nb.json").string();
  CHECK(ccpack_error([&] { (void)manifest::read_fingerprint_file(odd); }) ==
        "cannot open fingerprint file '" + (t / "a\\nb.json").string() + "': No such file or directory");
}

TEST_CASE("read_fingerprint_file: a pipe is read to its end, as from --fingerprint <(ssh host ccpack fingerprint --json)",
          "[fingerprint_file]") {
  int p[2];
  REQUIRE(::pipe(p) == 0);
  const std::string fp = "{\"schema\": 1, \"fields\": {}}\n";
  REQUIRE(::write(p[1], fp.data(), fp.size()) == static_cast<ssize_t>(fp.size()));
  ::close(p[1]);
  CHECK(manifest::read_fingerprint_file("/dev/fd/" + std::to_string(p[0])) == fp);
  ::close(p[0]);
}

TEST_CASE("fingerprint_from_file: the report marker dropped, the contract checked, every refusal an Error naming the file",
          "[fingerprint_file]") {
  test::ScratchDir t;
  const std::string path = (t / "fp.json").string(), what = "fingerprint file '" + path + "'";
  test::write_file(path, R"({"ok": true, "schema": 1, "fields": {"gpu.arch": {"value": "sm_90", "source": "nvml"}}})");
  manifest::Fingerprint fp = manifest::fingerprint_from_file(path);
  CHECK(fp.fields.size() == 1);
  CHECK(fp.get("gpu.arch")->value == "sm_90");
  test::write_file(path, "[1, 2]");
  CHECK(ccpack_error([&] { (void)manifest::fingerprint_from_file(path); }) ==
        what + " is not a JSON object (write it with `ccpack fingerprint --json`)");
  test::write_file(path, R"({"schema": 1, "schema": 1, "fields": {}})");
  CHECK(ccpack_error([&] { (void)manifest::fingerprint_from_file(path); }) ==
        what + " field 'schema' is repeated (a JSON key appears twice in one object)");
  test::write_file(path, R"({"schema": 1, "fields": {)");
  CHECK_THAT(ccpack_error([&] { (void)manifest::fingerprint_from_file(path); }),
             Catch::StartsWith(what + " is not valid JSON: "));
  test::write_file(path, R"({"schema": 2, "fields": {}})");
  CHECK_THAT(ccpack_error([&] { (void)manifest::fingerprint_from_file(path); }),
             Catch::StartsWith(what + ": fingerprint field 'schema' is 2"));
  test::write_file(path, std::string((1u << 20) + 1, ' '));
  CHECK(ccpack_error([&] { (void)manifest::fingerprint_from_file(path); }) == what + " is larger than 1 MiB");
}
