// unpack::restore, the one call behind `ccpack restore`: the fingerprint policy decides before anything is
// written (refuse writes nothing, force restores everything, purge restores what fits and purges what is stale),
// the machine is judged for the folders actually restored into (given, or the build folders), a streamed archive
// (a registry's) goes through the same stages, opened under the folder lock and its payload started only when
// something is written, and a gate that refuses stops the restore first.
#include <fcntl.h>

#include <catch2/catch.hpp>
#include <chrono>

#include "manifest/fingerprint.hpp"
#include "manifest/marker.hpp"
#include "pack/packer.hpp"
#include "unit/support.hpp"
#include "unpack/folder_lock.hpp"
#include "unpack/restore.hpp"
#include "util/error.hpp"

using namespace ccpack;
namespace fs = std::filesystem;
namespace field = manifest::field;

namespace {

using test::dirs_of;

manifest::Fingerprint machine_with(const std::string& arch, const std::string& driver) {
  manifest::Fingerprint fp;
  fp.set(field::cpu_arch, "x86_64", "uname");
  fp.set(field::gpu_vendor, "nvidia", "nvml");
  fp.set(field::gpu_arch, arch, "nvml");
  fp.set(field::gpu_driver, driver, "nvml");
  return fp;
}

// An archive of two components built on an sm_90 machine with driver 580, and a request that restores it into
// pod folders, judging it for `here` and counting the probes and the on_machine calls.
struct RestoreScene {
  test::ScratchDir t;
  manifest::Fingerprint here = machine_with("sm_90", "580.1");
  int probes = 0;
  int told = 0;
  std::vector<manifest::CacheDir> probed_for;

  RestoreScene() {
    test::write_file(t / "build/ind/fx/a.py", "inductor\n");
    test::write_file(t / "build/tri/K1/k.json", "{\"triton_version\": \"3.6.0\"}");
    pack::PackOptions po;
    po.records.fingerprint = machine_with("sm_90", "580.1");
    (void)pack::create_archive(dirs_of(t / "build/ind", t / "build/tri"), t / "a.ccpack", po);
  }
  [[nodiscard]] unpack::RestoreRequest request(manifest::OnMismatch policy = manifest::OnMismatch::refuse) {
    unpack::RestoreRequest rq;
    rq.source = t / "a.ccpack";
    rq.dirs = dirs_of(t / "pod/ind", t / "pod/tri");
    rq.machine = [this](const std::vector<manifest::CacheDir>& dirs) {
      ++probes;
      probed_for = dirs;
      return here;
    };
    rq.on_machine = [this] { ++told; };
    rq.policy = policy;
    return rq;
  }
};

const unpack::ComponentOutcome& outcome(const unpack::RestoreResult& r, const std::string& name) {
  for (const auto& c : r.report.components) {
    if (c.name == name) return c;
  }
  FAIL("no component " << name);
  throw 0;
}

}  // namespace

TEST_CASE("restore: an archive that fits is restored, byte for byte, and judged for the folders given") {
  RestoreScene s;
  unpack::RestoreResult r = unpack::restore(s.request());
  CHECK_FALSE(r.refused);
  CHECK_FALSE(r.purging);
  CHECK(r.fit.worst() == manifest::Verdict::match);
  CHECK(outcome(r, "inductor").action == unpack::Action::restore);
  CHECK(outcome(r, "triton").action == unpack::Action::restore);
  CHECK(test::snapshot(s.t / "pod/ind") == test::snapshot(s.t / "build/ind"));
  CHECK(test::snapshot(s.t / "pod/tri") == test::snapshot(s.t / "build/tri"));
  CHECK(r.depth == unpack::ManifestDepth::full);
  CHECK(s.probes == 1);
  CHECK(s.told == 1);
  REQUIRE(s.probed_for.size() == 2);
  CHECK(s.probed_for[0].dir == s.t / "pod/ind");
  // The same archive again: a no-op that never parses the entries.
  unpack::RestoreResult again = unpack::restore(s.request());
  CHECK(again.report.noop());
  CHECK(outcome(again, "inductor").action == unpack::Action::already);
  CHECK(again.depth == unpack::ManifestDepth::top_level);
}

TEST_CASE("restore: --on-mismatch=refuse writes nothing for a stale archive and reads the whole manifest first") {
  RestoreScene s;
  s.here = machine_with("sm_80", "580.1");
  unpack::RestoreResult r = unpack::restore(s.request());
  CHECK(r.refused);
  CHECK(r.fit.worst() == manifest::Verdict::stale);
  CHECK(r.report.components.empty());
  CHECK(r.depth == unpack::ManifestDepth::full);
  CHECK_FALSE(fs::exists(s.t / "pod"));  // no folder, no staging, no lock
  CHECK(s.told == 1);
}

TEST_CASE("restore: --on-mismatch=force restores a stale archive") {
  RestoreScene s;
  s.here = machine_with("sm_80", "580.1");
  unpack::RestoreResult r = unpack::restore(s.request(manifest::OnMismatch::force));
  CHECK_FALSE(r.refused);
  CHECK(r.fit.blocks());
  CHECK(outcome(r, "triton").action == unpack::Action::restore);
  CHECK(test::slurp(s.t / "pod/ind/fx/a.py") == "inductor\n");
}

