// manifest/field_form.cpp: the written form of fingerprint field values, and the repair of hand-typed near misses.
#include <catch2/catch.hpp>

#include "manifest/field_form.hpp"

using namespace ccpack;

TEST_CASE("gpu.arch: the forms the probes write fit, others do not") {
  for (const char* v : {"sm_70", "sm_90", "sm_90a", "sm_100", "sm_100a", "sm_120f", "gfx942", "gfx90a", "gfx1100", "gfx1201"}) {
    CHECK(manifest::fits_form("gpu.arch", v));
  }
  for (const char* v : {"sm90", "SM_90", "sm_9O", "sm_", "sm_9", "gfx", "gfx94", "hopper", "sm_90 ", "90"}) {
    CHECK_FALSE(manifest::fits_form("gpu.arch", v));
  }
}

TEST_CASE("normalized_value repairs case, separators and letters for digits, and only into the field's form") {
  CHECK(manifest::normalized_value("gpu.arch", "sm90") == "sm_90");
  CHECK(manifest::normalized_value("gpu.arch", "SM_90") == "sm_90");
  CHECK(manifest::normalized_value("gpu.arch", "sm_9O") == "sm_90");
  CHECK(manifest::normalized_value("gpu.arch", "sm_l00a") == "sm_100a");
  CHECK(manifest::normalized_value("gpu.arch", "GFX942") == "gfx942");
  CHECK(manifest::normalized_value("gpu.arch", "sm_90") == std::nullopt);  // already right: nothing to suggest
  CHECK(manifest::normalized_value("gpu.arch", "hopper") == std::nullopt);
  CHECK(manifest::normalized_value("cpu.arch", "amd64") == "x86_64");
  CHECK(manifest::normalized_value("gpu.count", "O8") == "08");
  CHECK(manifest::normalized_value("torch.version", "v2.11.0") == "2.11.0");
  CHECK(manifest::normalized_value("gpu.name", "whatever") == std::nullopt);  // no fixed form
}

TEST_CASE("fields without a fixed form take any value, listed fields list theirs") {
  CHECK(manifest::form_of("gpu.name") == nullptr);
  CHECK(manifest::fits_form("gpu.name", "NVIDIA H200"));
  CHECK(manifest::listed_values("gpu.vendor") == std::vector<std::string>{"nvidia", "amd"});
  CHECK(manifest::listed_values("gpu.arch").empty());
  for (const std::string& v : manifest::listed_values("cpu.arch")) CHECK(manifest::fits_form("cpu.arch", v));
  for (const std::string& v : manifest::listed_values("gpu.vendor")) CHECK(manifest::fits_form("gpu.vendor", v));
}
