// Probe parsers, the program runner's bounds, and what create records from the cache's own kernel files.
#include <catch2/catch.hpp>

#include "pack/kernel_targets.hpp"
#include "probe/probe.hpp"
#include "unit/support.hpp"
#include "util/subprocess.hpp"

using namespace ccpack;
using namespace ccpack::manifest;
namespace probe = ccpack::probe;
using ccpack::test::ScratchDir;
using ccpack::test::write_file;

namespace {

std::string value(const Fingerprint& fp, std::string_view name) {
  const FieldValue* v = fp.get(name);
  if (!v) return "<missing>";
  return v->value ? *v->value : "<absent: " + v->source + ">";
}

}  // namespace

TEST_CASE("torch/version.py is read as text") {
  Fingerprint fp;
  probe::parse_torch_version_py(
      "from typing import Optional\n__version__ = '2.7.1+cu126'\ndebug = False\ncuda: Optional[str] = '12.6'\n"
      "git_version = 'abc'\nhip: Optional[str] = None\n",
      fp);
  CHECK(value(fp, field::torch_cuda) == "12.6");
  CHECK(value(fp, field::torch_hip) == "none");
  CHECK(value(fp, field::torch_version) == "2.7.1+cu126");
  // A wheel whose dist-info lacks the local tag (seen on the H200 machine): torch.__version__ wins.
  Fingerprint tagged;
  tagged.set(field::torch_version, "2.11.0", "python:dist-info (torch)");
  probe::parse_torch_version_py("__version__ = '2.11.0+cu130'\ncuda = '13.0'\n", tagged);
  CHECK(value(tagged, field::torch_version) == "2.11.0+cu130");
  CHECK(tagged.get(field::torch_version)->source == "torch/version.py");
  Fingerprint odd;
  probe::parse_torch_version_py("cuda = compute()\n", odd);
  CHECK(value(odd, field::torch_cuda) == "<absent: torch/version.py has no readable 'cuda' line>");
}

TEST_CASE("the python probe's report") {
  auto interp = probe::parse_interpreter_report(
      R"J({"version":"3.12.3","abi":"cpython-312-x86_64-linux-gnu","executable":"/v/bin/python3",)J"
      R"J("path":["/v/lib/python312.zip","/v/site-packages"],"site":["/v/site-packages","/home/u/.local/site-packages"]})J");
  REQUIRE(interp);
  CHECK(interp->path == std::vector<std::string>{"/v/lib/python312.zip", "/v/site-packages"});
  CHECK(interp->site_candidates.size() == 2);
  probe::Discovery found;
  found.dists = {{"torch", {"2.11.0+cu130", "/v/site-packages"}},
                 {"triton", {"3.6.0", "/v/site-packages"}},
                 {"nvidia_cudnn_cu13", {"9.13.0.50", "/v/site-packages"}},
                 {"nvidia_cublas", {"13.0.0.19", "/v/site-packages"}}};
  found.site = {"/v/site-packages"};
  found.torch_version_py = "cuda = '13.0'\nhip = None\n";
  Fingerprint fp;
  CHECK(probe::fill_python_fields(*interp, found, fp) == "/v/site-packages");
  CHECK(value(fp, field::python_abi) == "cpython-312-x86_64-linux-gnu");
  CHECK(value(fp, field::torch_version) == "2.11.0+cu130");
  CHECK(value(fp, field::torch_cuda) == "13.0");
  CHECK(value(fp, field::triton_version) == "3.6.0");
  CHECK(value(fp, field::wheels_cuda) == "nvidia-cublas==13.0.0.19, nvidia-cudnn-cu13==9.13.0.50");
  CHECK(value(fp, field::ck4inductor_version) == "<absent: python: no ck4inductor distribution on sys.path>");
  CHECK_FALSE(probe::parse_interpreter_report("Traceback (most recent call last):"));
  CHECK_FALSE(probe::parse_interpreter_report(R"J({"path": [], "path": []})J"));  // a repeated key
}

