// converge/delta_gate.cpp's open_delta: a delta of the base made for the base's environment opens; a whole cache
// (no "delta" field) is a usage error, a delta of another base and one made for another environment are refused
// (exit 3), each message naming the delta's file and the field.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "converge/delta_gate.hpp"
#include "manifest/fingerprint.hpp"
#include "pack/packer.hpp"
#include "unit/support.hpp"
#include "unpack/archive.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"

using namespace ccpack;
namespace fs = std::filesystem;

namespace {

manifest::Fingerprint gate_fingerprint(const std::string& arch) {
  manifest::Fingerprint fp;
  fp.set(manifest::field::gpu_arch, arch, "nvml");
  fp.set(manifest::field::torch_version, "2.11.0+cu130", "python:dist-info (torch)");
  return fp;
}

// An archive of one inductor file under `root`, with `fp` recorded and, when given, a delta field naming `base`.
fs::path gate_archive(const fs::path& root, const std::string& name, const manifest::Fingerprint& fp,
                      const std::optional<std::string>& base) {
  test::write_file(root / name / "ind/fx/a.py", name);
  fs::create_directories(root / name / "tri");
  pack::PackOptions o;
  o.records.fingerprint = fp;
  if (base) o.records.delta = manifest::DeltaRecord{*base};
  fs::path out = root / (name + ".ccpack");
  (void)pack::create_archive(test::dirs_of(root / name / "ind", root / name / "tri"), out, o);
  return out;
}

}  // namespace

TEST_CASE("open_delta opens a delta of the base made for its environment", "[converge][delta_gate]") {
  test::ScratchDir t;
  unpack::Archive base = unpack::Archive::open(gate_archive(t.path(), "base", gate_fingerprint("sm_90"), std::nullopt));
  std::string digest = to_hex(base.manifest_digest());
  unpack::Archive delta = converge::open_delta(gate_archive(t.path(), "delta", gate_fingerprint("sm_90"), digest), base);
  REQUIRE(delta.manifest.delta);
  CHECK(delta.manifest.delta->base_manifest_sha256 == digest);
}

TEST_CASE("open_delta refuses a whole cache, naming the delta field", "[converge][delta_gate]") {
  test::ScratchDir t;
  unpack::Archive base = unpack::Archive::open(gate_archive(t.path(), "base", gate_fingerprint("sm_90"), std::nullopt));
  fs::path whole = gate_archive(t.path(), "whole", gate_fingerprint("sm_90"), std::nullopt);
  CHECK(test::usage_error([&] { (void)converge::open_delta(whole, base); }) ==
        "refusing delta " + quoted_path(whole) + ": it has no 'delta' field (a whole cache, not made by create --since-restore)");
}

TEST_CASE("open_delta refuses a delta of another base, exit 3", "[converge][delta_gate]") {
  test::ScratchDir t;
  unpack::Archive base = unpack::Archive::open(gate_archive(t.path(), "base", gate_fingerprint("sm_90"), std::nullopt));
  std::string digest = to_hex(base.manifest_digest());
  fs::path other = gate_archive(t.path(), "other", gate_fingerprint("sm_90"), std::string(64, 'a'));
  try {
    (void)converge::open_delta(other, base);
    FAIL("no refusal");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::refused);
    CHECK(std::string(e.what()) == "refusing delta " + quoted_path(other) +
                                       ": delta.base_manifest_sha256 is aaaaaaaaaaaa..., the base's manifest is " +
                                       digest.substr(0, 12) + "... (a delta of another archive)");
  }
}

TEST_CASE("open_delta refuses a delta made for another environment, naming the field", "[converge][delta_gate]") {
  test::ScratchDir t;
  unpack::Archive base = unpack::Archive::open(gate_archive(t.path(), "base", gate_fingerprint("sm_90"), std::nullopt));
  fs::path elsewhere = gate_archive(t.path(), "elsewhere", gate_fingerprint("sm_80"), to_hex(base.manifest_digest()));
  try {
    (void)converge::open_delta(elsewhere, base);
    FAIL("no refusal");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::refused);
    CHECK(std::string(e.what()) ==
          "refusing delta " + quoted_path(elsewhere) +
              ": fingerprint.gpu.arch differs from the base's (sm_80 in the delta, sm_90 in the base): it was "
              "compiled for another environment");
  }
}
