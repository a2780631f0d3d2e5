// pack/import_fingerprint.cpp, the fingerprint `import` derives from the cache itself: the kernels' targets
// counted from triton/<hash>/ and inductor/triton/<n>/<hash>/ metadata, the gpu and triton fields only when they
// name one target, and everything that is not a kernel's metadata (group files, files elsewhere, oversized or
// malformed ones) ignored.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "manifest/kernel_json.hpp"
#include "pack/import_source.hpp"
#include "unit/support.hpp"
#include "unit/ustar.hpp"

using namespace ccpack;
using test::TarEntry;

namespace {

std::string kernel(const std::string& backend, const std::string& arch, int warp, const std::string& version) {
  return R"({"hash": "h", "target": {"backend": ")" + backend + R"(", "arch": )" + arch + R"(, "warp_size": )" +
         std::to_string(warp) + R"(}, "triton_version": ")" + version + "\"}";
}

const std::string kH100 = kernel("cuda", "90", 32, "3.6.0");

manifest::Fingerprint derived(const std::vector<TarEntry>& entries) {
  test::ScratchDir t;
  test::write_file(t / "in.tar", test::ustar(entries));
  pack::ImportSource src({t / "in.tar", {}, t.path(), {}});
  src.open();
  std::optional<manifest::Fingerprint> fp = src.derived_fingerprint();
  REQUIRE(fp);
  return *fp;
}

}  // namespace

TEST_CASE("derived fingerprint: one target, counted over Triton's and Inductor's kernel folders", "[import-fingerprint]") {
  manifest::Fingerprint fp = derived({{"triton_cache/K1/k.json", '0', kH100},
                                      {"triton_cache/K2/other.json", '0', kH100},
                                      {"triton_cache/K2/k.cubin", '0', "cubin"},
                                      {"inductor_cache/triton/0/K3/k.json", '0', kH100}});
  REQUIRE(fp.triton_targets.size() == 1);
  CHECK(fp.triton_targets[0] == manifest::TritonTarget{"cuda", "90", 32, "3.6.0", 3});
  const std::string src = " [derived:triton-json (ccpack import)]";
  CHECK(test::field_text(fp, manifest::field::gpu_arch) == "sm_90" + src);
  CHECK(test::field_text(fp, manifest::field::triton_version) == "3.6.0" + src);
  CHECK(test::field_text(fp, manifest::field::gpu_warp_size) == "32" + src);
  CHECK(test::field_text(fp, manifest::field::gpu_vendor) == "nvidia" + src);
  CHECK(fp.fields.size() == 4);  // nothing a probe fills is claimed
}

TEST_CASE("derived fingerprint: an AMD target names the vendor amd and its gfx arch", "[import-fingerprint]") {
  manifest::Fingerprint fp = derived({{"triton_cache/K/k.json", '0', kernel("hip", "\"gfx942\"", 64, "3.4.0")}});
  CHECK(test::field_text(fp, manifest::field::gpu_arch) == "gfx942 [derived:triton-json (ccpack import)]");
  CHECK(test::field_text(fp, manifest::field::gpu_warp_size) == "64 [derived:triton-json (ccpack import)]");
  CHECK(test::field_text(fp, manifest::field::gpu_vendor) == "amd [derived:triton-json (ccpack import)]");
}

TEST_CASE("derived fingerprint: several targets are listed, sorted, and name no single GPU", "[import-fingerprint]") {
  manifest::Fingerprint fp = derived({{"triton_cache/A/k.json", '0', kH100},
                                      {"triton_cache/B/k.json", '0', kernel("cuda", "80", 32, "3.6.0")},
                                      {"triton_cache/C/k.json", '0', kH100},
                                      {"triton_cache/D/k.json", '0', kernel("cuda", "90", 32, "3.5.0")}});
  CHECK(fp.triton_targets == std::vector<manifest::TritonTarget>{
                                 {"cuda", "80", 32, "3.6.0", 1}, {"cuda", "90", 32, "3.5.0", 1}, {"cuda", "90", 32, "3.6.0", 2}});
  CHECK(fp.fields.empty());
}

TEST_CASE("derived fingerprint: group files, files outside kernel folders, oversized and malformed ones are ignored",
          "[import-fingerprint]") {
  std::string big = kH100;
  big.insert(1, manifest::kMaxKernelJsonBytes, ' ');  // still a kernel's JSON, but too large to read
  manifest::Fingerprint fp = derived({{"triton_cache/K/__grp__k.json", '0', kH100},
                                      {"triton_cache/top.json", '0', kH100},
                                      {"triton_cache/K/deeper/k.json", '0', kH100},
                                      {"inductor_cache/fx/K/k.json", '0', kH100},
                                      {"inductor_cache/triton/0/K/sub/k.json", '0', kH100},
                                      {"triton_cache/BIG/k.json", '0', big},
                                      {"triton_cache/BAD/k.json", '0', "{\"target\": "},
                                      {"triton_cache/DUP/k.json", '0', R"({"target": 1, "target": 2})"},
                                      {"triton_cache/LINK/k.json", '2', "", "../K/__grp__k.json", 0777}});
  CHECK(fp.triton_targets.empty());
  CHECK(fp.fields.empty());
  CHECK_FALSE(fp.recorded());
}
