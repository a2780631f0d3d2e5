// End to end through the library: create, verify, restore; determinism; damage leaves targets untouched;
// concurrent restores; the committed golden archive keeps reading.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <thread>

#include "manifest/cache_dir.hpp"
#include "manifest/marker.hpp"
#include "pack/packer.hpp"
#include "unit/support.hpp"
#include "unpack/archive.hpp"
#include "unpack/extractor.hpp"
#include "unpack/installer.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

using namespace ccpack;
namespace fs = std::filesystem;

namespace {

using test::dirs_of;

// A small cache with the shapes that matter: nesting, an empty folder, an executable, a relative symlink, a long
// path (pax), an empty file, a file larger than one restore chunk, and transient entries that must be skipped.
void make_roundtrip_cache(const fs::path& root) {
  test::write_file(root / "ind/fxgraph/ab/abcdef/entry", std::string(100000, 'p') + "tail");
  test::write_file(root / "ind/23/c23x.py", "print('kernel')\n");
  test::write_file(root / "ind/run.sh", "#!/bin/sh\n", 0755);
  test::write_file(root / "ind/empty.bin", "");
  fs::create_directories(root / "ind/emptydir");
  fs::create_directories(root / "ind/locks");
  test::write_file(root / "ind/locks/x.lock", "");
  fs::create_symlink("23/c23x.py", root / "ind/alias.py");
  std::string big;
  for (int i = 0; i < (6 << 20) / 16; ++i) big += "0123456789abcde\n";
  test::write_file(root / "ind/big/blob", big);
  std::string hash(52, 'H');
  test::write_file(root / ("tri/" + hash + "/" + std::string(90, 'k') + ".json"), "{\"triton_version\": \"3.6.0\"}");
  test::write_file(root / ("tri/" + hash + "/k.cubin"), std::string("\x7f"
                                                                    "ELF\0\1\2",
                                                                    7));
  fs::create_directories(root / "tri/tmp.pid_123_456");
  test::write_file(root / "tri/tmp.pid_123_456/partial", "x");
}

pack::PackResult pack_into(const fs::path& out, const fs::path& root) {
  return pack::create_archive(dirs_of(root / "ind", root / "tri"), out, pack::PackOptions{});
}

}  // namespace

TEST_CASE("round trip restores every byte, mode, folder and link") {
  test::ScratchDir t;
  make_roundtrip_cache(t.path());
  pack::PackResult r = pack_into(t / "a.ccpack", t.path());
  CHECK(r.skipped.size() == 2);  // ind/locks and tri/tmp.pid_123_456
  unpack::Archive a = unpack::Archive::open(t / "a.ccpack");
  unpack::ExtractStats s = unpack::extract(a, {}, {});
  CHECK(s.files == 7);

  auto report = unpack::install(a, dirs_of(t / "out/ind", t / "out/tri"), {});
  CHECK_FALSE(report.noop());
  fs::remove_all(t / "ind/locks");
  fs::remove_all(t / "tri/tmp.pid_123_456");
  CHECK(test::snapshot(t / "out/ind") == test::snapshot(t / "ind"));
  CHECK(test::snapshot(t / "out/tri") == test::snapshot(t / "tri"));
  CHECK(fs::is_symlink(t / "out/ind/alias.py"));
  CHECK(manifest::Marker::read(t / "out/ind")->archive_manifest_sha256 == to_hex(a.manifest_digest()));
}

TEST_CASE("restored modes are the archive's exactly, whatever the umask (which restore leaves alone)") {
  test::ScratchDir t;
  test::write_file(t / "ind/shared.py", "a", 0666);
  test::write_file(t / "ind/private.py", "b", 0600);
  test::write_file(t / "ind/readonly.py", "c", 0444);
  test::write_file(t / "ind/tool", "#!/bin/sh\n", 0777);
  test::write_file(t / "ind/open/inside", std::string(5 << 20, 'x'), 0664);  // larger than one chunk: pwritten
  fs::permissions(t / "ind/open", fs::perms(0777));
  fs::create_directories(t / "ind/group");
  fs::permissions(t / "ind/group", fs::perms(0770));
  fs::permissions(t / "ind", fs::perms(0775));
  fs::create_directories(t / "tri");
  (void)pack_into(t / "a.ccpack", t.path());
  unpack::Archive a = unpack::Archive::open(t / "a.ccpack");
  for (mode_t mask : {mode_t{077}, mode_t{022}, mode_t{0}}) {
    CAPTURE(mask);
    fs::remove_all(t / "out");
    mode_t old = ::umask(mask);
    try {
      (void)unpack::install(a, dirs_of(t / "out/ind", t / "out/tri"), {});
    } catch (...) {
      ::umask(old);
      throw;
    }
    CHECK(::umask(old) == mask);  // restore did not change the process's umask
    CHECK(test::snapshot(t / "out/ind") == test::snapshot(t / "ind"));
    CHECK((fs::status(t / "out/ind/shared.py").permissions() & fs::perms::all) == fs::perms(0666));
    CHECK((fs::status(t / "out/ind").permissions() & fs::perms::all) == fs::perms(0775));
  }
}

