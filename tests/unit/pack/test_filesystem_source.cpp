// pack/filesystem_source.cpp, create's reader of files a live writer may still change, driven deterministically:
// the slot the bytes go into changes the file each time it is asked for room (a writer between the scan and
// every read). Checked: a file read whole with its digest, one changed since the scan read again to its new size,
// one that never holds still refused by name, one replaced by a link or removed, pieces checked against the scan,
// a recent ("racy") file proven by content, and the order and sources after a reorder.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "pack/filesystem_source.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"
#include "util/sha256.hpp"

using namespace ccpack;
namespace fs = std::filesystem;

namespace {

using test::ccpack_error;

// A slot in memory; `on_data` runs each time room is asked for (before the read that fills it).
class StringSlot final : public pack::FileSlot {
 public:
  std::function<void()> on_data;
  std::string bytes;
  int discarded = 0;
  char* data(std::uint64_t size) override {
    if (on_data) on_data();
    bytes.assign(size, '\0');
    return bytes.data();
  }
  void discard() override { ++discarded; }
};

std::size_t index_of(const manifest::EntryList& list, const std::string& path) {
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (list.path(i) == path) return i;
  }
  FAIL("no entry " << path);
  return 0;
}

void append(const fs::path& file, const std::string& more) {
  std::ofstream out(file, std::ios::binary | std::ios::app);
  out << more;
}

std::string q(const fs::path& p) { return "'" + p.string() + "'"; }

// The two cache folders under `t` (the triton one made empty when the test has nothing for it).
std::vector<manifest::CacheDir> both(const test::ScratchDir& t) {
  fs::create_directories(t / "ind");
  fs::create_directories(t / "tri");
  return test::dirs_of(t / "ind", t / "tri");
}

}  // namespace

TEST_CASE("filesystem source: the folders listed, transient names skipped, files read whole with their digest", "[fs-source]") {
  test::ScratchDir t;
  test::write_file(t / "ind/fx/a.py", "print(1)\n");
  test::write_file(t / "ind/fx/a.py.lock", "");
  test::write_file(t / "tri/K/k.json", "{}");
  pack::FilesystemSource src(both(t));
  src.open();
  const manifest::EntryList& list = src.entries();
  std::size_t a = index_of(list, "inductor/fx/a.py");
  CHECK(src.source_of(a) == t / "ind/fx/a.py");
  CHECK(src.source_of(index_of(list, "triton/K")) == t / "tri/K");
  CHECK(src.skipped() == std::vector<std::string>{"inductor/fx/a.py.lock (lock file)"});
  std::vector<manifest::Component> c = src.components();
  REQUIRE(c.size() == 2);
  CHECK(c[0].name == "inductor");
  CHECK(c[0].source == (t / "ind").string());
  CHECK(c[1].kind == manifest::ComponentKind::triton);
  StringSlot slot;
  CHECK(src.read_file(a, slot) == Sha256::of("print(1)\n"));
  CHECK(slot.bytes == "print(1)\n");
  CHECK(slot.discarded == 0);
}

TEST_CASE("filesystem source: a file changed since the scan is read again, to its new size", "[fs-source]") {
  test::ScratchDir t;
  test::write_file(t / "ind/a.py", "v1\n");
  pack::FilesystemSource src(both(t));
  src.open();
  std::size_t a = index_of(src.entries(), "inductor/a.py");
  CHECK(src.entries().file_size(a) == 3);
  test::write_file(t / "ind/a.py", "version 2\n");
  StringSlot slot;
  CHECK(src.read_file(a, slot) == Sha256::of("version 2\n"));
  CHECK(slot.bytes == "version 2\n");
  CHECK(slot.discarded == 1);  // the first read, against the scan's state
  CHECK(src.entries().file_size(a) == 10);
}

TEST_CASE("filesystem source: a file that changes before every read is refused by name after five tries", "[fs-source]") {
  test::ScratchDir t;
  test::write_file(t / "ind/busy.py", "x");
  pack::FilesystemSource src(both(t));
  src.open();
  std::size_t i = index_of(src.entries(), "inductor/busy.py");
  StringSlot slot;
  int asked = 0;
  slot.on_data = [&] {
    ++asked;
    append(t / "ind/busy.py", "more");
  };
  CHECK(ccpack_error([&] { (void)src.read_file(i, slot); }) ==
        "file " + q(t / "ind/busy.py") + " kept changing while being read; stop the writer (torch.compile) and run create again");
  CHECK(asked == 5);
  CHECK(slot.discarded == 5);
}

TEST_CASE("filesystem source: a file replaced by a link, a folder, or removed since the scan", "[fs-source]") {
  test::ScratchDir t;
  test::write_file(t / "ind/a.py", "a");
  test::write_file(t / "ind/b.py", "b");
  test::write_file(t / "ind/c.py", "c");
  test::write_file(t / "secret", "s");
  pack::FilesystemSource src(both(t));
  src.open();
  fs::remove(t / "ind/a.py");
  fs::create_symlink(t / "secret", t / "ind/a.py");
  fs::remove(t / "ind/b.py");
  fs::remove(t / "ind/c.py");
  fs::create_directories(t / "ind/c.py");
  StringSlot slot;
  CHECK(ccpack_error([&] { (void)src.read_file(index_of(src.entries(), "inductor/a.py"), slot); }) ==
        "cannot read " + q(t / "ind/a.py") + ": Too many levels of symbolic links");
  CHECK(ccpack_error([&] { (void)src.read_file(index_of(src.entries(), "inductor/b.py"), slot); }) ==
        "cannot read " + q(t / "ind/b.py") + ": No such file or directory");
  CHECK(ccpack_error([&] { (void)src.read_file(index_of(src.entries(), "inductor/c.py"), slot); }) ==
        "cannot read " + q(t / "ind/c.py") + ": Is a directory");
  CHECK(slot.bytes.find('s') == std::string::npos);  // the link's target was never read
}

