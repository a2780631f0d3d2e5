// manifest/kernel_json.cpp: a Triton kernel's metadata read into its target and Triton version, and every other
// text (not JSON, another shape, wrong types, over the size bound) read as nothing; the plain reader decides
// Triton's own form as the full parser does and leaves every other text to it.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "manifest/kernel_json.hpp"

using namespace ccpack::manifest;

TEST_CASE("kernel json: CUDA and HIP targets, the Triton version, one kernel") {
  auto t = parse_kernel_json(
      R"({"hash":"h","target":{"backend":"cuda","arch":90,"warp_size":32},"triton_version":"3.6.0","name":"k"})");
  REQUIRE(t);
  CHECK(*t == TritonTarget{"cuda", "90", 32, "3.6.0", 1});
  t = parse_kernel_json(R"({"target":{"backend":"hip","arch":"gfx942","warp_size":64},"triton_version":"3.2.0"})");
  REQUIRE(t);
  CHECK(*t == TritonTarget{"hip", "gfx942", 64, "3.2.0", 1});
}

TEST_CASE("kernel json: anything else is nothing") {
  CHECK_FALSE(parse_kernel_json(""));
  CHECK_FALSE(parse_kernel_json("not json"));
  CHECK_FALSE(parse_kernel_json("[]"));
  CHECK_FALSE(parse_kernel_json(R"({"triton_version":"3.6.0"})"));
  CHECK_FALSE(parse_kernel_json(R"({"target":{"backend":"cuda","arch":90,"warp_size":32}})"));
  CHECK_FALSE(parse_kernel_json(R"({"target":"cuda","triton_version":"3.6.0"})"));
  std::string big = R"({"target":{"backend":"cuda","arch":90,"warp_size":32},"triton_version":"3.6.0","pad":")";
  big += std::string(kMaxKernelJsonBytes, 'p') + "\"}";
  CHECK_FALSE(parse_kernel_json(big));
}

namespace {

// The plain reader's decision, which must be the full parser's answer.
std::optional<TritonTarget> decided(const std::string& text) {
  std::optional<std::optional<TritonTarget>> plain = scan_plain_kernel_json(text);
  INFO(text);
  REQUIRE(plain.has_value());
  CHECK(*plain == parse_kernel_json_tree(text));
  return *plain;
}

// Left to the full parser.
void undecided(const std::string& text) {
  INFO(text);
  CHECK_FALSE(scan_plain_kernel_json(text).has_value());
}

}  // namespace

TEST_CASE("kernel json: the plain reader decides the sample cache's kernels as the full parser does") {
  int kernels = 0;
  for (const auto& folder :
       std::filesystem::directory_iterator(std::filesystem::path(CCPACK_TEST_DATA) / "sample-cache/triton_cache")) {
    for (const auto& file : std::filesystem::directory_iterator(folder.path())) {
      std::string name = file.path().filename().string();
      if (!is_kernel_json_name(name)) continue;
      std::ostringstream text;
      text << std::ifstream(file.path()).rdbuf();
      std::optional<TritonTarget> t = decided(text.str());
      REQUIRE(t);
      CHECK(*t == TritonTarget{"cuda", "90", 32, "3.6.0", 1});
      ++kernels;
    }
  }
  CHECK(kernels > 0);
}

TEST_CASE("kernel json: the plain reader's decisions in its form, and what it leaves to the full parser") {
  const std::string target = R"("target": {"backend": "cuda", "arch": 90, "warp_size": 32})";
  CHECK(decided("{" + target + R"(, "triton_version": "3.6.0", "l": [[1, -2], [], true, null, "x"]} )") ==
        TritonTarget{"cuda", "90", 32, "3.6.0", 1});
  CHECK(decided(R"({"target": {"backend": "hip", "arch": "gfx942", "warp_size": 64}, "triton_version": "3.2.0"})") ==
        TritonTarget{"hip", "gfx942", 64, "3.2.0", 1});
  // In the form, but not a kernel's metadata: decided as nothing.
  CHECK_FALSE(decided("{" + target + "}"));
  CHECK_FALSE(decided(R"({"triton_version": "3.6.0", "target": "cuda"})"));
  CHECK_FALSE(decided(R"({"target": {"backend": "cuda", "arch": 90, "warp_size": -32}, "triton_version": "3"})"));
  CHECK_FALSE(decided(R"({"target": {"backend": "cuda", "arch": 90, "warp_size": 2048}, "triton_version": "3"})"));
  CHECK_FALSE(decided(R"({"target": {"backend": "cuda", "arch": true, "warp_size": 32}, "triton_version": "3"})"));
  CHECK_FALSE(decided(R"({"target": {"backend": 1, "arch": 90, "warp_size": 32}, "triton_version": "3"})"));
  CHECK_FALSE(decided(R"({"target": {"backend": "cuda", "arch": 90, "warp_size": 32}, "triton_version": 3})"));
  CHECK_FALSE(decided("{}"));
  // Outside the form: escapes, other bytes, fractions and exponents, 65-bit integers, objects elsewhere, repeated
  // keys (the full parser refuses those), deep arrays, bad grammar, trailing bytes.
  undecided("{" + target + R"(, "triton_version": "3.6\u0030"})");
  undecided("{" + target + ", \"triton_version\": \"3.6.0\", \"n\": \"caf\xc3\xa9\"}");
  undecided("{" + target + R"(, "triton_version": "3.6.0", "f": 1.5})");
  undecided("{" + target + R"(, "triton_version": "3.6.0", "f": 1e400})");
  undecided("{" + target + R"(, "triton_version": "3.6.0", "n": 18446744073709551616})");
  undecided("{" + target + R"(, "triton_version": "3.6.0", "o": {}})");
  undecided("{" + target + R"(, "triton_version": "3.6.0", "triton_version": "3.7.0"})");
  undecided("{" + target + R"(, "triton_version": "3.6.0", "hash": "a", "hash": "b"})");
  undecided(R"({"target": {"backend": "cuda", "backend": "hip", "arch": 90, "warp_size": 32}, "triton_version": "3"})");
  undecided("{" + target + R"(, "triton_version": "3.6.0", "d": [[[[[[[[[1]]]]]]]]]})");
  undecided("{" + target + R"(, "triton_version": "3.6.0", "z": 01})");
  undecided("{" + target + R"(, "triton_version": "3.6.0",})");
  undecided("{" + target + R"(, "triton_version": "3.6.0"} x)");
  undecided("[]");
  undecided("");
  // Each left to the full parser gets its answer there: every one of these is nothing but the first two.
  CHECK(parse_kernel_json("{" + target + R"(, "triton_version": "3.6\u0030"})") == TritonTarget{"cuda", "90", 32, "3.60", 1});
  CHECK(parse_kernel_json("{" + target + R"(, "triton_version": "3.6.0", "f": 1.5})") ==
        TritonTarget{"cuda", "90", 32, "3.6.0", 1});
  CHECK_FALSE(parse_kernel_json("{" + target + R"(, "triton_version": "3.6.0", "hash": "a", "hash": "b"})"));
  CHECK_FALSE(parse_kernel_json("{" + target + R"(, "triton_version": "3.6.0", "f": 1e400})"));
}
