// probe/memo.cpp, the probe memo, with stand-in programs in a scratch folder (a file that starts with the ELF
// magic is an "ELF program" to the memo; nothing is run): where the file is, which programs can be memoised and
// why not, what a key holds, a report reused only while its site folders and start-up files are unchanged, ptxas
// versions tied to the program's identity, the entry bound, and broken or hostile memo files read as empty.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "probe/memo.hpp"
#include "probe/probe.hpp"
#include "unit/support.hpp"

using namespace ccpack;
using probe::InterpreterReport;
using probe::ProbeMemo;
using probe::StartupFile;
namespace fs = std::filesystem;

namespace {

// A stand-in ELF program: the magic, then `tail` (change it to change the file's identity).
fs::path fake_elf(const fs::path& path, const std::string& tail = "") {
  test::write_file(path,
                   std::string("\x7f"
                               "ELF") +
                       tail,
                   0755);
  return path;
}

InterpreterReport report_for(const fs::path& root) {
  InterpreterReport r;
  r.version = "3.12.3";
  r.abi = "cpython-312-x86_64-linux-gnu";
  r.executable = (root / "bin/python3").string();
  r.path = {(root / "lib").string()};
  r.site_candidates = {(root / "site").string(), (root / "user-site").string()};
  return r;
}

std::string why_not(const ProbeMemo& memo, const std::string& program) {
  std::string why;
  auto key = memo.interpreter_key(program, why);
  return key ? "(memoised)" : why;
}

}  // namespace

TEST_CASE("memo file: $CCPACK_PROBE_CACHE (off, 0 or empty disable it), else XDG, else HOME, else none", "[memo]") {
  test::ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
  test::ScopedEnv home("HOME", "/home/u");
  {
    test::ScopedEnv set("CCPACK_PROBE_CACHE", "/m/memo.json");
    CHECK(ProbeMemo::default_file() == fs::path("/m/memo.json"));
  }
  for (const char* off : {"off", "0", ""}) {
    test::ScopedEnv set("CCPACK_PROBE_CACHE", std::string(off));
    CHECK_FALSE(ProbeMemo::default_file());
  }
  test::ScopedEnv unset("CCPACK_PROBE_CACHE", std::nullopt);
  CHECK(ProbeMemo::default_file() == fs::path("/xdg/ccpack/probe-memo.json"));
  {
    test::ScopedEnv relative("XDG_CACHE_HOME", "rel");  // not absolute: ignored, as the XDG spec says
    CHECK(ProbeMemo::default_file() == fs::path("/home/u/.cache/ccpack/probe-memo.json"));
  }
  test::ScopedEnv no_xdg("XDG_CACHE_HOME", std::nullopt);
  CHECK(ProbeMemo::default_file() == fs::path("/home/u/.cache/ccpack/probe-memo.json"));
  test::ScopedEnv no_home("HOME", std::nullopt);
  CHECK_FALSE(ProbeMemo::default_file());
}

TEST_CASE(
    "memo keys: an ELF program or a small script found on disk is memoised, other files, a missing program or no memo are not",
    "[memo]") {
  test::ScratchDir t;
  ProbeMemo off(std::nullopt);
  CHECK(why_not(off, "python3") == "off");
  CHECK_FALSE(off.enabled());
  ProbeMemo memo(t / "memo.json");
  CHECK(memo.enabled());
  test::write_file(t / "bin/wrapper", "#!/bin/sh\nexec python3 \"$@\"\n", 0755);
  CHECK(why_not(memo, (t / "bin/wrapper").string()) == "(memoised)");
  test::write_file(t / "bin/big", "#!/bin/sh\n" + std::string(probe::kMaxShimBytes, '#'), 0755);
  CHECK(why_not(memo, (t / "bin/big").string()) == "neither an ELF executable nor a script");
  test::write_file(t / "bin/data", "MZ not a program", 0755);
  CHECK(why_not(memo, (t / "bin/data").string()) == "neither an ELF executable nor a script");
  CHECK(why_not(memo, (t / "bin/none").string()) == "not found");
  CHECK(why_not(memo, "") == "not found");
  fake_elf(t / "bin/python3");
  CHECK(why_not(memo, (t / "bin/python3").string()) == "(memoised)");
  // A bare name is searched on PATH, as exec does; a file without the x bit is not found there.
  test::ScopedEnv path("PATH", (t / "nothing").string() + ":" + (t / "bin").string());
  CHECK(why_not(memo, "python3") == "(memoised)");
  ::chmod((t / "bin/python3").c_str(), 0644);
  CHECK(why_not(memo, "python3") == "not found");
}

