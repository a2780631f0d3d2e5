// probe/python.cpp end to end with stand-in interpreters and ptxas (shell scripts in a scratch folder that
// print what a real one would, or fail): the arguments the probe passes, the fields it fills from the report and
// the sys.path listing, every failure turned into absent fields with its reason, and the memo: a hit that runs
// nothing, a miss, and a program that cannot be memoised. No real python or GPU is needed.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "probe/probe.hpp"
#include "unit/support.hpp"

using namespace ccpack;
using namespace ccpack::manifest;
namespace probe = ccpack::probe;
namespace fs = std::filesystem;

namespace {

// A site-packages folder with torch, triton and a CUDA wheel, and torch/version.py.
fs::path make_site(const fs::path& site) {
  fs::create_directories(site / "torch-2.7.1.dist-info");
  fs::create_directories(site / "triton-3.3.1.dist-info");
  fs::create_directories(site / "nvidia_cublas_cu12-12.6.4.1.dist-info");
  test::write_file(site / "torch/version.py", "__version__ = '2.7.1+cu126'\ncuda = '12.6'\nhip = None\n");
  return site;
}

// An interpreter that records its arguments in `args` and prints the report for `site`.
fs::path fake_python(const fs::path& dir, const fs::path& site) {
  const std::string report = R"({"version": "3.12.3", "abi": "cpython-312-x86_64-linux-gnu", "executable": "/usr/bin/python3", )"
                             R"("path": ["/usr/lib/python312.zip", ")" +
                             site.string() + R"("], "site": [")" + site.string() + R"("]})";
  test::write_file(dir / "python",
                   "#!/bin/sh\nprintf '%s\\n' \"$1\" \"$2\" \"$3\" > '" + (dir / "args").string() + "'\necho '" + report + "'\n",
                   0755);
  return dir / "python";
}

fs::path script(const fs::path& path, const std::string& body) {
  test::write_file(path, "#!/bin/sh\n" + body + "\n", 0755);
  return path;
}

}  // namespace

TEST_CASE("python probe: one run with -B -c and the script, the report and the listing make the fields", "[probe-python]") {
  test::ScratchDir t;
  fs::path site = make_site(t / "site-packages");
  fs::path python = fake_python(t.path(), site);
  probe::ProbeMemo memo(std::nullopt);
  Fingerprint fp;
  CHECK(probe::probe_python(fp, python.string(), test::kNoDeadline, memo) == site.string());
  CHECK(memo.python_status == "off");
  std::string args = test::slurp(t / "args");
  CHECK(args.starts_with("-B\n-c\nimport sys, _imp\n"));
  CHECK(test::field_text(fp, field::python_version) == "3.12.3 [python sys.version_info]");
  CHECK(test::field_text(fp, field::python_abi) == "cpython-312-x86_64-linux-gnu [python sysconfig SOABI]");
  CHECK(test::field_text(fp, field::python_site_packages) == site.string() + " [python sys.path]");
  CHECK(test::field_text(fp, field::torch_version) == "2.7.1+cu126 [torch/version.py]");
  CHECK(test::field_text(fp, field::torch_cuda) == "12.6 [torch/version.py]");
  CHECK(test::field_text(fp, field::torch_hip) == "none [torch/version.py]");
  CHECK(test::field_text(fp, field::triton_version) == "3.3.1 [python:dist-info (triton)]");
  CHECK(test::field_text(fp, field::wheels_cuda) == "nvidia-cublas-cu12==12.6.4.1 [python:dist-info]");
  CHECK(test::field_text(fp, field::ck4inductor_version) == "<absent: python: no ck4inductor distribution on sys.path>");
}

