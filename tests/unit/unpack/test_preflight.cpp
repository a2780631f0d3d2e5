// The install's checks before the payload (unpack/preflight.hpp): a parent folder this process cannot write, a
// folder another user owns in a sticky parent, and a file system without the space the manifest's components need
// (a fake free-space probe), each one line naming the folder and what to do, exit 1; enough of everything passes.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "unit/support.hpp"
#include "unpack/preflight.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

using namespace ccpack;
using namespace ccpack::unpack;
namespace fs = std::filesystem;

namespace {

PreflightTarget target_in(const fs::path& parent, const std::string& component, std::uint64_t bytes, std::uint64_t files = 1) {
  return PreflightTarget{component, parent / component, parent, bytes, files};
}

FreeSpaceProbe free_of(std::uint64_t bytes, std::optional<std::uint64_t> inodes = std::nullopt) {
  return [=](const fs::path&) { return FreeSpace{bytes, inodes}; };
}

}  // namespace

TEST_CASE("preflight: the manifest's size against the free space of the folder's file system", "[preflight]") {
  test::ScratchDir d;
  std::vector<PreflightTarget> both{target_in(d.path(), "inductor", 120'000'000), target_in(d.path(), "triton", 71'000'000)};
  // Components on one file system add up: 191 MB needed where 64 MB are free.
  std::string why = test::ccpack_error([&] { preflight(both, free_of(64'500'000)); });
  CHECK(why == "cannot restore inductor and triton: needs 191 MB, 64 MB free on " + quoted_path(d.path()) +
                   " (191000000 bytes needed, 64500000 free); free space there or restore into a larger volume");
  try {
    preflight(both, free_of(64'500'000));
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::error);
  }
  CHECK_NOTHROW(preflight(both, free_of(191'000'000)));
  CHECK(test::ccpack_error([&] { preflight({target_in(d.path(), "triton", 10, 5000)}, free_of(1'000'000, 4999)); }) ==
        "cannot restore triton: needs 5000 files, 4999 inodes free on " + quoted_path(d.path()));
  CHECK_NOTHROW(preflight({target_in(d.path(), "triton", 10, 5000)}, free_of(1'000'000, std::nullopt)));
  // The real statvfs: a scratch folder has room for one byte, and not for an exabyte.
  CHECK_NOTHROW(preflight({target_in(d.path(), "inductor", 1)}));
  CHECK_THAT(test::ccpack_error([&] { preflight({target_in(d.path(), "inductor", 1ull << 60)}); }),
             Catch::Matchers::Contains("MB free on " + quoted_path(d.path())));
}

TEST_CASE("preflight: a folder this process cannot write is named with its owner and the fix", "[preflight]") {
  test::ScratchDir d;
  ::chmod(d.path().c_str(), 0755);  // the unprivileged child must reach below it
  fs::path parent = d / "root-owned";
  fs::create_directories(parent);
  ::chmod(parent.c_str(), 0755);
  uid_t owner = ::geteuid();
  std::string why = test::error_as_other_user([&] { preflight({target_in(parent, "inductor", 1)}, free_of(1u << 30)); });
  if (owner == 0) {
    CHECK(
        why ==
        "cannot restore inductor into " + quoted_path(parent / "inductor") + ": its folder " + quoted_path(parent) +
            " is owned by uid 0 (mode 0755) and uid 65534 cannot write to it; run as uid 0 (securityContext runAsUser), or set fsGroup so that the volume is group-writable");
    // A folder another user owns in a sticky, world-writable parent (/tmp) cannot be swapped out.
    fs::path tmp = d / "tmp";
    fs::create_directories(tmp / "inductor");
    ::chmod(tmp.c_str(), 01777);
    ::chmod((tmp / "inductor").c_str(), 0777);
    CHECK(
        test::error_as_other_user([&] { preflight({target_in(tmp, "inductor", 1)}, free_of(1u << 30)); }) ==
        "cannot restore inductor into " + quoted_path(tmp / "inductor") +
            ": it is owned by uid 0 (mode 0777) and uid 65534 cannot replace it in the sticky folder " + quoted_path(tmp) +
            "; run as uid 0 (securityContext runAsUser), or set fsGroup so that the volume is group-writable, or restore into another folder");
    // Writable by all: passes.
    ::chmod(parent.c_str(), 0777);
    CHECK(test::error_as_other_user([&] { preflight({target_in(parent, "inductor", 1)}, free_of(1u << 30)); }) == "(no Error)");
  } else {
    ::chmod(parent.c_str(), 0555);
    why = test::error_as_other_user([&] { preflight({target_in(parent, "inductor", 1)}, free_of(1u << 30)); });
    CHECK_THAT(why, Catch::Matchers::Contains("cannot write to it; run as uid"));
    ::chmod(parent.c_str(), 0755);
  }
}