TEST_CASE("restore: --on-mismatch=purge restores nothing stale and purges its folders, but a refusal still refuses") {
  RestoreScene s;
  s.here = machine_with("sm_80", "580.1");
  unpack::RestoreResult r = unpack::restore(s.request(manifest::OnMismatch::purge));
  CHECK_FALSE(r.refused);
  CHECK(r.purging);
  CHECK(outcome(r, "triton").action == unpack::Action::purge);
  CHECK(outcome(r, "triton").reason == "stale here (gpu.arch): not restored; the local stale artifacts of its folder are purged");
  CHECK_FALSE(fs::exists(s.t / "pod/tri/K1"));
  // An older driver here than on the build machine refuses the archive: purge does not turn that into a purge.
  RestoreScene older;
  older.here = machine_with("sm_90", "550.1");
  unpack::RestoreResult refused = unpack::restore(older.request(manifest::OnMismatch::purge));
  CHECK(refused.refused);
  CHECK(refused.fit.worst() == manifest::Verdict::refuse);
  CHECK_FALSE(fs::exists(older.t / "pod"));
}

TEST_CASE("restore: --at-build-paths restores into the folders the archive was packed from, judged for those") {
  RestoreScene s;
  fs::remove_all(s.t / "build");
  unpack::RestoreRequest rq = s.request();
  rq.dirs.clear();
  rq.at_build_paths = true;
  unpack::RestoreResult r = unpack::restore(rq);
  REQUIRE(r.dirs.size() == 2);
  CHECK(r.dirs[0].dir == s.t / "build/ind");
  CHECK(r.dirs[1].dir == s.t / "build/tri");
  REQUIRE(s.probed_for.size() == 2);
  CHECK(s.probed_for[1].dir == s.t / "build/tri");
  CHECK(test::slurp(s.t / "build/tri/K1/k.json") == "{\"triton_version\": \"3.6.0\"}");
}

// a.ccpack as a stream: its header read from the file, its payload pushed in pieces; counts the opens and the
// payload starts, and whether the folders' parent was locked when the stream was opened.
struct FileStream {
  fs::path file;
  fs::path parent;
  int chosen = 0;
  int opens = 0;
  int payloads = 0;
  bool locked_when_opened = false;

  [[nodiscard]] unpack::StreamedArchive source() {
    return {[this](const manifest::Fingerprint&) { ++chosen; }, [this] { return open(); }};
  }

  unpack::OpenedStream open() {
    ++opens;
    using namespace std::chrono_literals;
    try {
      (void)unpack::lock_folders({parent}, unpack::LockWait{0ms, {}});
    } catch (const Error&) {
      locked_when_opened = true;  // the restore holds it: the one lock covers the fetch
    }
    UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
    manifest::ArchiveHeader h = manifest::read_header(fd.get(), file);
    std::uint64_t start = h.header_size;
    return {"archive of a test", std::move(h), start,
            [this, start](const unpack::StreamedPayload::Push& push, const std::atomic<bool>&) {
              ++payloads;
              std::string bytes = test::slurp(file).substr(start);
              for (std::size_t at = 0; at < bytes.size(); at += 1000)
                push(bytes.data() + at, std::min<std::size_t>(1000, bytes.size() - at));
            }};
  }
};

TEST_CASE("restore: a streamed archive is opened under the folder lock and goes through the same fit and install") {
  RestoreScene s;
  FileStream stream{s.t / "a.ccpack", s.t / "pod"};
  s.here = machine_with("sm_80", "580.1");
  unpack::RestoreRequest rq = s.request();
  rq.source = stream.source();
  unpack::RestoreResult r = unpack::restore(rq);
  CHECK(r.refused);
  CHECK(stream.opens == 1);
  CHECK(stream.locked_when_opened);
  CHECK(stream.payloads == 0);
  CHECK(fs::is_empty(s.t / "pod"));  // the lock made the parent; nothing else was written
  s.here = machine_with("sm_90", "580.1");
  unpack::RestoreResult ok = unpack::restore(rq);
  CHECK(outcome(ok, "inductor").action == unpack::Action::restore);
  CHECK(test::slurp(s.t / "pod/tri/K1/k.json") == "{\"triton_version\": \"3.6.0\"}");
  CHECK(stream.payloads == 1);
  unpack::RestoreResult again = unpack::restore(rq);  // every folder holds it: no payload byte is asked for
  CHECK(outcome(again, "inductor").action == unpack::Action::already);
  CHECK(stream.opens == 3);
  CHECK(stream.chosen == 3);
  CHECK(stream.payloads == 1);
  CHECK(s.probes == 3);
}

TEST_CASE("restore: a stream that none fits is refused when chosen, before any folder is touched") {
  RestoreScene s;
  unpack::RestoreRequest rq = s.request();
  int opens = 0;
  rq.source = unpack::StreamedArchive{[](const manifest::Fingerprint&) { throw Error("no archive fits this machine"); },
                                      [&opens]() -> unpack::OpenedStream {
                                        ++opens;
                                        return {};
                                      }};
  CHECK_THROWS_WITH(unpack::restore(rq), "no archive fits this machine");
  CHECK(opens == 0);
  CHECK_FALSE(fs::exists(s.t / "pod"));
}

TEST_CASE("restore: a gate that refuses the header stops the restore before the machine is judged or a folder made") {
  RestoreScene s;
  unpack::RestoreRequest rq = s.request();
  rq.gate = [](const fs::path&, const manifest::ArchiveHeader&, const std::vector<manifest::Signature>&) {
    throw IntegrityError("gate: untrusted");
  };
  CHECK_THROWS_WITH(unpack::restore(rq), "gate: untrusted");
  CHECK(s.told == 0);
  CHECK_FALSE(fs::exists(s.t / "pod"));
}
