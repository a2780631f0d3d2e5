// probe/ptxas.cpp: the ptxas files a warm-up may pick, in order ($TRITON_PTXAS_PATH first, $CUDA_HOME/bin/ptxas later),
// each with what its --version says; a file that is not executable or prints no version is left out. The ptxas
// files are shell scripts printing ptxas's banner; the interpreter is absent, so no site-packages ptxas is listed.
// /usr/local/cuda/bin/ptxas, when this machine has one, comes last and is not judged here.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "probe/probe.hpp"
#include "unit/support.hpp"

using namespace ccpack;

namespace {

std::string ptxas_banner(const std::string& release, const std::string& version) {
  return "#!/bin/sh\necho 'ptxas: NVIDIA (R) Ptx optimizing assembler'\necho 'Cuda compilation tools, release " + release +
         ", V" + version + "'\n";
}

std::vector<std::string> listed(const std::vector<probe::PtxasFile>& files) {
  std::vector<std::string> out;
  for (const probe::PtxasFile& f : files) {
    if (f.path != "/usr/local/cuda/bin/ptxas") out.push_back(f.path + " " + f.version + " (" + f.from + ")");
  }
  return out;
}

probe::ProbeOptions ptxas_options(const test::ScratchDir& t) {
  probe::ProbeOptions o;
  o.python = (t / "no-python").string();
  o.memo_file = t / "memo.json";
  return o;
}

}  // namespace

TEST_CASE("ptxas files: TRITON_PTXAS_PATH first, then CUDA_HOME/bin/ptxas, each with its version") {
  test::ScratchDir t;
  test::write_file(t / "own/ptxas", ptxas_banner("13.0", "13.0.77"), 0755);
  test::write_file(t / "cuda/bin/ptxas", ptxas_banner("12.8", "12.8.93"), 0755);
  test::ScopedEnv own("TRITON_PTXAS_PATH", (t / "own/ptxas").string());
  test::ScopedEnv cuda("CUDA_HOME", (t / "cuda").string());
  std::vector<probe::PtxasFile> files = probe::ptxas_files(ptxas_options(t));
  CHECK(listed(files) == std::vector<std::string>{(t / "own/ptxas").string() + " 13.0.77 ($TRITON_PTXAS_PATH)",
                                                  (t / "cuda/bin/ptxas").string() + " 12.8.93 ($CUDA_HOME/bin/ptxas)"});
  REQUIRE(files.size() >= 2);
  CHECK(files[0].path == (t / "own/ptxas").string());
}

TEST_CASE("ptxas files: one that cannot run or prints no version is left out") {
  test::ScratchDir t;
  test::write_file(t / "own/ptxas", ptxas_banner("13.0", "13.0.77"), 0644);
  test::write_file(t / "cuda/bin/ptxas", "#!/bin/sh\necho 'not a ptxas'\n", 0755);
  test::ScopedEnv own("TRITON_PTXAS_PATH", (t / "own/ptxas").string());
  test::ScopedEnv cuda("CUDA_HOME", (t / "cuda").string());
  CHECK(listed(probe::ptxas_files(ptxas_options(t))).empty());
  test::ScopedEnv unset_own("TRITON_PTXAS_PATH", "");
  test::ScopedEnv unset_cuda("CUDA_HOME", std::nullopt);
  CHECK(listed(probe::ptxas_files(ptxas_options(t))).empty());
}