TEST_CASE("the listing of sys.path: first folder wins, names normalised, start-up files collected") {
  ScratchDir t;
  auto dist = [&](const std::string& dir, const std::string& name) {
    std::filesystem::create_directories(t.path() / dir / name);
  };
  dist("a", "Torch-2.7.1+cu126.dist-info");
  dist("a", "nvidia_cublas_cu12-12.6.4.1.dist-info");
  dist("a", "nvidia_ml_py-12.0.dist-info");           // NVML's bindings: not a CUDA wheel
  dist("a", "numpy-2.0.dist-info");                   // not recorded
  dist("b", "torch-9.9.dist-info");                   // shadowed by a/
  dist("b", "pytorch_triton-3.1.0-py3.12.egg-info");  // .egg-info, its -pyX.Y suffix dropped
  std::filesystem::create_directories(t.path() / "a/torch");
  write_file(t.path() / "a/torch/version.py", "__version__ = '2.7.1+cu126'\ncuda = '12.6'\n");
  write_file(t.path() / "b/zz.pth", "/elsewhere\n");
  probe::Discovery d = probe::discover({(t.path() / "a").string(), (t.path() / "b").string(), (t.path() / "missing").string()});
  CHECK(d.dists.size() == 3);
  CHECK(d.dists["torch"] == std::pair<std::string, std::string>{"2.7.1+cu126", (t.path() / "a").string()});
  CHECK(d.dists["pytorch_triton"].first == "3.1.0");
  CHECK(d.dists.count("nvidia_cublas_cu12") == 1);
  CHECK(d.torch_version_py == std::optional<std::string>("__version__ = '2.7.1+cu126'\ncuda = '12.6'\n"));
  REQUIRE(d.startup.size() == 1);
  CHECK(d.startup[0].path == (t.path() / "b/zz.pth").string());
  CHECK(d.site == std::vector<std::string>{(t.path() / "a").string(), (t.path() / "b").string()});
}

TEST_CASE("ptxas, nvidia-smi and KFD outputs") {
  CHECK(probe::parse_ptxas_version("ptxas: NVIDIA (R) Ptx optimizing assembler\nCuda compilation tools, release 12.8, V12.8.93\n"
                                   "Build cuda_12.8.r12.8/compiler.35404655_0\n") == "12.8.93");
  CHECK(probe::parse_ptxas_version("garbage").empty());
  Fingerprint fp;
  REQUIRE(probe::parse_nvidia_smi("NVIDIA H200, 9.0, 580.159.04\nNVIDIA H200, 9.0, 580.159.04\n", fp));
  CHECK(value(fp, field::gpu_arch) == "sm_90");
  CHECK(value(fp, field::gpu_count) == "2");
  CHECK(value(fp, field::gpu_driver) == "580.159.04");
  CHECK(value(fp, field::gpu_sm_count) == "<absent: nvidia-smi: reports no SM count>");
  Fingerprint bad;
  CHECK_FALSE(probe::parse_nvidia_smi("No devices were found\n", bad));
  CHECK(probe::gfx_name(90402) == "gfx942");
  CHECK(probe::gfx_name(90010) == "gfx90a");
  CHECK(probe::gfx_name(110000) == "gfx1100");
  CHECK(probe::gfx_name(0).empty());
}

TEST_CASE("which settings enter the cache keys") {
  CHECK(probe::is_inductor_key_setting("TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS"));
  CHECK_FALSE(probe::is_inductor_key_setting("TORCHINDUCTOR_CACHE_DIR"));
  CHECK_FALSE(probe::is_inductor_key_setting("TORCHINDUCTOR_REDIS_PASSWORD"));
  CHECK(probe::is_triton_key_setting("TRITON_DEFAULT_FP_FUSION"));
  CHECK(probe::is_triton_key_setting("MLIR_ENABLE_DUMP"));
  CHECK_FALSE(probe::is_triton_key_setting("TRITON_CACHE_DIR"));
}

TEST_CASE("programs run with a deadline and bounded output, never a hang") {
  RunLimits quick{std::chrono::milliseconds(300), 1024};
  RunResult sleeper = run_program({"sh", "-c", "sleep 30 & sleep 30"}, quick);
  CHECK(sleeper.status == RunResult::Status::timed_out);
  CHECK(sleeper.why(quick) == "timed out after 300 ms");
  RunResult flood = run_program({"sh", "-c", "yes"}, RunLimits{std::chrono::milliseconds(5000), 4096});
  CHECK(flood.status == RunResult::Status::too_much_output);
  CHECK(run_program({"/no/such/program"}).status == RunResult::Status::not_found);
  RunResult ok = run_program({"sh", "-c", "echo hi; exit 3"});
  CHECK(ok.status == RunResult::Status::exited);
  CHECK(ok.exit_code == 3);
  CHECK(ok.out == "hi\n");
}