TEST_CASE("memo keys: the program's real path and identity, pyvenv.cfg beside and above it, PYTHON* and HOME", "[memo]") {
  test::ScratchDir t;
  fake_elf(t / "real/python3.12");
  fs::create_directories(t / "venv/bin");
  fs::create_symlink(t / "real/python3.12", t / "venv/bin/python");
  test::write_file(t / "venv/pyvenv.cfg", "home = /usr/bin\n");
  test::ScopedEnv pp("PYTHONPATH", "/abs/only");
  test::ScopedEnv home("HOME", "/home/u");
  test::ScopedEnv other("PYTHONNOUSERSITE", "1");
  ProbeMemo memo(t / "memo.json");
  std::string why;
  auto key = memo.interpreter_key((t / "venv/bin/python").string(), why);
  REQUIRE(key);
  CHECK((*key)["schema"] == 1);
  CHECK((*key)["program"] == (t / "venv/bin/python").string());
  CHECK((*key)["real"] == fs::canonical(t / "real/python3.12").string());
  auto id = probe::file_id((t / "real/python3.12").string());
  REQUIRE(id);
  CHECK((*key)["id"] == nlohmann::json::array({id->dev, id->ino, id->size, id->mtime_ns}));
  CHECK((*key)["pyvenv"][0].is_null());    // none in venv/bin
  CHECK((*key)["pyvenv"][1].size() == 4);  // venv/pyvenv.cfg
  CHECK((*key)["env"]["PYTHONPATH"] == "/abs/only");
  CHECK((*key)["env"]["PYTHONNOUSERSITE"] == "1");
  CHECK((*key)["env"]["HOME"] == "/home/u");
  CHECK_FALSE(key->contains("cwd"));
  // A relative PYTHONPATH entry makes the current folder part of the key.
  test::ScopedEnv rel("PYTHONPATH", "/abs::src");
  auto with_cwd = memo.interpreter_key((t / "venv/bin/python").string(), why);
  REQUIRE(with_cwd);
  CHECK((*with_cwd)["cwd"] == fs::current_path().string());
}

