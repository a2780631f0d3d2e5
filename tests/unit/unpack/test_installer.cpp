// Restore's install step under faults: a failed swap rolls the whole set back, a kill between swaps never
// survives the next run, debris of a killed run is removed by any run that takes the lock (the no-op too), and
// the two-renames fallback gives the same result as renameat2.
#include <oneapi/tbb/global_control.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <new>

#include "manifest/marker.hpp"
#include "manifest/reserved_names.hpp"
#include "pack/packer.hpp"
#include "unit/support.hpp"
#include "unpack/archive.hpp"
#include "unpack/installer.hpp"
#include "util/error.hpp"

using namespace ccpack;
namespace fs = std::filesystem;

namespace {

using test::dirs_of;

// Two archives of different content, and pod folders holding a third state.
struct InstallScene {
  test::ScratchDir t;
  InstallScene() {
    test::write_file(t / "src/ind/fx/a.py", "new inductor\n");
    test::write_file(t / "src/tri/K1/k.json", "{\"triton_version\": \"3.6.0\"}");
    (void)pack::create_archive(dirs_of(t / "src/ind", t / "src/tri"), t / "a.ccpack", {});
    test::write_file(t / "pod/ind/old.py", "old inductor\n");
    test::write_file(t / "pod/tri/OLD/k.json", "old triton");
  }
  [[nodiscard]] std::vector<manifest::CacheDir> pod() const { return dirs_of(t / "pod/ind", t / "pod/tri"); }
};

bool has_debris(const fs::path& folder) {
  for (const auto& e : fs::directory_iterator(folder)) {
    if (e.path().filename().string().find(manifest::kStagingInfix) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("a failed second swap leaves both folders exactly as before") {
  InstallScene s;
  auto before = test::snapshot(s.t / "pod");
  unpack::Archive a = unpack::Archive::open(s.t / "a.ccpack");
  unpack::InstallOptions o;
  o.fault = [](unpack::FaultPoint point, std::size_t i) {
    if (point == unpack::FaultPoint::swap && i == 1) throw Error("injected: second swap fails");
    return false;
  };
  CHECK_THROWS_WITH(unpack::install(a, s.pod(), o), "injected: second swap fails");
  CHECK(test::snapshot(s.t / "pod") == before);
  CHECK_FALSE(has_debris(s.t / "pod"));
}

TEST_CASE("a failed swap into missing folders leaves them missing") {
  InstallScene s;
  unpack::Archive a = unpack::Archive::open(s.t / "a.ccpack");
  unpack::InstallOptions o;
  o.fault = [](unpack::FaultPoint point, std::size_t i) {
    if (point == unpack::FaultPoint::swap && i == 1) throw Error("injected");
    return false;
  };
  CHECK_THROWS(unpack::install(a, dirs_of(s.t / "fresh/ind", s.t / "fresh/tri"), o));
  CHECK_FALSE(fs::exists(s.t / "fresh/ind"));
  CHECK_FALSE(fs::exists(s.t / "fresh/tri"));
}

TEST_CASE("the two-renames fallback restores the same trees, and rolls back the same way") {
  InstallScene s;
  auto before = test::snapshot(s.t / "pod");
  unpack::Archive a = unpack::Archive::open(s.t / "a.ccpack");
  unpack::InstallOptions o;
  o.fault = [](unpack::FaultPoint point, std::size_t i) {
    if (point == unpack::FaultPoint::swap && i == 1) throw Error("injected");
    return point == unpack::FaultPoint::rename_flags;
  };
  CHECK_THROWS(unpack::install(a, s.pod(), o));
  CHECK(test::snapshot(s.t / "pod") == before);

  o.fault = [](unpack::FaultPoint point, std::size_t) { return point == unpack::FaultPoint::rename_flags; };
  CHECK_FALSE(unpack::install(a, s.pod(), o).noop());
  CHECK(test::slurp(s.t / "pod/ind/fx/a.py") == "new inductor\n");
  CHECK_FALSE(fs::exists(s.t / "pod/tri/OLD"));
  CHECK_FALSE(has_debris(s.t / "pod"));
}

TEST_CASE("a kill between two swaps never survives the next completed run") {
  InstallScene s;
  // The child of fork() has only the forking thread, and may start threads (its restore does) only when the parent
  // had no other: oneTBB's workers, started by InstallScene's create, are joined first (ThreadSanitizer enforces this).
  oneapi::tbb::task_scheduler_handle workers{oneapi::tbb::attach{}};
  REQUIRE(oneapi::tbb::finalize(workers, std::nothrow));
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    unpack::Archive a = unpack::Archive::open(s.t / "a.ccpack");
    unpack::InstallOptions o;
    o.fault = [](unpack::FaultPoint point, std::size_t i) {
      if (point == unpack::FaultPoint::swap && i == 1) ::_exit(9);  // dies like a SIGKILL: no unwinding, no cleanup
      return false;
    };
    (void)unpack::install(a, s.pod(), o);
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WEXITSTATUS(status) == 9);
  // The kill left inductor new and triton old, each whole, with the old inductor in a staging name.
  CHECK(fs::exists(s.t / "pod/ind/fx/a.py"));
  CHECK(fs::exists(s.t / "pod/tri/OLD/k.json"));
  CHECK(has_debris(s.t / "pod"));

  unpack::Archive a = unpack::Archive::open(s.t / "a.ccpack");
  unpack::InstallReport r = unpack::install(a, s.pod(), {});
  CHECK(r.components[0].action == unpack::Action::already);
  CHECK(r.components[1].action == unpack::Action::restore);
  CHECK(test::slurp(s.t / "pod/tri/K1/k.json") == "{\"triton_version\": \"3.6.0\"}");
  CHECK_FALSE(fs::exists(s.t / "pod/tri/OLD"));
  CHECK_FALSE(has_debris(s.t / "pod"));
}

TEST_CASE("debris of a run killed while removing the old content is removed by the next no-op restore") {
  InstallScene s;
  unpack::Archive a = unpack::Archive::open(s.t / "a.ccpack");
  (void)unpack::install(a, s.pod(), {});
  // What a kill after the swap, during the removal of the old content, leaves behind.
  test::write_file(s.t / "pod" / manifest::staging_name("ind", "4242") / "old.py", "old inductor\n");
  test::write_file(s.t / "pod" / manifest::staging_name("tri", "old.4242") / "OLD/k.json", "old triton");
  REQUIRE(has_debris(s.t / "pod"));
  CHECK(unpack::install(a, s.pod(), {}).noop());
  CHECK_FALSE(has_debris(s.t / "pod"));
}

TEST_CASE("the marker round-trips through its struct, and reads markers of the previous version") {
  manifest::Marker m;
  m.archive_manifest_sha256 = std::string(64, 'c');
  m.component = "triton";
  m.restored_by = "ccpack 0.1.0";
  m.fingerprint.set(manifest::field::gpu_arch, "sm_90", "nvml");
  m.fingerprint.triton_targets.push_back({"cuda", "90", 32, "3.6.0", 2});
  // The fingerprint's keys sorted, as markers have always been written.
  CHECK(
      m.to_json() ==
      "{\"marker\":1,\"archive_manifest_sha256\":\"" + std::string(64, 'c') +
          "\",\"component\":\"triton\",\"restored_by\":\"ccpack 0.1.0\",\"restored_at\":\"\",\"signed_by\":null,\"origin\":null,"
          "\"fingerprint\":{\"fields\":{\"gpu.arch\":{\"source\":\"nvml\",\"value\":\"sm_90\"}},\"schema\":1,"
          "\"triton_targets\":[{\"arch\":\"90\",\"backend\":\"cuda\",\"kernels\":2,\"triton_version\":\"3.6.0\","
          "\"warp_size\":32}]}}\n");
  auto back = manifest::Marker::parse(m.to_json());
  REQUIRE(back);
  CHECK(back->archive_manifest_sha256 == m.archive_manifest_sha256);
  CHECK(back->component == "triton");
  CHECK(back->fingerprint == m.fingerprint);
  CHECK(back->fingerprint_error.empty());
  // A fingerprint this ccpack cannot read leaves the marker valid (it still names its archive), the reason kept.
  auto odd = manifest::Marker::parse("{\"archive_manifest_sha256\":\"" + std::string(64, 'e') +
                                     "\",\"component\":\"inductor\",\"fingerprint\":{\"schema\":1}}");
  REQUIRE(odd);
  CHECK(odd->fingerprint_error == "fingerprint field 'fields' is missing");
  // Written by v1's string concatenation: no "marker" key.
  std::string v1 = "{\"archive_manifest_sha256\":\"" + std::string(64, 'd') +
                   "\",\"component\":\"inductor\",\"restored_by\":\"ccpack 0.1.0\",\"fingerprint\":{}}\n";
  REQUIRE(manifest::Marker::parse(v1));
  CHECK(manifest::Marker::parse(v1)->archive_manifest_sha256 == std::string(64, 'd'));
  // Not markers: unknown version, bad digest, not JSON, nested beyond the bound.
  CHECK_FALSE(manifest::Marker::parse(R"({"marker":2,"archive_manifest_sha256":"x","component":"a","fingerprint":{}})"));
  CHECK_FALSE(manifest::Marker::parse(R"({"archive_manifest_sha256":"XYZ","component":"a","fingerprint":{}})"));
  CHECK_FALSE(manifest::Marker::parse("not json"));
  std::string deep = "{\"archive_manifest_sha256\":\"" + std::string(64, 'd') +
                     "\",\"component\":\"a\",\"fingerprint\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
  CHECK_FALSE(manifest::Marker::parse(deep));
}