TEST_CASE("create reads the targets of the cache's kernels") {
  std::string data = CCPACK_TEST_DATA;
  std::vector<CacheDir> dirs = {{"inductor", ComponentKind::inductor, data + "/sample-cache/inductor_cache", "test"},
                                {"triton", ComponentKind::triton, data + "/sample-cache/triton_cache", "test"}};
  std::vector<TritonTarget> targets = pack::read_triton_targets(dirs);
  REQUIRE(targets.size() == 1);
  CHECK(targets[0] == TritonTarget{"cuda", "90", 32, "3.6.0", 11});
}

TEST_CASE("Inductor's own Triton folder is read too, and non-kernel JSON ignored") {
  test::ScratchDir dir;
  test::write_file(dir / "ind/triton/0/H1/k.json",
                   R"J({"target":{"backend":"hip","arch":"gfx942","warp_size":64},"triton_version":"3.6.0"})J");
  test::write_file(dir / "ind/triton/0/H1/__grp__k.json",
                   R"J({"target":{"backend":"cuda","arch":80,"warp_size":32},"triton_version":"1"})J");
  test::write_file(dir / "ind/triton/0/H2/other.json", R"J({"child_paths":{}})J");
  test::write_file(dir / "ind/triton/0/H3/broken.json", "{not json");
  std::vector<TritonTarget> targets = pack::read_triton_targets({{"inductor", ComponentKind::inductor, dir / "ind", "test"}});
  REQUIRE(targets.size() == 1);
  CHECK(targets[0] == TritonTarget{"hip", "gfx942", 64, "3.6.0", 1});
}

TEST_CASE("the recorded fingerprint never contradicts the cache") {
  Fingerprint a100;
  a100.set(field::gpu_vendor, "nvidia", "nvml");
  a100.set(field::gpu_arch, "sm_80", "nvml");
  a100.set(field::gpu_name, "NVIDIA A100", "nvml");
  a100.set(field::gpu_warp_size, "32", "nvml");
  a100.set(field::triton_version, "3.6.0", "python:dist-info (triton)");
  SECTION("one target that disagrees with the probe: the cache's target is recorded, the device fields go absent") {
    Fingerprint fp = a100;
    auto warnings = pack::reconcile(fp, {{"cuda", "90", 32, "3.6.0", 437}});
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0] ==
          "the cache's Triton kernels target sm_90 but this machine's GPU is sm_80 (NVIDIA A100): the archive records "
          "the cache's target, not this machine's GPU");
    CHECK(value(fp, field::gpu_arch) == "sm_90");
    CHECK(fp.get(field::gpu_arch)->source == "derived:triton-json; the probe said sm_80");
    CHECK_FALSE(fp.get(field::gpu_name)->value.has_value());
  }
  SECTION("two targets: gpu.arch absent, both named") {
    Fingerprint fp = a100;
    auto warnings = pack::reconcile(fp, {{"cuda", "80", 32, "3.6.0", 5}, {"hip", "gfx942", 64, "3.6.0", 2}});
    REQUIRE_FALSE(warnings.empty());
    CHECK(warnings[0].find("sm_80 (5 kernels, triton 3.6.0), gfx942 (2 kernels, triton 3.6.0)") != std::string::npos);
    CHECK_FALSE(fp.get(field::gpu_arch)->value.has_value());
    CHECK(fp.triton_targets.size() == 2);
  }
  SECTION("agreement changes nothing") {
    Fingerprint fp = a100;
    CHECK(pack::reconcile(fp, {{"cuda", "80", 32, "3.6.0", 5}}).empty());
    CHECK(fp.get(field::gpu_arch)->source == "nvml");
  }
}

TEST_CASE("probe_local: the named interpreter and folders, the default limits, the memo as the environment says") {
  ccpack::test::ScopedEnv memo("CCPACK_PROBE_CACHE", std::string("off"));
  std::vector<CacheDir> dirs{{"inductor", ComponentKind::inductor, "/nowhere/ind", "--inductor-dir"},
                             {"triton", ComponentKind::triton, "/nowhere/tri", "--triton-dir"}};
  std::string status;
  Fingerprint fp = probe::probe_local("/nonexistent/python3", dirs, &status);
  CHECK(status == "off");
  CHECK(value(fp, "paths.inductor") == "/nowhere/ind");
  CHECK(value(fp, "paths.triton") == "/nowhere/tri");
  CHECK_THAT(value(fp, "python.version"), Catch::StartsWith("<absent: python '/nonexistent/python3': "));
  CHECK_THAT(value(fp, "torch.version"), Catch::StartsWith("<absent: python '/nonexistent/python3': "));
}
