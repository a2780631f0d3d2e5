// probe: what the probe memo vouches for. A memo another user owns or others can write is ignored, a FIFO
// at its path is no memo (and no hang), every start-up file form Python loads is part of the key, and a GPU-less
// machine's answer is kept under the GPU key so a no-op restore forks no nvidia-smi.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "probe/memo.hpp"
#include "probe/probe.hpp"
#include "unit/support.hpp"

using namespace ccpack;
using probe::ProbeMemo;
namespace fs = std::filesystem;

namespace {

// A memo at `file` that knows ptxas `program` (a stand-in ELF file) as version 12.8.
std::string memo_with_ptxas(const fs::path& file, const fs::path& program) {
  test::write_file(program,
                   std::string("\x7f"
                               "ELF"),
                   0755);
  ProbeMemo memo(file);
  memo.put_ptxas(program.string(), "12.8");
  memo.save();
  return program.string();
}

std::vector<std::string> startup_paths(const std::vector<std::string>& sys_path) {
  std::vector<std::string> out;
  for (const auto& f : probe::discover(sys_path).startup) out.push_back(f.path);
  return out;
}

}  // namespace

TEST_CASE("memo trust: a memo writable by group or others, or owned by another user, is ignored", "[memo]") {
  test::ScratchDir t;
  const std::string ptxas = memo_with_ptxas(t / "memo.json", t / "ptxas");
  REQUIRE(ProbeMemo(t / "memo.json").ptxas(ptxas) == std::optional<std::string>("12.8"));
  for (mode_t mode : {0620, 0602, 0666}) {
    REQUIRE(::chmod((t / "memo.json").c_str(), mode) == 0);
    CHECK_FALSE(ProbeMemo(t / "memo.json").ptxas(ptxas));
  }
  REQUIRE(::chmod((t / "memo.json").c_str(), 0644) == 0);
  CHECK(ProbeMemo(t / "memo.json").ptxas(ptxas) == std::optional<std::string>("12.8"));
  if (::geteuid() == 0) {  // only root can give a file away
    REQUIRE(::chown((t / "memo.json").c_str(), 65534, 65534) == 0);
    CHECK_FALSE(ProbeMemo(t / "memo.json").ptxas(ptxas));
  } else {
    WARN("not root: a memo owned by another user is not checked");
  }
}

TEST_CASE("memo trust: a FIFO or a link at the memo's path is no memo, and opening it does not wait", "[memo]") {
  test::ScratchDir t;
  const std::string ptxas = memo_with_ptxas(t / "real.json", t / "ptxas");
  REQUIRE(::mkfifo((t / "fifo.json").c_str(), 0600) == 0);
  CHECK(test::answer_within(30, [&] { return ProbeMemo(t / "fifo.json").ptxas(ptxas).value_or("none"); }) == "none");
  fs::create_symlink(t / "real.json", t / "link.json");
  CHECK_FALSE(ProbeMemo(t / "link.json").ptxas(ptxas));
}

TEST_CASE("memo key: start-up files in every form Python loads (.pyc, extension modules, __pycache__, package folders)",
          "[memo]") {
  test::ScratchDir t;
  const std::string lib = (t / "lib").string();
  test::write_file(t / "lib/sitecustomize.py", "print('a')\n");
  test::write_file(t / "lib/other.py", "");
  CHECK(startup_paths({lib}) == std::vector<std::string>{lib + "/sitecustomize.py"});
  // Each form added after the memo is warm is a new start-up file: the memo's start-up set no longer matches.
  for (const char* added : {"__pycache__/sitecustomize.cpython-312.pyc", "sitecustomize.pyc",
                            "sitecustomize.cpython-312-x86_64-linux-gnu.so", "usercustomize.abi3.so", "usercustomize.so"}) {
    std::vector<std::string> before = startup_paths({lib});
    test::write_file(t / "lib" / added, "compiled");
    std::vector<std::string> after = startup_paths({lib});
    CHECK(after.size() == before.size() + 1);
    CHECK(std::find(after.begin(), after.end(), lib + "/" + added) != after.end());
  }
  test::write_file(t / "lib/__pycache__/other.cpython-312.pyc", "compiled");  // not a start-up module
  std::vector<std::string> all = startup_paths({lib});
  CHECK(std::find(all.begin(), all.end(), lib + "/__pycache__/other.cpython-312.pyc") == all.end());
  // A package folder: its files count, so an edit of its __init__.py changes the set's stat.
  const std::string pkg = (t / "pkg").string();
  test::write_file(t / "pkg/usercustomize/__init__.py", "x = 1\n");
  auto before = probe::discover({pkg}).startup;
  CHECK(before.size() == 2);
  test::write_file(t / "pkg/usercustomize/__init__.py", "x = 12\n");
  CHECK(probe::discover({pkg}).startup != before);
}

TEST_CASE("GPU memo: without a driver, the answer 'no GPU' (NVML missing) is kept under the GPU key", "[memo]") {
  test::ScratchDir t;
  test::ScopedEnv path("PATH", (t / "bin").string());
  test::ScopedEnv sysfs("CCPACK_SYSFS_ROOT", (t / "sys").string());
  auto key = probe::gpu_memo_key(t.path().string());
  REQUIRE(key);
  CHECK((*key)["driver"].is_null());
  manifest::Fingerprint none;
  const std::string why = "nvml: libnvidia-ml.so.1 not loadable; nvidia-smi: not found; kfd: no GPU node";
  for (const char* f : {"gpu.vendor", "gpu.count", "gpu.name", "gpu.arch"}) none.absent(f, why);
  {
    ProbeMemo memo(t / "memo.json");
    memo.put_gpu(*key, none);
    memo.save();
  }
  auto back = ProbeMemo(t / "memo.json").gpu(*key);
  REQUIRE(back);
  CHECK(back->fields == none.fields);
  // What could make a probe answer changes the key: an nvidia-smi on PATH, a KFD node.
  test::write_file(t / "bin/nvidia-smi", "#!/bin/sh\n", 0755);
  CHECK(probe::gpu_memo_key(t.path().string()) != key);
  fs::remove(t / "bin/nvidia-smi");
  CHECK(probe::gpu_memo_key(t.path().string()) == key);
  // Where the loader would find NVML: another LD_LIBRARY_PATH, a library installed (ldconfig rewrites the cache).
  {
    test::ScopedEnv ld("LD_LIBRARY_PATH", (t / "nvidia-libs").string());
    CHECK(probe::gpu_memo_key(t.path().string()) != key);
  }
  CHECK(probe::gpu_memo_key(t.path().string()) == key);
  test::write_file(t / "etc/ld.so.cache", "ld.so-1.7.0 libnvidia-ml.so.1");
  CHECK(probe::gpu_memo_key(t.path().string()) != key);
  fs::remove(t / "etc/ld.so.cache");
  CHECK(probe::gpu_memo_key(t.path().string()) == key);
  fs::create_directories(t / "sys/class/kfd/kfd/topology/nodes/0");
  CHECK(probe::gpu_memo_key(t.path().string()) != key);
  // NVML loaded but found nothing (a stub, a broken driver): not kept, the probe runs again.
  manifest::Fingerprint failed;
  failed.absent("gpu.count", "nvml: nvmlInit_v2 failed (9); nvidia-smi: not found; kfd: no GPU node");
  ProbeMemo other(t / "other.json");
  other.put_gpu(*key, failed);
  CHECK_FALSE(other.gpu(*key));
}
