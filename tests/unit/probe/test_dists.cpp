// probe/dists.cpp, the listing of sys.path: which names are distributions and which are kept, how names
// and versions are normalised, names that are not printable ASCII ignored, site folders, start-up files in
// sys.path order, and torch/version.py read bounded with its odd bytes shown as '?'.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "probe/probe.hpp"
#include "unit/support.hpp"

using namespace ccpack;
namespace probe = ccpack::probe;
namespace fs = std::filesystem;

namespace {

void dist(const fs::path& folder, const std::string& name) { fs::create_directories(folder / name); }

// name=version@folder for each distribution found, in name order.
std::string found(const probe::Discovery& d, const fs::path& root) {
  std::string out;
  for (const auto& [name, v] : d.dists)
    out += name + "=" + v.first + "@" + fs::path(v.second).lexically_relative(root).string() + " ";
  return out;
}

}  // namespace

TEST_CASE("dists: what is kept (torch, triton's names, ck4inductor, CUDA wheels), normalised", "[probe-dists]") {
  test::ScratchDir t;
  const fs::path a = t / "a";
  dist(a, "Torch-2.7.1+cu126.dist-info");
  dist(a, "pytorch.triton-3.1.0.dist-info");       // '.' read as '_'
  dist(a, "pytorch-triton-rocm-3.2.0.dist-info");  // the name ends at the first '-': "pytorch", not kept
  dist(a, "ck4inductor-0.1-py3.12.egg-info");      // the -pyX.Y suffix dropped
  dist(a, "nvidia_cudnn_cu12-9.1.0.70.dist-info");
  dist(a, "cuda_bindings-12.9.0.dist-info");
  dist(a, "cupy_cu12-13.4.1.dist-info");        // a *_cu1N wheel
  dist(a, "nvidia_ml_py-12.575.51.dist-info");  // NVML's bindings: not a CUDA wheel
  dist(a, "nvidia_ml_py3-7.352.0.dist-info");
  dist(a, "numpy-2.0.0.dist-info");  // not recorded
  dist(a, "triton");                 // a package folder, not a distribution
  dist(a, "triton.dist-info.bak");
  probe::Discovery d = probe::discover({a.string()});
  CHECK(found(d, t.path()) ==
        "ck4inductor=0.1@a cuda_bindings=12.9.0@a cupy_cu12=13.4.1@a nvidia_cudnn_cu12=9.1.0.70@a "
        "pytorch_triton=3.1.0@a torch=2.7.1+cu126@a ");
}

TEST_CASE("dists: names outside printable ASCII are no distribution, an empty version stays empty", "[probe-dists]") {
  test::ScratchDir t;
  const fs::path a = t / "a";
  dist(a, "torch\n-9.9.dist-info");
  dist(a, "triton\x1b-9.9.dist-info");
  dist(a, "nvidia_\xc3\xa9-1.0.dist-info");
  dist(a, "ck4inductor.dist-info");
  probe::Discovery d = probe::discover({a.string()});
  CHECK(found(d, t.path()) == "ck4inductor=@a ");
  CHECK_FALSE(d.torch_version_py);
}

TEST_CASE("dists: the first folder on sys.path wins, site folders by name or by what they hold", "[probe-dists]") {
  test::ScratchDir t;
  dist(t / "venv/lib/site-packages", "torch-2.7.1.dist-info");
  dist(t / "usr/dist-packages", "torch-2.0.0.dist-info");
  dist(t / "usr/dist-packages", "triton-3.0.0.dist-info");
  dist(t / "extra", "triton-3.6.0.dist-info");
  fs::create_directories(t / "empty/site-packages");
  probe::Discovery d =
      probe::discover({(t / "venv/lib/site-packages/").string(), (t / "extra").string(), (t / "usr/dist-packages").string(),
                       (t / "empty/site-packages").string(), (t / "missing").string(), ""});
  CHECK(found(d, t.path()) == "torch=2.7.1@venv/lib/site-packages/ triton=3.6.0@extra ");  // the folder as sys.path spells it
  CHECK(d.site == std::vector<std::string>{(t / "empty/site-packages").string(), (t / "extra").string(),
                                           (t / "usr/dist-packages").string(), (t / "venv/lib/site-packages/").string()});
}

TEST_CASE("dists: start-up files in sys.path order, names sorted within a folder", "[probe-dists]") {
  test::ScratchDir t;
  test::write_file(t / "a/z.pth", "");
  test::write_file(t / "a/b.pth", "");
  test::write_file(t / "a/sitecustomize.py", "");
  test::write_file(t / "b/usercustomize.py", "");
  fs::create_directories(t / "b/sitecustomize");  // a package counts too
  test::write_file(t / "b/notes.pth.txt", "");
  fs::create_symlink(t / "nowhere", t / "b/dangling.pth");  // cannot be identified: not kept
  probe::Discovery d = probe::discover({(t / "b").string(), (t / "a").string()});
  std::vector<std::string> names;
  for (const auto& s : d.startup) names.push_back(fs::path(s.path).lexically_relative(t.path()).string());
  CHECK(names == std::vector<std::string>{"b/sitecustomize", "b/usercustomize.py", "a/b.pth", "a/sitecustomize.py", "a/z.pth"});
  CHECK(d.startup[2].id == *probe::file_id((t / "a/b.pth").string()));
}

TEST_CASE("dists: torch/version.py from torch's folder, odd bytes as '?', at most 64 KiB", "[probe-dists]") {
  test::ScratchDir t;
  dist(t / "a", "torch-2.7.1.dist-info");
  test::write_file(t / "a/torch/version.py", "cuda = '12.6'\r\n\t# caf\xc3\xa9 \x1b[2J\x7f\n");
  probe::Discovery d = probe::discover({(t / "a").string()});
  CHECK(d.torch_version_py == std::optional<std::string>("cuda = '12.6'\r\n\t# caf?? ?[2J?\n"));
  test::write_file(t / "a/torch/version.py", std::string(100'000, '#'));
  CHECK(probe::discover({(t / "a").string()}).torch_version_py->size() == 64u << 10);
  fs::remove(t / "a/torch/version.py");
  CHECK_FALSE(probe::discover({(t / "a").string()}).torch_version_py);
}
