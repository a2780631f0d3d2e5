// cli/comparison.cpp, what the commands share around a fingerprint comparison: --ignore checked against the
// field table (hostile names escaped), the --python and --ignore options as CLI11 parses them, the fingerprint
// file's bounds, a row's difference in words, the --json shape of a comparison (exact bytes), and how a refused
// command ends (the --json report on stdout, one line on stderr, the exit code).
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "cli/comparison.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"

using namespace ccpack;
using manifest::Verdict;
namespace fs = std::filesystem;

namespace {

using test::ccpack_error;

std::string usage_error(const std::vector<std::string>& ignored) {
  return test::usage_error([&] { cli::check_ignored(ignored); });
}

struct Captured {
  std::string out, err;
  int result = -1;
};

// Runs `body` with file descriptors 1 and 2 sent to files, and returns what each received.
Captured capture(const std::function<int()>& body) {
  test::ScratchDir t;
  std::fflush(stdout);
  std::fflush(stderr);
  int saved_out = ::dup(1);
  int saved_err = ::dup(2);
  int out = ::open((t / "out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  int err = ::open((t / "err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ::dup2(out, 1);
  ::dup2(err, 2);
  Captured c;
  c.result = body();
  std::fflush(stdout);
  std::fflush(stderr);
  ::dup2(saved_out, 1);
  ::dup2(saved_err, 2);
  for (int fd : {out, err, saved_out, saved_err}) ::close(fd);
  c.out = test::slurp(t / "out");
  c.err = test::slurp(t / "err");
  return c;
}

// Two components and three rows: a stale single value, a set-valued difference, and an ignored field the
// archive does not record.
manifest::Comparison sample() {
  manifest::Comparison c;
  c.components = {{"inductor", manifest::ComponentKind::inductor}, {"triton", manifest::ComponentKind::triton}};
  manifest::ComparisonRow version;
  version.field = "triton.version";
  version.archive = "3.5.0";
  version.local = "3.6.0";
  version.verdicts = {Verdict::stale, Verdict::stale};
  version.why = "Triton's cache key starts with its version";
  manifest::ComparisonRow wheels;
  wheels.field = "wheels.cuda";
  wheels.archive = "nvidia-cublas==1";
  wheels.local = "nvidia-cublas==2, nvidia-nccl==3";
  wheels.verdicts = {Verdict::warn, Verdict::warn};
  manifest::SetDiff d;
  d.added = {"nvidia-nccl==3"};
  d.changed = {{"nvidia-cublas", "1", "2"}};
  wheels.diff = d;
  manifest::ComparisonRow arch;
  arch.field = "gpu.arch";
  arch.archive_note = "not recorded";
  arch.local = "sm_90";
  arch.verdicts = {Verdict::match, Verdict::match};
  arch.ignored = true;
  c.rows = {version, wheels, arch};
  c.component_verdicts = {Verdict::stale, Verdict::stale};
  return c;
}

}  // namespace

TEST_CASE("check_ignored: every name must be a field of the table, hostile names are escaped", "[comparison]") {
  CHECK(usage_error({}) == "(no UsageError)");
  CHECK(usage_error({"gpu.driver", "cache.targets", "triton.version"}) == "(no UsageError)");
  std::string bad = usage_error({"gpu.driver", "gpu.drivers"});
  CHECK_THAT(bad, Catch::StartsWith("--ignore: 'gpu.drivers' is not a fingerprint field (fields: cpu.arch, os, glibc, python.version, "));
  CHECK_THAT(bad, Catch::EndsWith(", paths.inductor, paths.triton, cache.targets)"));
  CHECK_THAT(usage_error({"gpu\narch\x1b[2J"}), Catch::StartsWith("--ignore: 'gpu\\narch\\x1b[2J' is not a fingerprint field"));
  CHECK_THAT(usage_error({"GPU.ARCH"}), Catch::StartsWith("--ignore: 'GPU.ARCH' is not"));  // names are exact
  std::string long_name = usage_error({std::string(500, 'x')});
  CHECK(long_name.find(std::string(65, 'x')) == std::string::npos);  // cut at 64 bytes
  CHECK_THAT(long_name, Catch::Contains("...' is not a fingerprint field"));
}

TEST_CASE("the ignore and python options: one field per --ignore, so a positional after it stays positional", "[comparison]") {
  CLI::App app;
  std::vector<std::string> ignored;
  std::string python;
  std::string archive;
  cli::add_ignore_option(&app, ignored);
  cli::add_python_option(&app, python);
  app.add_option("archive", archive);
  std::vector<std::string> args = {"ccpack", "--ignore", "gpu.driver", "a.ccpack", "--ignore", "glibc", "--python", "/venv/bin/python"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  app.parse(static_cast<int>(argv.size()), argv.data());
  CHECK(ignored == std::vector<std::string>{"gpu.driver", "glibc"});
  CHECK(archive == "a.ccpack");
  CHECK(python == "/venv/bin/python");
}

TEST_CASE("read_fingerprint_file: the whole file up to 1 MiB, else an error naming it", "[comparison]") {
  test::ScratchDir t;
  test::write_file(t / "fp.json", "{\"schema\": 1}\n");
  CHECK(cli::read_fingerprint_file((t / "fp.json").string()) == "{\"schema\": 1}\n");
  test::write_file(t / "empty.json", "");
  CHECK(cli::read_fingerprint_file((t / "empty.json").string()).empty());
  test::write_file(t / "max.json", std::string(1u << 20, ' '));
  CHECK(cli::read_fingerprint_file((t / "max.json").string()).size() == 1u << 20);
  test::write_file(t / "big.json", std::string((1u << 20) + 1, ' '));
  const std::string big = (t / "big.json").string();
  CHECK(ccpack_error([&] { (void)cli::read_fingerprint_file(big); }) == "fingerprint file '" + big + "' is larger than 1 MiB");
  const std::string none = (t / "none.json").string();
  CHECK(ccpack_error([&] { (void)cli::read_fingerprint_file(none); }) ==
        "cannot open fingerprint file '" + none + "': No such file or directory");
  const std::string dir = t.path().string();
  CHECK(ccpack_error([&] { (void)cli::read_fingerprint_file(dir); }) ==
        "cannot read fingerprint file '" + dir + "': Is a directory");
  const std::string odd = (t / "a\nb.json").string();
  CHECK(ccpack_error([&] { (void)cli::read_fingerprint_file(odd); }) ==
        "cannot open fingerprint file '" + (t / "a\\nb.json").string() + "': No such file or directory");
}

TEST_CASE("read_fingerprint_file: a pipe is read to its end, as from --fingerprint <(ssh host ccpack fingerprint --json)", "[comparison]") {
  int p[2];
  REQUIRE(::pipe(p) == 0);
  const std::string fp = "{\"schema\": 1, \"fields\": {}}\n";
  REQUIRE(::write(p[1], fp.data(), fp.size()) == static_cast<ssize_t>(fp.size()));
  ::close(p[1]);
  CHECK(cli::read_fingerprint_file("/dev/fd/" + std::to_string(p[0])) == fp);
  ::close(p[0]);
}

TEST_CASE("fingerprint_from_file: the report marker dropped, the contract checked, every refusal an Error naming the file",
          "[comparison]") {
  test::ScratchDir t;
  const std::string path = (t / "fp.json").string(), what = "fingerprint file '" + path + "'";
  test::write_file(path, R"({"ok": true, "schema": 1, "fields": {"gpu.arch": {"value": "sm_90", "source": "nvml"}}})");
  manifest::Fingerprint fp = cli::fingerprint_from_file(path);
  CHECK(fp.fields.size() == 1);
  CHECK(fp.get("gpu.arch")->value == "sm_90");
  test::write_file(path, "[1, 2]");
  CHECK(ccpack_error([&] { (void)cli::fingerprint_from_file(path); }) ==
        what + " is not a JSON object (write it with `ccpack fingerprint --json`)");
  test::write_file(path, R"({"schema": 1, "schema": 1, "fields": {}})");
  CHECK(ccpack_error([&] { (void)cli::fingerprint_from_file(path); }) ==
        what + " field 'schema' is repeated (a JSON key appears twice in one object)");
  test::write_file(path, R"({"schema": 1, "fields": {)");
  CHECK_THAT(ccpack_error([&] { (void)cli::fingerprint_from_file(path); }), Catch::StartsWith(what + " is not valid JSON: "));
  test::write_file(path, R"({"schema": 2, "fields": {}})");
  CHECK_THAT(ccpack_error([&] { (void)cli::fingerprint_from_file(path); }),
             Catch::StartsWith(what + ": fingerprint field 'schema' is 2"));
  test::write_file(path, std::string((1u << 20) + 1, ' '));
  CHECK(ccpack_error([&] { (void)cli::fingerprint_from_file(path); }) == what + " is larger than 1 MiB");
}

TEST_CASE("difference_text: single values quoted or their note, set differences phrase by phrase, bounded", "[comparison]") {
  manifest::Comparison c = sample();
  CHECK(cli::difference_text(c.rows[0]) == "archive '3.5.0', here '3.6.0'");
  CHECK(cli::difference_text(c.rows[1]) == "nvidia-cublas: 1 -> 2; nvidia-nccl==3 only here");
  CHECK(cli::difference_text(c.rows[1], 1) == "nvidia-cublas: 1 -> 2; and 1 more");
  CHECK(cli::difference_text(c.rows[2]) == "archive not recorded, here 'sm_90'");
  manifest::ComparisonRow hostile;
  hostile.field = "gpu.name";
  hostile.archive = "H200\n\x1b[31m";
  hostile.local_note = "absent: nvml: \x01";
  CHECK(cli::difference_text(hostile) == "archive 'H200\\n\\x1b[31m', here absent: nvml: \\x01");
  manifest::ComparisonRow equal_sets = c.rows[1];
  equal_sets.diff = manifest::SetDiff{};  // a set row whose sets are equal reads as the values
  CHECK(cli::difference_text(equal_sets) == "archive 'nvidia-cublas==1', here 'nvidia-cublas==2, nvidia-nccl==3'");
}

TEST_CASE("comparison_json: the exact --json shape, set arrays only on set-valued rows", "[comparison]") {
  manifest::Comparison c = sample();
  CHECK(cli::set_diff_json(c.rows[0]).dump() == R"({"added":[],"removed":[],"changed":[]})");
  CHECK(cli::set_diff_json(c.rows[1]).dump() ==
        R"({"added":["nvidia-nccl==3"],"removed":[],"changed":[{"name":"nvidia-cublas","archive":"1","local":"2"}]})");
  CHECK(cli::comparison_json(c).dump() ==
        R"J({"verdict":"stale","archive_recorded":true,"summary":"inductor stale (triton.version); triton stale (triton.version)",)J"
        R"("components":[{"name":"inductor","kind":"inductor","verdict":"stale"},{"name":"triton","kind":"triton","verdict":"stale"}],)"
        R"("fields":[{"field":"triton.version","archive":"3.5.0","local":"3.6.0","verdicts":{"inductor":"stale","triton":"stale"},)"
        R"("ignored":false,"why":"Triton's cache key starts with its version"},)"
        R"({"field":"wheels.cuda","archive":"nvidia-cublas==1","local":"nvidia-cublas==2, nvidia-nccl==3",)"
        R"("added":["nvidia-nccl==3"],"removed":[],"changed":[{"name":"nvidia-cublas","archive":"1","local":"2"}],)"
        R"("verdicts":{"inductor":"warn","triton":"warn"},"ignored":false,"why":""},)"
        R"({"field":"gpu.arch","archive":null,"local":"sm_90","archive_note":"not recorded",)"
        R"("verdicts":{"inductor":"match","triton":"match"},"ignored":true,"why":""}]})");
}

TEST_CASE("comparison_json of a real comparison: an unrecorded archive warns on every field", "[comparison]") {
  manifest::Fingerprint local;
  local.set(manifest::field::gpu_arch, "sm_90", "nvml");
  manifest::Comparison c = manifest::compare(manifest::Fingerprint{}, local, {{"triton", manifest::ComponentKind::triton}});
  cli::ojson j = cli::comparison_json(c);
  CHECK(j["verdict"] == "warn");
  CHECK(j["archive_recorded"] == false);
  CHECK(j["components"].dump() == R"([{"name":"triton","kind":"triton","verdict":"warn"}])");
  REQUIRE(j["fields"].size() == manifest::field_rules().size());
  for (const auto& f : j["fields"]) CHECK(f["archive"].is_null());
}

TEST_CASE("refused and finish_with: the --json report on stdout, one error line on stderr, the exit code", "[comparison]") {
  cli::CommonOptions json_mode;
  json_mode.json = true;
  Captured c = capture([&] { return cli::refused(cli::Reporter(json_mode), {{"archive", "a.ccpack"}}, "gpu.arch differs"); });
  CHECK(c.result == 3);
  CHECK(c.out == "{\n  \"ok\": false,\n  \"exit_code\": 3,\n  \"error\": \"gpu.arch differs\",\n  \"archive\": \"a.ccpack\"\n}\n");
  CHECK(c.err == "ccpack: error: gpu.arch differs\n");
  cli::CommonOptions plain;
  Captured p = capture([&] {
    return cli::finish_with(cli::Reporter(plain), {{"archive", "a.ccpack"}}, ExitCode::not_restored, "not restored: 'x'");
  });
  CHECK(p.result == 5);
  CHECK(p.out.empty());
  CHECK(p.err == "ccpack: error: not restored: 'x'\n");
}