TEST_CASE("filesystem source: a FIFO put where a file was scanned is refused at once, never waited on", "[fs-source]") {
  test::ScratchDir t;
  test::write_file(t / "ind/a.py", "a");
  pack::FilesystemSource src(both(t));
  src.open();
  fs::remove(t / "ind/a.py");
  REQUIRE(::mkfifo((t / "ind/a.py").c_str(), 0644) == 0);
  std::size_t i = index_of(src.entries(), "inductor/a.py");
  std::string buffer(1, '\0');
  std::vector<pack::ListedFile> files{pack::ListedFile{i, buffer.data(), std::nullopt}};
  src.read_listed(files);
  CHECK_FALSE(files[0].digest.has_value());
  StringSlot slot;
  CHECK(ccpack_error([&] { (void)src.read_file(i, slot); }) == "cannot read " + q(t / "ind/a.py") + ": Illegal seek");
}

TEST_CASE("filesystem source: pieces are checked against the scan, and a recent file by its content", "[fs-source]") {
  test::ScratchDir t;
  test::write_file(t / "ind/big.bin", "0123456789");
  pack::FilesystemSource src(both(t));
  src.open();
  std::size_t i = index_of(src.entries(), "inductor/big.bin");
  char piece[4];
  src.read_piece(i, 3, 4, piece);
  CHECK(std::string(piece, 4) == "3456");
  // Written just now, so racy: check_pieces reads it again and compares the digest.
  CHECK(ccpack_error([&] { src.check_pieces(i, Sha256::of("0123456789")); }) == "(no Error)");
  CHECK(ccpack_error([&] { src.check_pieces(i, Sha256::of("another")); }) ==
        "file " + q(t / "ind/big.bin") + " changed while being packed; stop the writer (torch.compile) and run create again");
  append(t / "ind/big.bin", "!");
  CHECK(ccpack_error([&] { src.read_piece(i, 0, 4, piece); }) ==
        "file " + q(t / "ind/big.bin") + " changed while being packed; stop the writer (torch.compile) and run create again");
  CHECK(ccpack_error([&] { src.check_pieces(i, Sha256::of("0123456789")); }) ==
        "file " + q(t / "ind/big.bin") + " changed while being packed; stop the writer (torch.compile) and run create again");
}

TEST_CASE("filesystem source: a reorder moves the entries with their sources and stamps", "[fs-source]") {
  test::ScratchDir t;
  test::write_file(t / "ind/a", "A");
  test::write_file(t / "ind/b", "BB");
  pack::FilesystemSource src(both(t));
  src.open();
  // The two files swap places; every folder stays before what is inside it.
  std::vector<std::size_t> order(src.entries().size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::size_t a_at = index_of(src.entries(), "inductor/a"), b_at = index_of(src.entries(), "inductor/b");
  std::swap(order[a_at], order[b_at]);
  src.reorder(order);
  CHECK(index_of(src.entries(), "inductor/a") == b_at);
  CHECK(index_of(src.entries(), "inductor/b") == a_at);
  std::size_t b = index_of(src.entries(), "inductor/b");
  CHECK(src.source_of(b) == t / "ind/b");
  StringSlot slot;
  CHECK(src.read_file(b, slot) == Sha256::of("BB"));  // its stamp came along: no re-read
  CHECK(slot.discarded == 0);
}

TEST_CASE("filesystem source: a batch read proves unchanged files and leaves changed or replaced ones to read_file",
          "[fs-source]") {
  // a.py proven; b.py, grown, stops the proof: e.py (unchanged), c.py and d.py are left to read_file too (the
  // packer reads the rest of the batch that way, so none of them may be marked read here).
  test::ScratchDir t;
  test::write_file(t / "ind/a.py", "alpha\n");  // written just now: racy, so proven by a second read too
  test::write_file(t / "ind/b.py", "b");
  test::write_file(t / "ind/c.py", "c");
  test::write_file(t / "ind/d.py", "d");
  test::write_file(t / "ind/e.py", "e");
  test::write_file(t / "secret", "s");
  pack::FilesystemSource src(both(t));
  src.open();
  REQUIRE(src.reads_listed());
  append(t / "ind/b.py", "more");  // grew since the scan
  fs::remove(t / "ind/c.py");
  fs::remove(t / "ind/d.py");
  fs::create_symlink(t / "secret", t / "ind/d.py");
  std::vector<std::string> buffers;
  std::vector<pack::ListedFile> files;
  for (const char* name : {"inductor/a.py", "inductor/b.py", "inductor/e.py", "inductor/c.py", "inductor/d.py"}) {
    std::size_t i = index_of(src.entries(), name);
    buffers.emplace_back(src.entries().file_size(i), '\0');
    files.push_back(pack::ListedFile{i, nullptr, std::nullopt});
  }
  for (std::size_t k = 0; k < files.size(); ++k) files[k].data = buffers[k].data();
  src.read_listed(files);
  REQUIRE(files[0].digest.has_value());
  CHECK(*files[0].digest == Sha256::of("alpha\n"));
  CHECK(buffers[0] == "alpha\n");
  CHECK_FALSE(files[1].digest.has_value());
  CHECK_FALSE(files[2].digest.has_value());  // unchanged, but after the first file not proven
  CHECK_FALSE(files[3].digest.has_value());
  CHECK_FALSE(files[4].digest.has_value());
  CHECK(buffers[4] == std::string(1, '\0'));  // the link's target was never read
  // read_file then reads the grown one at its new size.
  StringSlot slot;
  CHECK(src.read_file(files[1].entry, slot) == Sha256::of("bmore"));
}
