// The fingerprint's JSON is read from untrusted archives: it round-trips exactly, and every malformed, oversized,
// duplicated or unknown part is refused with an IntegrityError naming the field.
#include <catch2/catch.hpp>

#include "manifest/fingerprint.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"

using namespace ccpack;
using namespace ccpack::manifest;

namespace {

Fingerprint sample_fingerprint() {
  Fingerprint fp;
  fp.set(field::gpu_arch, "sm_90", "nvml");
  fp.set(field::torch_version, "2.11.0+cu130", "python:dist-info (torch)");
  fp.absent(field::ptxas_version, "ptxas: not found");
  fp.set(field::wheels_cuda, "", "python:dist-info");
  fp.triton_targets.push_back({"cuda", "90", 32, "3.6.0", 437});
  return fp;
}

std::string fingerprint_refusal(const std::string& json) {
  try {
    (void)Fingerprint::from_json(json);
  } catch (const IntegrityError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("fingerprint JSON round-trips exactly and in the agreed shape") {
  Fingerprint fp = sample_fingerprint();
  std::string json = fp.to_json();
  CHECK(
      json ==
      R"J({"schema":1,"fields":{"gpu.arch":{"value":"sm_90","source":"nvml"},"ptxas.version":{"value":null,"source":"ptxas: not found"},)J"
      R"J("torch.version":{"value":"2.11.0+cu130","source":"python:dist-info (torch)"},"wheels.cuda":{"value":"","source":"python:dist-info"}},)J"
      R"J("triton_targets":[{"backend":"cuda","arch":"90","warp_size":32,"triton_version":"3.6.0","kernels":437}]})J");
  Fingerprint back = Fingerprint::from_json(json);
  CHECK(back.fields == fp.fields);
  CHECK(back.triton_targets == fp.triton_targets);
  CHECK(back.to_json() == json);
  REQUIRE(back.get(field::ptxas_version) != nullptr);
  CHECK_FALSE(back.get(field::ptxas_version)->value.has_value());
}

TEST_CASE("an empty fingerprint object is an archive made before fingerprints") {
  Fingerprint fp = Fingerprint::from_json("{}");
  CHECK_FALSE(fp.recorded());
  CHECK(fp.to_json() == "{}");
}

TEST_CASE("malformed fingerprints are refused by field") {
  CHECK(fingerprint_refusal("[]") == "fingerprint field '(root)' is not an object");
  CHECK(fingerprint_refusal(R"J({"schema":2,"fields":{}})J") == "fingerprint field 'schema' is 2, this ccpack reads schema 1");
  CHECK(fingerprint_refusal(R"J({"fields":{}})J") == "fingerprint field 'schema' is missing");
  CHECK(fingerprint_refusal(R"J({"schema":1,"fields":{},"extra":1})J") ==
        "fingerprint field 'extra' is not a fingerprint key this ccpack knows");
  CHECK(fingerprint_refusal(R"J({"schema":1,"fields":{"gpu.arch":{"value":5,"source":"x"}}})J") ==
        "fingerprint field 'fields.gpu.arch.value' is not a string");
  CHECK(fingerprint_refusal(R"J({"schema":1,"fields":{"gpu.arch":{"value":"a"}}})J") ==
        "fingerprint field 'fields.gpu.arch.source' is missing");
  CHECK(fingerprint_refusal(R"J({"schema":1,"fields":{"GPU":{"value":"a","source":"x"}}})J") ==
        "fingerprint field 'fields.GPU' is not a field name (1-64 of a-z 0-9 _ .)");
  CHECK(
      fingerprint_refusal(
          R"J({"schema":1,"fields":{},"triton_targets":[{"backend":"cuda","arch":"90","warp_size":-1,"triton_version":"3","kernels":1}]})J") ==
      "fingerprint field 'triton_targets[0].warp_size' is not an integer 0-1024");
  CHECK(fingerprint_refusal("{\"schema\":1,").find("is not valid JSON") != std::string::npos);
}

TEST_CASE("duplicate keys are refused, not silently last-wins") {
  CHECK(fingerprint_refusal(
            R"J({"schema":1,"fields":{"gpu.arch":{"value":"sm_80","source":"x"},"gpu.arch":{"value":"sm_90","source":"x"}}})J") ==
        "fingerprint field 'gpu.arch' appears twice in one object");
  CHECK(fingerprint_refusal(R"J({"schema":1,"schema":1,"fields":{}})J") ==
        "fingerprint field 'schema' appears twice in one object");
}

TEST_CASE("depth and size are bounded") {
  CHECK(fingerprint_refusal(R"J({"schema":1,"fields":{"a":{"value":{"b":{"c":[[1]]}},"source":"x"}}})J")
            .find("is nested deeper than") != std::string::npos);
  std::string big = R"J({"schema":1,"fields":{"a":{"value":")J" + std::string(2 << 20, 'x') + R"J(","source":"x"}}})J";
  CHECK(fingerprint_refusal(big) == "fingerprint field '(root)' is larger than 1048576 bytes");
  std::string long_value = R"J({"schema":1,"fields":{"a":{"value":")J" + std::string(20000, 'x') + R"J(","source":"x"}}})J";
  CHECK(fingerprint_refusal(long_value) == "fingerprint field 'fields.a.value' is longer than 16384 bytes");
}

TEST_CASE("values from archives are made printable") {
  CHECK(escaped("sm_90\x1b[2J\n") == "sm_90\\x1b[2J\\n");
  CHECK(escaped("abcdefghij", 6) == "abc...");
}

TEST_CASE("a Triton target names its gpu.arch and gpu.vendor as the probes spell them") {
  const TritonTarget h200{"cuda", "90", 32, "3.6.0", 1};
  const TritonTarget mi300{"hip", "gfx942", 64, "3.6.0", 1};
  const TritonTarget other{"xpu", "pvc", 16, "3.6.0", 1};
  CHECK(arch_name(h200) == "sm_90");
  CHECK(arch_name(mi300) == "gfx942");
  CHECK(gpu_vendor_of(h200) == "nvidia");
  CHECK(gpu_vendor_of(mi300) == "amd");
  CHECK(gpu_vendor_of(other) == std::nullopt);
}