TEST_CASE("create is deterministic: same input, identical bytes") {
  test::ScratchDir t;
  make_roundtrip_cache(t.path());
  (void)pack_into(t / "one.ccpack", t.path());
  (void)pack_into(t / "two.ccpack", t.path());
  CHECK(test::slurp(t / "one.ccpack") == test::slurp(t / "two.ccpack"));
}

TEST_CASE("a second restore is a no-op, and a restore replaces what the folder held") {
  test::ScratchDir t;
  make_roundtrip_cache(t.path());
  (void)pack_into(t / "a.ccpack", t.path());
  unpack::Archive a = unpack::Archive::open(t / "a.ccpack");
  test::write_file(t / "out/ind/stale.txt", "old content");
  CHECK_FALSE(unpack::install(a, dirs_of(t / "out/ind", t / "out/tri"), {}).noop());
  CHECK_FALSE(fs::exists(t / "out/ind/stale.txt"));
  test::write_file(t / "out/ind/new-after-restore.py", "x");
  CHECK(unpack::install(a, dirs_of(t / "out/ind", t / "out/tri"), {}).noop());
  CHECK(fs::exists(t / "out/ind/new-after-restore.py"));  // no-op leaves local additions alone
  // No staging debris beside the targets.
  for (const auto& e : fs::directory_iterator(t / "out"))
    CHECK(e.path().filename().string().find("staging") == std::string::npos);
}

TEST_CASE("one flipped payload byte or a truncation: integrity error, target untouched") {
  test::ScratchDir t;
  make_roundtrip_cache(t.path());
  (void)pack_into(t / "a.ccpack", t.path());
  test::write_file(t / "out/ind/keep.txt", "precious");
  auto before = test::snapshot(t / "out");
  std::uint64_t header = unpack::Archive::open(t / "a.ccpack").header.header_size;
  std::uint64_t size = fs::file_size(t / "a.ccpack");

  for (std::uint64_t offset : {header + 5, header + (size - header) / 2, size - 3}) {
    fs::copy_file(t / "a.ccpack", t / "bad.ccpack", fs::copy_options::overwrite_existing);
    test::flip_byte(t / "bad.ccpack", offset, 0x20);
    unpack::Archive bad = unpack::Archive::open(t / "bad.ccpack");
    CHECK_THROWS_AS(unpack::extract(bad, {}, {}), IntegrityError);
    CHECK_THROWS_AS(unpack::install(bad, dirs_of(t / "out/ind", t / "out/tri"), {}), IntegrityError);
    CHECK(test::snapshot(t / "out") == before);
  }
  fs::copy_file(t / "a.ccpack", t / "cut.ccpack", fs::copy_options::overwrite_existing);
  fs::resize_file(t / "cut.ccpack", size - 100);
  CHECK_THROWS_WITH(unpack::Archive::open(t / "cut.ccpack"), Catch::Contains("is truncated"));
  CHECK(test::snapshot(t / "out") == before);
}

TEST_CASE("missing folders, special files and escaping links are refused by name") {
  test::ScratchDir t;
  make_roundtrip_cache(t.path());
  CHECK_THROWS_WITH(pack::create_archive(dirs_of(t / "nope", t / "tri"), t / "a.ccpack", {}),
                    Catch::Contains((t / "nope").string()));
  CHECK_THROWS_WITH(pack_into(t / "no/such/dir/a.ccpack", t.path()),
                    Catch::Contains((t / "no/such/dir").string()) && Catch::Contains("does not exist"));

  ::mkfifo((t / "ind/fifo").c_str(), 0644);
  CHECK_THROWS_WITH(pack_into(t / "a.ccpack", t.path()),
                    Catch::Contains("refusing to pack FIFO") && Catch::Contains((t / "ind/fifo").string()));
  fs::remove(t / "ind/fifo");
  fs::create_symlink("/etc/passwd", t / "ind/escape");
  CHECK_THROWS_WITH(pack_into(t / "a.ccpack", t.path()),
                    Catch::Contains("refusing to pack symlink") && Catch::Contains("escape"));
  CHECK_FALSE(fs::exists(t / "a.ccpack"));  // nothing half-written
}

TEST_CASE("concurrent restores of one archive: one does the work, all succeed") {
  test::ScratchDir t;
  make_roundtrip_cache(t.path());
  (void)pack_into(t / "a.ccpack", t.path());
  std::atomic<int> restored{0};
  std::atomic<int> failed{0};
  std::vector<std::thread> ranks;
  for (int i = 0; i < 8; ++i) {
    ranks.emplace_back([&] {
      try {
        unpack::Archive a = unpack::Archive::open(t / "a.ccpack");
        if (!unpack::install(a, dirs_of(t / "out/ind", t / "out/tri"), {}).noop()) ++restored;
      } catch (const std::exception&) {
        ++failed;
      }
    });
  }
  for (auto& r : ranks) r.join();
  CHECK(failed == 0);
  CHECK(restored == 1);
  fs::remove_all(t / "ind/locks");
  CHECK(test::snapshot(t / "out/ind") == test::snapshot(t / "ind"));
}

