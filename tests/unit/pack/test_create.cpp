// pack/create.cpp's create: a create without a machine is refused; with the default writer the archive records
// the machine's fingerprint as reconciled with the cache's Triton kernels (the disagreement returned as a
// warning); with a caller's writer, that writer gets the folders, the output and the fingerprint before it writes,
// and its result is returned as is.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "manifest/fingerprint.hpp"
#include "pack/create.hpp"
#include "pack/kernel_targets.hpp"
#include "unit/support.hpp"
#include "unpack/archive.hpp"
#include "util/error.hpp"

using namespace ccpack;
namespace fs = std::filesystem;
namespace field = manifest::field;

namespace {

manifest::Fingerprint create_machine() {
  manifest::Fingerprint fp;
  fp.set(field::gpu_arch, "sm_90", "nvml");
  fp.set(field::gpu_name, "NVIDIA H100", "nvml");
  fp.set(field::triton_version, "3.6.0", "python:dist-info (triton)");
  return fp;
}

// An inductor file and one Triton kernel built for `arch` by triton 3.6.0.
pack::CreateRequest create_request(const test::ScratchDir& t, const std::string& arch) {
  test::write_file(t / "ind/fx/a.py", "print(1)\n");
  test::write_file(t / "tri/HASH/k.json",
                   R"({"target":{"backend":"cuda","arch":)" + arch + R"(,"warp_size":32},"triton_version":"3.6.0"})");
  pack::CreateRequest rq;
  rq.dirs = test::dirs_of(t / "ind", t / "tri");
  rq.output = t / "out.ccpack";
  rq.machine = create_machine;
  return rq;
}

}  // namespace

TEST_CASE("pack::create refuses a request without a machine", "[pack][create]") {
  test::ScratchDir t;
  pack::CreateRequest rq = create_request(t, "90");
  rq.machine = nullptr;
  CHECK(test::ccpack_error([&] { (void)pack::create(rq); }) == "internal: a create without a machine to record");
  CHECK_FALSE(fs::exists(t / "out.ccpack"));
}

TEST_CASE("pack::create writes the archive with the machine's fingerprint", "[pack][create]") {
  test::ScratchDir t;
  pack::CreateResult r = pack::create(create_request(t, "90"));
  CHECK(r.fingerprint_warnings.empty());
  CHECK(r.packed.manifest.entries.size() == 6);  // inductor, fx, a.py; triton, HASH, k.json
  unpack::Archive a = unpack::Archive::open(t / "out.ccpack");
  CHECK(test::field_text(a.manifest.fingerprint, field::gpu_arch) == "sm_90 [nvml]");
  CHECK(test::field_text(a.manifest.fingerprint, field::triton_version) == "3.6.0 [python:dist-info (triton)]");
}

TEST_CASE("pack::create records the kernels' target over the machine's, with a warning", "[pack][create]") {
  test::ScratchDir t;
  pack::CreateResult r = pack::create(create_request(t, "80"));
  CHECK(r.fingerprint_warnings ==
        std::vector<std::string>{"the cache's Triton kernels target sm_80 but this machine's GPU is sm_90 (NVIDIA H100): the "
                                 "archive records the cache's target, not this machine's GPU"});
  unpack::Archive a = unpack::Archive::open(t / "out.ccpack");
  CHECK(test::field_text(a.manifest.fingerprint, field::gpu_arch) == "sm_80 [derived:triton-json; the probe said sm_90]");
}

TEST_CASE("pack::create hands a caller's writer the folders, the output and the fingerprint", "[pack][create]") {
  test::ScratchDir t;
  pack::CreateRequest rq = create_request(t, "90");
  int calls = 0;
  rq.write = [&](const std::vector<manifest::CacheDir>& dirs, const fs::path& output, const pack::PackOptions& po) {
    ++calls;
    CHECK(dirs.size() == 2);
    CHECK(dirs[0].dir == t / "ind");
    CHECK(output == t / "out.ccpack");
    CHECK(test::field_text(po.records.fingerprint, field::gpu_arch) == "sm_90 [nvml]");
    CHECK_FALSE(po.records.fingerprint_when_packed);
    pack::PackResult written;
    written.archive_size = 4242;
    written.skipped = {"inductor/skipped"};
    return written;
  };
  pack::CreateResult r = pack::create(rq);
  CHECK(calls == 1);
  CHECK(r.packed.archive_size == 4242);
  CHECK(r.packed.skipped == std::vector<std::string>{"inductor/skipped"});
  CHECK_FALSE(fs::exists(t / "out.ccpack"));  // the caller's writer wrote nothing
}

TEST_CASE("pack::create counts the kernels' targets from the bytes it packs, as the walk of the folders does", "[pack][create]") {
  test::ScratchDir t;
  pack::CreateRequest rq = create_request(t, "90");
  auto kernel = [](const std::string& arch, const std::string& version) {
    return R"({"target":{"backend":"cuda","arch":)" + arch + R"(,"warp_size":32},"triton_version":")" + version + "\"}";
  };
  for (int i = 0; i < 40; ++i)
    test::write_file(t / "tri" / ("H" + std::to_string(i)) / "k.json", kernel(i % 3 ? "90" : "80", "3.6.0"));
  test::write_file(t / "ind/triton/0/DEV/k.json", kernel("100", "3.5.1"));                    // in inductor's own Triton folder
  test::write_file(t / "ind/fx/k.json", kernel("75", "3.6.0"));                               // not a kernel folder
  test::write_file(t / "tri/G/__grp__k.json", kernel("75", "3.6.0"));                         // a group file
  test::write_file(t / "tri/B/k.json", kernel("75", "3.6.0") + std::string(256 << 10, ' '));  // over the bound
  test::write_file(t / "tri/S/real.txt", kernel("75", "3.6.0"));
  fs::create_symlink("real.txt", t / "tri/S/k.json");  // a link, not a file
  const std::vector<manifest::TritonTarget> walked = pack::read_triton_targets(rq.dirs);
  REQUIRE(walked.size() == 3);
  CHECK(walked[0] == manifest::TritonTarget{"cuda", "100", 32, "3.5.1", 1});
  CHECK(walked[1] == manifest::TritonTarget{"cuda", "80", 32, "3.6.0", 14});
  CHECK(walked[2] == manifest::TritonTarget{"cuda", "90", 32, "3.6.0", 27});  // 26 + create_request's own
  (void)pack::create(rq);
  unpack::Archive a = unpack::Archive::open(t / "out.ccpack");
  CHECK(a.manifest.fingerprint.triton_targets == walked);
}