TEST_CASE("python probe: a missing, failing or silent interpreter leaves every python field absent, with why", "[probe-python]") {
  test::ScratchDir t;
  probe::ProbeMemo memo(std::nullopt);
  auto absent_reason = [&](const std::string& python) {
    Fingerprint fp;
    CHECK(probe::probe_python(fp, python, test::kNoDeadline, memo).empty());
    for (std::string_view f :
         {field::python_version, field::python_abi, field::python_site_packages, field::torch_version, field::torch_cuda,
          field::torch_hip, field::triton_version, field::ck4inductor_version, field::wheels_cuda}) {
      CHECK(fp.get(f) != nullptr);
      CHECK_FALSE(fp.get(f)->value);
    }
    return fp.get(field::python_version)->source;
  };
  CHECK(absent_reason((t / "none").string()) == "python '" + (t / "none").string() + "': not found");
  CHECK(absent_reason(script(t / "fails", "echo oops; exit 3").string()) == "python '" + (t / "fails").string() + "': exit 3");
  CHECK(absent_reason(script(t / "garbage", "echo 'Traceback (most recent call last):'").string()) ==
        "python: the probe printed no JSON");
  CHECK(absent_reason(script(t / "array", "echo '[1, 2]'").string()) == "python: the probe printed no JSON");
  CHECK(absent_reason(script(t / "a\nb", "exit 1").string()) == "python '" + (t / "a\\nb").string() + "': exit 1");
}

TEST_CASE("python probe: a report with wrong types or missing members gives absent fields, not a crash", "[probe-python]") {
  test::ScratchDir t;
  fs::path python = script(t / "python", R"(echo '{"version": 3, "abi": "", "path": "notalist", "site": [1, ""]}')");
  probe::ProbeMemo memo(std::nullopt);
  Fingerprint fp;
  CHECK(probe::probe_python(fp, python.string(), test::kNoDeadline, memo).empty());
  CHECK(test::field_text(fp, field::python_version) == "<absent: python: no version>");
  CHECK(test::field_text(fp, field::python_abi) == "<absent: python: sysconfig has no SOABI>");
  CHECK(test::field_text(fp, field::python_site_packages) == " [python sys.path]");  // no folders: an empty list
  CHECK(test::field_text(fp, field::torch_version) == "<absent: python: no torch distribution on sys.path>");
  CHECK(test::field_text(fp, field::torch_cuda) == "<absent: python: no torch distribution on sys.path>");
}

TEST_CASE("python probe and the memo: a shim is memoised for the interpreter it ran, a memoised program is not run at all",
          "[probe-python]") {
  test::ScratchDir t;
  fs::path site = make_site(t / "site-packages");
  probe::ProbeMemo memo(t / "memo.json");
  // An "ELF" file that cannot run: only the memo can answer for it.
  test::write_file(t / "elf/python3",
                   std::string("\x7f"
                               "ELF") +
                       "not really",
                   0755);
  const std::string elf = (t / "elf/python3").string();
  // A shim (a script) whose interpreter reports the ELF file above as sys.executable.
  const std::string report = R"({"version": "3.12.3", "abi": "cpython-312-x86_64-linux-gnu", "executable": ")" + elf +
                             R"(", "path": [")" + site.string() + R"("], "site": [")" + site.string() + R"("]})";
  fs::path shim = script(t / "shim", "touch '" + (t / "ran").string() + "'\necho '" + report + "'");
  Fingerprint by_shim;
  CHECK(probe::probe_python(by_shim, shim.string(), test::kNoDeadline, memo) == site.string());
  CHECK(memo.python_status == "miss");
  fs::remove(t / "ran");
  CHECK(probe::probe_python(by_shim, shim.string(), test::kNoDeadline, memo) == site.string());
  CHECK(memo.python_status == "hit");
  CHECK_FALSE(fs::exists(t / "ran"));  // the shim did not run
  // A script whose sys.executable names no ELF file (a relative path here) is not kept: it runs every time.
  fs::path odd = script(
      t / "odd",
      "echo '" +
          std::string(R"({"version": "3.12.3", "abi": "x", "executable": "relative/python", "path": [], "site": ["/s"]})") + "'");
  Fingerprint by_odd;
  (void)probe::probe_python(by_odd, odd.string(), test::kNoDeadline, memo);
  CHECK(memo.python_status == "not memoised: the script ran no ELF interpreter (sys.executable)");
  std::string why;
  auto key = memo.interpreter_key(elf, why);
  REQUIRE(key);
  probe::InterpreterReport r{"3.11.9", "cpython-311-x86_64-linux-gnu", elf, {site.string()}, {site.string()}};
  memo.put_python(*key, r, {});
  Fingerprint hit;
  CHECK(probe::probe_python(hit, elf, test::kNoDeadline, memo) == site.string());
  CHECK(memo.python_status == "hit");
  CHECK(test::field_text(hit, field::python_version) == "3.11.9 [python sys.version_info]");
  CHECK(test::field_text(hit, field::triton_version) == "3.3.1 [python:dist-info (triton)]");  // the listing is read again
  // A start-up file appeared on sys.path: the memo no longer vouches, the program is run (and cannot be).
  test::write_file(site / "new.pth", "/x\n");
  Fingerprint miss;
  CHECK(probe::probe_python(miss, elf, test::kNoDeadline, memo).empty());
  CHECK(memo.python_status == "miss");
  CHECK_FALSE(miss.get(field::python_version)->value);
}