TEST_CASE("the golden v1 archive keeps reading") {
  fs::path data = CCPACK_TEST_DATA;
  unpack::Archive a = unpack::Archive::open(data / "golden-v1.ccpack");
  CHECK(to_hex(a.manifest_digest()) == test::slurp(data / "golden-v1.manifest-sha256").substr(0, 64));
  CHECK(unpack::extract(a, {}, {}).files == 107);
  test::ScratchDir t;
  unpack::InstallOptions exact;
  exact.relocate = false;  // bytes as packed; relocation has its own tests
  (void)unpack::install(a, dirs_of(t / "ind", t / "tri"), exact);
  CHECK(test::snapshot(t / "ind") == test::snapshot(data / "sample-cache/inductor_cache"));
  CHECK(test::snapshot(t / "tri") == test::snapshot(data / "sample-cache/triton_cache"));
}

TEST_CASE("real H200 fixture round trip (363 MB)", "[fixture]") {
  fs::path fixture = test::real_fixture();  // skipped (never passed) when the fixture is absent
  test::ScratchDir t;
  auto dirs = dirs_of(fixture / "inductor_cache", fixture / "triton_cache");
  pack::PackResult r = pack::create_archive(dirs, t / "real.ccpack", pack::PackOptions{});
  std::uint64_t files = 0;
  for (const auto& c : r.manifest.components) files += c.files;
  CHECK(files == 3601);
  unpack::Archive a = unpack::Archive::open(t / "real.ccpack");
  unpack::InstallOptions exact;
  exact.relocate = false;  // bytes as packed; test_relocate.cpp checks the relocated restore of this fixture
  (void)unpack::install(a, dirs_of(t / "ind", t / "tri"), exact);
  CHECK(test::snapshot(t / "ind") == test::snapshot(fixture / "inductor_cache"));
  CHECK(test::snapshot(t / "tri") == test::snapshot(fixture / "triton_cache"));
  // Stock tools read the same archive: zstd skips the header frame, tar sees the tree.
  fs::create_directories(t / "stock");
  std::string cmd = "zstd -dc '" + (t / "real.ccpack").string() + "' | tar -xf - -C '" + (t / "stock").string() + "'";
  REQUIRE(std::system(cmd.c_str()) == 0);
  CHECK(test::snapshot(t / "stock/triton") == test::snapshot(fixture / "triton_cache"));
  CHECK(test::snapshot(t / "stock/inductor") == test::snapshot(fixture / "inductor_cache"));
}

TEST_CASE("a file rewritten while create reads it never lands torn") {
  // A writer rewrites one file over and over, front to back in 64 KiB pieces, one letter a pass. At any instant
  // the file holds the new letter up to a piece boundary and the previous letter after it. Whatever create does
  // (re-read it, or give up with an error naming it), the archive must hold such a state, never a read that
  // overlapped the writer: an older letter before a newer one, or letters that are not consecutive passes.
  for (std::size_t size : {std::size_t{4} << 20, std::size_t{20} << 20}) {  // read whole, and read in pieces
    test::ScratchDir t;
    make_roundtrip_cache(t.path());
    fs::path hot = t / "ind/hot.bin";
    test::write_file(hot, std::string(size, 'a'));
    std::atomic<bool> stop{false};
    std::thread writer([&] {
      // Each pass rewrites the file in 64 KiB pieces, so a read that overlaps a pass sees two letters.
      std::string piece(64 << 10, 'a');
      UniqueFd fd(::open(hot.c_str(), O_WRONLY | O_CLOEXEC));
      for (char c = 'b'; !stop; c = c == 'z' ? 'a' : static_cast<char>(c + 1)) {
        std::fill(piece.begin(), piece.end(), c);
        for (std::size_t at = 0; at < size; at += piece.size())
          pwrite_all(fd.get(), piece.data(), piece.size(), static_cast<off_t>(at), "hot");
        std::this_thread::sleep_for(std::chrono::microseconds(500));
      }
    });
    bool packed = false;
    try {
      (void)pack_into(t / "a.ccpack", t.path());
      packed = true;
    } catch (const Error& e) {
      CHECK_THAT(e.what(), Catch::Contains(hot.string()) && Catch::Contains("chang"));
    }
    stop = true;
    writer.join();
    if (packed) {
      unpack::Archive a = unpack::Archive::open(t / "a.ccpack");
      (void)unpack::install(a, dirs_of(t / "out/ind", t / "out/tri"), {});
      std::string got = test::slurp(t / "out/ind/hot.bin");
      REQUIRE(got.size() == size);
      std::size_t cut = got.find_first_not_of(got[0]);
      if (cut != std::string::npos) {
        char newer = got[0];
        char older = got[cut];
        CHECK(cut % (64 << 10) == 0);
        CHECK(newer == (older == 'z' ? 'a' : older + 1));
        CHECK(got.find_first_not_of(older, cut) == std::string::npos);
      }
    } else {
      CHECK_FALSE(fs::exists(t / "a.ccpack"));
    }
  }
}