TEST_CASE("memo: a report comes back after save, only while the same site folders exist and start-up files match", "[memo]") {
  test::ScratchDir t;
  fake_elf(t / "bin/python3");
  fs::create_directories(t / "site");
  InterpreterReport r = report_for(t.path());
  test::write_file(t / "lib/x.pth", "/x\n");
  std::vector<StartupFile> startup = {{(t / "lib/x.pth").string(), *probe::file_id((t / "lib/x.pth").string())}};
  std::string why;
  {
    ProbeMemo memo(t / "cache/memo.json");
    auto key = memo.interpreter_key((t / "bin/python3").string(), why);
    REQUIRE(key);
    CHECK_FALSE(memo.python(*key));
    memo.put_python(*key, r, startup);
    memo.save();
  }
  struct stat st {};
  REQUIRE(::stat((t / "cache/memo.json").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);
  ProbeMemo again(t / "cache/memo.json");
  auto key = again.interpreter_key((t / "bin/python3").string(), why);
  REQUIRE(key);
  auto back = again.python(*key);
  REQUIRE(back);
  CHECK(*back == r);
  CHECK(again.startup_unchanged(*key, startup));
  CHECK_FALSE(again.startup_unchanged(*key, {}));
  test::write_file(t / "lib/x.pth", "/x\n/y\n");  // same path, other size
  CHECK_FALSE(again.startup_unchanged(*key, {{(t / "lib/x.pth").string(), *probe::file_id((t / "lib/x.pth").string())}}));
  fs::create_directories(t / "user-site");  // a site folder that appeared changes sys.path
  CHECK_FALSE(again.python(*key));
  fs::remove(t / "user-site");
  CHECK(again.python(*key));
  fake_elf(t / "bin/python3", "rebuilt");  // another interpreter file: another key
  auto rebuilt = again.interpreter_key((t / "bin/python3").string(), why);
  REQUIRE(rebuilt);
  CHECK_FALSE(again.python(*rebuilt));
}

TEST_CASE("memo: ptxas versions are tied to the program's identity, at most kMaxMemoEntries of each, newest first", "[memo]") {
  test::ScratchDir t;
  const std::string ptxas = fake_elf(t / "ptxas").string();
  {
    ProbeMemo memo(t / "memo.json");
    CHECK_FALSE(memo.ptxas(ptxas));
    memo.put_ptxas(ptxas, "12.8.93");
    memo.put_ptxas(ptxas, "12.8.94");  // replaces, not added
    test::write_file(t / "script", "#!/bin/sh\n", 0755);
    memo.put_ptxas((t / "script").string(), "1.0");  // not ELF: not kept
    memo.save();
  }
  ProbeMemo again(t / "memo.json");
  CHECK(again.ptxas(ptxas) == std::optional<std::string>("12.8.94"));
  CHECK_FALSE(again.ptxas((t / "script").string()));
  fake_elf(t / "ptxas", "new build");
  CHECK_FALSE(again.ptxas(ptxas));
  for (std::size_t i = 0; i <= probe::kMaxMemoEntries; ++i) {
    again.put_ptxas(fake_elf(t / ("p" + std::to_string(i))).string(), std::to_string(i));
  }
  again.save();
  ProbeMemo bounded(t / "memo.json");
  CHECK_FALSE(bounded.ptxas((t / "p0").string()));  // the oldest went
  CHECK(bounded.ptxas((t / "p1").string()) == std::optional<std::string>("1"));
  CHECK(bounded.ptxas((t / "p16").string()) == std::optional<std::string>("16"));
}

TEST_CASE("memo: broken, foreign, oversized or hostile memo files read as empty, a failed save is ignored", "[memo]") {
  test::ScratchDir t;
  const std::string ptxas = fake_elf(t / "ptxas").string();
  {
    ProbeMemo memo(t / "good.json");
    memo.put_ptxas(ptxas, "12.8.93");
    memo.save();
  }
  const std::string good = test::slurp(t / "good.json");
  REQUIRE(ProbeMemo(t / "good.json").ptxas(ptxas));
  auto reads_empty = [&](const std::string& text) {
    test::write_file(t / "bad.json", text);
    return !ProbeMemo(t / "bad.json").ptxas(ptxas).has_value();
  };
  CHECK(reads_empty(""));
  CHECK(reads_empty(good.substr(0, good.size() / 2)));
  CHECK(reads_empty("[]"));
  CHECK(reads_empty(R"({"schema": "1", "ptxas": []})"));
  std::string v2 = good;
  v2.replace(v2.find("\"schema\":1"), 10, "\"schema\":2");
  CHECK(reads_empty(v2));
  CHECK(reads_empty(R"({"schema": 1, "ptxas": [{"path": ")" + ptxas + R"(", "id": [1, 2, 3], "version": "9"}]})"));
  CHECK(reads_empty(R"({"schema": 1, "ptxas": [{"path": ")" + ptxas + R"(", "id": "x", "version": 9}]})"));
  CHECK(reads_empty(R"({"schema": 1, "schema": 1, "ptxas": []})"));
  CHECK(reads_empty(std::string(100000, '[')));
  std::string padded = good;
  padded.insert(1, probe::kMaxMemoBytes, ' ');
  CHECK(reads_empty(padded));
  // A memo whose folder cannot be created: save() does nothing and throws nothing.
  test::write_file(t / "file", "");
  ProbeMemo blocked(t / "file/memo.json");
  blocked.put_ptxas(ptxas, "1");
  CHECK_NOTHROW(blocked.save());
  CHECK_FALSE(fs::exists(t / "file/memo.json"));
}

TEST_CASE("file_id and read_prefix: stat identity and a bounded read, nothing for what cannot be read", "[memo]") {
  test::ScratchDir t;
  test::write_file(t / "f", "hello world");
  auto id = probe::file_id((t / "f").string());
  REQUIRE(id);
  CHECK(id->size == 11);
  CHECK_FALSE(probe::file_id((t / "none").string()));
  CHECK(probe::read_prefix((t / "f").string(), 5) == std::optional<std::string>("hello"));
  CHECK(probe::read_prefix((t / "f").string(), 100) == std::optional<std::string>("hello world"));
  CHECK_FALSE(probe::read_prefix((t / "none").string(), 5));
  CHECK_FALSE(probe::read_prefix(t.path().string(), 5));  // a folder
}

namespace {

// The current folder for one scope (a shim's key walks the version files from there up).
class ScopedCwd {
 public:
  explicit ScopedCwd(const fs::path& dir) : old_(fs::current_path()) { fs::current_path(dir); }
  ~ScopedCwd() { fs::current_path(old_); }
  ScopedCwd(const ScopedCwd&) = delete;
  ScopedCwd& operator=(const ScopedCwd&) = delete;

 private:
  fs::path old_;
};

}  // namespace

TEST_CASE("memo: a version-manager shim is reused while its choice inputs and the interpreter it ran are unchanged", "[memo]") {
  test::ScratchDir t;
  fake_elf(t / "bin/python3");
  fs::create_directories(t / "site");
  fs::create_directories(t / "project/sub");
  test::write_file(t / "shims/python3", "#!/usr/bin/env bash\nexec pyenv exec python3 \"$@\"\n", 0755);
  const std::string shim = (t / "shims/python3").string();
  test::ScopedEnv version("PYENV_VERSION", "3.12.3");
  test::ScopedEnv root("PYENV_ROOT", (t / "pyenv").string());
  test::write_file(t / "pyenv/version", "3.12.3\n");
  ScopedCwd cwd(t / "project/sub");
  InterpreterReport r = report_for(t.path());  // sys.executable: the ELF stand-in
  std::string why;
  ProbeMemo memo(t / "memo.json");
  auto key = memo.interpreter_key(shim, why);
  REQUIRE(key);
  CHECK((*key)["shim"]["vars"]["PYENV_VERSION"] == "3.12.3");
  CHECK((*key)["shim"]["vars"]["PATH"] == std::getenv("PATH"));
  REQUIRE((*key)["shim"]["files"].size() == 1);  // pyenv's global version file; no .python-version yet
  CHECK((*key)["shim"]["files"][0][0] == (t / "pyenv/version").string());
  CHECK(memo.put_python(*key, r, {}).empty());
  CHECK(memo.python(*key) == r);
  // Whatever the shim chooses by is part of the key: another PYENV_VERSION, a .python-version above the current
  // folder, an edited global version file, an edited shim.
  auto key_now = [&] { return *memo.interpreter_key(shim, why); };
  {
    test::ScopedEnv other("PYENV_VERSION", "3.11.9");
    CHECK_FALSE(memo.python(key_now()));
  }
  test::write_file(t / "project/.python-version", "3.11.9\n");
  CHECK_FALSE(memo.python(key_now()));
  fs::remove(t / "project/.python-version");
  CHECK(memo.python(key_now()) == r);
  test::write_file(t / "pyenv/version", "3.11.9\n");
  CHECK_FALSE(memo.python(key_now()));
  test::write_file(t / "pyenv/version", "3.12.3\n");
  auto rekeyed = key_now();
  CHECK(memo.put_python(rekeyed, r, {}).empty());
  CHECK(memo.python(rekeyed) == r);
  // The interpreter the shim ran is rebuilt: the entry no longer holds.
  fake_elf(t / "bin/python3", "rebuilt");
  CHECK_FALSE(memo.python(rekeyed));
  // A shim whose sys.executable is not an ELF program is not kept.
  InterpreterReport scripted = r;
  scripted.executable = shim;
  CHECK(memo.put_python(rekeyed, scripted, {}) == "the script ran no ELF interpreter (sys.executable)");
  CHECK(memo.put_python(rekeyed, InterpreterReport{}, {}) == "the interpreter named no site folders");
}

TEST_CASE("GPU memo key: the driver's version file, its GPUs, the container's device nodes and the choosing variables",
          "[memo]") {
  test::ScratchDir t;
  const std::string root = t.path().string();
  CHECK((*probe::gpu_memo_key(root))["driver"].is_null());  // no NVIDIA driver files: the key of "no GPU"
  test::write_file(t / "proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.86.15\n");
  test::write_file(t / "proc/driver/nvidia/gpus/0000:19:00.0/information", "Model: \t\t NVIDIA H200\n");
  test::write_file(t / "dev/nvidia0", "");
  test::write_file(t / "dev/nvidiactl", "");  // not a GPU node
  test::ScopedEnv cvd("CUDA_VISIBLE_DEVICES", std::nullopt);
  auto key = probe::gpu_memo_key(root);
  REQUIRE(key);
  CHECK((*key)["gpus"] == nlohmann::json::array({nlohmann::json::array({"0000:19:00.0", "Model: \t\t NVIDIA H200\n"})}));
  CHECK((*key)["nodes"].size() == 1);
  CHECK((*key)["nodes"][0][0] == "nvidia0");
  auto changed = [&](const std::function<void()>& change) {
    change();
    return probe::gpu_memo_key(root) != key;
  };
  CHECK(changed([&] { test::write_file(t / "dev/nvidia1", ""); }));  // another GPU given to the container
  key = probe::gpu_memo_key(root);
  CHECK(changed([&] { test::write_file(t / "proc/driver/nvidia/version", "NVRM version: 580.65.06\n"); }));
  key = probe::gpu_memo_key(root);
  CHECK(changed([&] { test::write_file(t / "proc/driver/nvidia/gpus/0000:19:00.0/information", "Model: NVIDIA H100\n"); }));
  key = probe::gpu_memo_key(root);
  test::ScopedEnv other("CUDA_VISIBLE_DEVICES", "1");
  CHECK(probe::gpu_memo_key(root) != key);
}

TEST_CASE("GPU memo: NVML's fields are kept and come back after save, other sources and no GPU are not kept", "[memo]") {
  test::ScratchDir t;
  const nlohmann::json key = {{"driver", "NVRM 570"}, {"nodes", nlohmann::json::array()}};
  manifest::Fingerprint nvml;
  nvml.set(manifest::field::gpu_vendor, "nvidia", "nvml");
  nvml.set(manifest::field::gpu_count, "1", "nvml");
  nvml.set(manifest::field::gpu_arch, "sm_90", "nvml");
  nvml.absent(manifest::field::gpu_sm_count, "nvml: nvmlDeviceGetAttributes_v2 gives no SM count on this device");
  nvml.set(manifest::field::python_version, "3.12.3", "python sys.version_info");  // not a GPU field: not kept
  {
    ProbeMemo memo(t / "memo.json");
    CHECK_FALSE(memo.gpu(key));
    manifest::Fingerprint smi = nvml;
    smi.set(manifest::field::gpu_vendor, "nvidia", "nvidia-smi");
    memo.put_gpu(key, smi);
    CHECK_FALSE(memo.gpu(key));
    manifest::Fingerprint none = nvml;
    none.set(manifest::field::gpu_count, "0", "nvml");
    memo.put_gpu(key, none);
    CHECK_FALSE(memo.gpu(key));
    memo.put_gpu(key, nvml);
    memo.save();
  }
  ProbeMemo again(t / "memo.json");
  auto back = again.gpu(key);
  REQUIRE(back);
  CHECK(back->fields.size() == 4);
  CHECK(back->fields == std::map<std::string, manifest::FieldValue, std::less<>>{
                            {"gpu.arch", {"sm_90", "nvml"}},
                            {"gpu.count", {"1", "nvml"}},
                            {"gpu.sm_count", {std::nullopt, "nvml: nvmlDeviceGetAttributes_v2 gives no SM count on this device"}},
                            {"gpu.vendor", {"nvidia", "nvml"}}});
  CHECK_FALSE(again.gpu({{"driver", "NVRM 580"}}));
  // An entry that does not read (a field that is not gpu.*, a value of the wrong shape) is no answer.
  test::write_file(
      t / "bad.json",
      R"({"schema": 1, "gpu": [{"key": {"driver": "NVRM 570", "nodes": []}, "fields": {"gpu.count": [1, "nvml"]}}]})");
  CHECK_FALSE(ProbeMemo(t / "bad.json").gpu(key));
  test::write_file(
      t / "bad.json",
      R"({"schema": 1, "gpu": [{"key": {"driver": "NVRM 570", "nodes": []}, "fields": {"python.version": ["3", "x"]}}]})");
  CHECK_FALSE(ProbeMemo(t / "bad.json").gpu(key));
}
