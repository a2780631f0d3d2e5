// The lock restore and purge share (unpack/folder_lock.hpp): a held folder makes a bounded wait give up with a
// message naming it and nothing locked, a purge never runs while another holds its folders' parents (it gives up,
// removing nothing, or waits and then judges what is there), and a restore's purge runs inside its own lock.
// No wall-clock limit: a give-up uses a zero timeout, and a wait is observed through the on_wait signal.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <future>

#include "pack/packer.hpp"
#include "unit/support.hpp"
#include "unpack/archive.hpp"
#include "unpack/folder_lock.hpp"
#include "unpack/installer.hpp"
#include "unpack/purge.hpp"
#include "util/error.hpp"

using namespace ccpack;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

// Whether another open file description can lock `folder` now (it is not held by anyone).
bool lockable(const fs::path& folder) {
  UniqueFd fd(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  REQUIRE(fd.valid());
  return ::flock(fd.get(), LOCK_EX | LOCK_NB) == 0;
}

std::vector<manifest::CacheDir> triton_in(const fs::path& dir) {
  return {{"triton", manifest::ComponentKind::triton, dir, "test"}};
}

unpack::PurgeOptions fail_fast() {
  unpack::PurgeOptions o;
  o.lock.timeout = 0ms;
  return o;
}

}  // namespace

TEST_CASE("a held folder: a bounded wait gives up naming it, and leaves nothing locked") {
  test::ScratchDir t;
  fs::create_directories(t / "a");
  fs::create_directories(t / "b");
  std::vector<UniqueFd> held = unpack::lock_folders({t / "b"}, {});
  CHECK_FALSE(lockable(t / "b"));
  int waits = 0;
  unpack::LockWait wait{0ms, [&](const fs::path& f) {
                          CHECK(f == t / "b");
                          ++waits;
                        }};
  CHECK_THROWS_WITH(unpack::lock_folders({t / "b", t / "a", t / "a"}, wait),
                    "cannot lock folder '" + (t / "b").string() +
                        "': another ccpack restore or purge of its cache folders still holds it after 0 s");
  CHECK(waits == 1);
  CHECK(lockable(t / "a"));  // taken first (path order), released when b could not be had
  held.clear();
  CHECK(unpack::lock_folders({t / "b", t / "a", t / "a"}, wait).size() == 2);
  CHECK(waits == 1);  // free: no wait
}

TEST_CASE("purge while a restore holds the parent: it gives up and removes nothing") {
  test::ScratchDir t;
  test::write_file(t / "pod/tri/x.lock", "");
  std::vector<UniqueFd> held = unpack::lock_folders({t / "pod"}, {});
  CHECK_THROWS_WITH(unpack::purge(triton_in(t / "pod/tri"), {}, fail_fast()),
                    Catch::Contains("cannot lock folder '" + (t / "pod").string() + "'"));
  CHECK(fs::exists(t / "pod/tri/x.lock"));
  held.clear();
  unpack::PurgeReport r = unpack::purge(triton_in(t / "pod/tri"), {}, fail_fast());
  REQUIRE(r.removed.size() == 1);
  CHECK(r.removed[0].path == t / "pod/tri/x.lock");
  CHECK_FALSE(fs::exists(t / "pod/tri/x.lock"));
  CHECK(lockable(t / "pod"));  // released when done
}

TEST_CASE("purge waits for the holder, then judges what the holder left") {
  test::ScratchDir t;
  fs::create_directories(t / "pod/tri");
  std::vector<UniqueFd> held = unpack::lock_folders({t / "pod"}, {});
  std::promise<void> waiting;
  unpack::PurgeOptions o;  // no timeout: waits as long as it takes
  o.lock.on_wait = [&](const fs::path&) { waiting.set_value(); };
  auto purging = std::async(std::launch::async, [&] { return unpack::purge(triton_in(t / "pod/tri"), {}, o); });
  // Either the purge says it waits, or (without the lock) it is already done: then the check below fails.
  auto waited = waiting.get_future();
  while (waited.wait_for(10ms) != std::future_status::ready && purging.wait_for(0ms) != std::future_status::ready) {
  }
  REQUIRE(waited.wait_for(0ms) == std::future_status::ready);
  test::write_file(t / "pod/tri/late.lock", "");  // what the holder leaves, written while it holds the lock
  held.clear();
  unpack::PurgeReport r = purging.get();
  REQUIRE(r.removed.size() == 1);
  CHECK(r.removed[0].path == t / "pod/tri/late.lock");
}

TEST_CASE("restore --on-mismatch=purge purges inside its own lock, and a refused component purges nothing") {
  test::ScratchDir t;
  test::write_file(t / "src/ind/fx/a.py", "new inductor\n");
  test::write_file(t / "src/tri/K1/k.json", "{}");
  std::vector<manifest::CacheDir> src{{"inductor", manifest::ComponentKind::inductor, t / "src/ind", "test"},
                                      {"triton", manifest::ComponentKind::triton, t / "src/tri", "test"}};
  (void)pack::create_archive(src, t / "a.ccpack", {});
  unpack::Archive a = unpack::Archive::open(t / "a.ccpack");
  std::vector<manifest::CacheDir> pod{{"inductor", manifest::ComponentKind::inductor, t / "pod/ind", "test"},
                                      {"triton", manifest::ComponentKind::triton, t / "pod/tri", "test"}};
  test::write_file(t / "pod/tri/x.lock", "");
  test::write_file(t / "pod/tri/OLD/k.json", "old triton");
  unpack::InstallOptions o;
  unpack::InstallRun run;
  run.purge_for = manifest::Fingerprint{};
  std::size_t purge_calls = 0;
  o.fault = [&](unpack::FaultPoint point, std::size_t folders) {
    if (point == unpack::FaultPoint::purge) {
      CHECK(folders == 1);
      CHECK_FALSE(lockable(t / "pod"));  // the restore still holds the parent
      ++purge_calls;
    }
    return false;
  };

  SECTION("a refused component: nothing written, nothing purged") {
    run.fits = {{unpack::Fit::stale_refuse, "refused here (gpu.driver)"}, {unpack::Fit::stale_purge, "stale here"}};
    auto before = test::snapshot(t / "pod");
    unpack::InstallReport r = unpack::install(a, pod, o, run);
    CHECK(r.components[0].action == unpack::Action::refuse);
    CHECK(r.components[1].action == unpack::Action::purge);
    CHECK(test::snapshot(t / "pod") == before);
    CHECK(r.purged.removed.empty());
    CHECK(purge_calls == 0);
  }
  SECTION("one restored, one purged, under the same lock") {
    run.fits = {{unpack::Fit::fits, ""}, {unpack::Fit::stale_purge, "stale here"}};
    unpack::InstallReport r = unpack::install(a, pod, o, run);
    CHECK(purge_calls == 1);
    CHECK(r.components[0].action == unpack::Action::restore);
    CHECK(r.components[1].action == unpack::Action::purge);
    CHECK(test::slurp(t / "pod/ind/fx/a.py") == "new inductor\n");
    REQUIRE(r.purged.removed.size() == 1);
    CHECK(r.purged.removed[0].path == t / "pod/tri/x.lock");
    CHECK(r.purged.removed[0].rule == unpack::PurgeRule::debris);
    CHECK(fs::exists(t / "pod/tri/OLD/k.json"));  // not judged stale (no target): kept, not restored over
    CHECK_FALSE(fs::exists(t / "pod/tri/K1"));
    CHECK(lockable(t / "pod"));
  }
}