TEST_CASE("ptxas probe: TRITON_PTXAS_PATH, else triton's bundled ptxas, else absent, each failure named", "[probe-python]") {
  test::ScratchDir t;
  probe::ProbeMemo memo(std::nullopt);
  const std::string banner =
      "echo 'ptxas: NVIDIA (R) Ptx optimizing assembler'; echo 'Cuda compilation tools, release 12.8, V12.8.93'";
  fs::path env_ptxas = script(t / "ptxas", banner);
  {
    test::ScopedEnv env("TRITON_PTXAS_PATH", env_ptxas.string());
    Fingerprint fp;
    probe::probe_ptxas(fp, "/ignored/site", test::kNoDeadline, memo);
    CHECK(test::field_text(fp, field::ptxas_version) == "12.8.93 [ptxas --version (TRITON_PTXAS_PATH)]");
  }
  test::ScopedEnv unset("TRITON_PTXAS_PATH", std::nullopt);
  Fingerprint none;
  probe::probe_ptxas(none, "", test::kNoDeadline, memo);
  CHECK(test::field_text(none, field::ptxas_version) == "<absent: ptxas: no TRITON_PTXAS_PATH and no triton distribution>");
  script(t / "site/triton/backends/nvidia/bin/ptxas", banner);
  Fingerprint bundled;
  probe::probe_ptxas(bundled, (t / "site").string(), test::kNoDeadline, memo);
  CHECK(test::field_text(bundled, field::ptxas_version) == "12.8.93 [ptxas --version (triton's bundled ptxas)]");
  Fingerprint missing;
  probe::probe_ptxas(missing, (t / "nosite").string(), test::kNoDeadline, memo);
  CHECK(test::field_text(missing, field::ptxas_version) ==
        "<absent: ptxas '" + (t / "nosite/triton/backends/nvidia/bin/ptxas").string() + "': not found>");
  script(t / "quiet/triton/backends/nvidia/bin/ptxas", "echo 'release 12.8, V12.8.93; rm -rf /'");
  Fingerprint odd;
  probe::probe_ptxas(odd, (t / "quiet").string(), test::kNoDeadline, memo);
  CHECK(test::field_text(odd, field::ptxas_version) ==
        "<absent: ptxas '" + (t / "quiet/triton/backends/nvidia/bin/ptxas").string() + "': no version in its output>");
  script(t / "fail/triton/backends/nvidia/bin/ptxas", "exit 2");
  Fingerprint failed;
  probe::probe_ptxas(failed, (t / "fail").string(), test::kNoDeadline, memo);
  CHECK(test::field_text(failed, field::ptxas_version) ==
        "<absent: ptxas '" + (t / "fail/triton/backends/nvidia/bin/ptxas").string() + "': exit 2>");
}

TEST_CASE("ptxas probe: a memoised version is used without running the program", "[probe-python]") {
  test::ScratchDir t;
  test::write_file(t / "ptxas",
                   std::string("\x7f"
                               "ELF") +
                       "cannot run",
                   0755);
  test::ScopedEnv env("TRITON_PTXAS_PATH", (t / "ptxas").string());
  probe::ProbeMemo memo(t / "memo.json");
  Fingerprint before;
  probe::probe_ptxas(before, "", test::kNoDeadline, memo);
  CHECK_FALSE(before.get(field::ptxas_version)->value);  // it cannot run, and nothing is memoised yet
  memo.put_ptxas((t / "ptxas").string(), "12.4.131");
  Fingerprint fp;
  probe::probe_ptxas(fp, "", test::kNoDeadline, memo);
  CHECK(test::field_text(fp, field::ptxas_version) == "12.4.131 [ptxas --version (TRITON_PTXAS_PATH)]");
}
