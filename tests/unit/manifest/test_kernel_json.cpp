// manifest/kernel_json.cpp: a Triton kernel's metadata read into its target and Triton version, and every other
// text (not JSON, another shape, wrong types, over the size bound) read as nothing.
#include <catch2/catch.hpp>
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
