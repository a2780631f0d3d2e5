// unpack/streamed_pickle.cpp, a pickled entry written while its path rewrite streams, piece by piece as the
// extractor hands them over: a pickle that names the build folder ends up rewritten whole (the bytes Python
// itself pickles for the new path), and one the rewrite stops on, at the first piece or after it has already
// written a rewritten part, ends up exactly as packed, its length included.
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "unit/support.hpp"
#include "unpack/streamed_pickle.hpp"
#include "util/fs.hpp"

using namespace ccpack;
namespace fs = std::filesystem;

namespace {

// pickle.dumps({'path': '/build/cache/x.py', 'n': 1}, protocol=4), and the same for the restored folder.
const std::string kPacked(
    "\x80\x04\x95\x26\x00\x00\x00\x00\x00\x00\x00\x7d\x94\x28\x8c\x04path\x94\x8c\x11/build/cache/x.py\x94\x8c\x01n\x94\x4b\x01\x75\x2e",
    49);
const std::string kRestored(
    "\x80\x04\x95\x33\x00\x00\x00\x00\x00\x00\x00\x7d\x94\x28\x8c\x04path\x94\x8c\x1e/a/much/longer/pod/folder/x.py\x94\x8c\x01n\x94"
    "\x4b\x01\x75\x2e",
    62);

struct Result {
  bool rewritten = false;
  std::string file;
};

// Writes `packed` through a StreamedPickle in pieces cut at `cuts`, as the extractor does.
Result stream(const std::string& packed, const std::vector<std::size_t>& cuts) {
  test::ScratchDir t;
  UniqueFd root(::open(t.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  UniqueFd fd(::openat(root.get(), "entry", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  REQUIRE(fd.valid());
  auto make = [](unpack::PickleStream::Write write) {
    return std::make_unique<unpack::PickleStream>(
        std::vector<std::string>{"/build/cache"}, "/a/much/longer/pod/folder", [](std::string_view) { return false; },
        std::move(write));
  };
  unpack::StreamedPickle s(make, fd.get(), root.get(), "entry", "'entry'");
  std::size_t at = 0;
  for (std::size_t cut : cuts) {
    s.piece(at, std::string_view(packed).substr(at, cut - at));
    at = cut;
  }
  s.piece(at, std::string_view(packed).substr(at));
  Result r;
  r.rewritten = s.finish(packed.size());
  fd.reset();
  r.file = test::slurp(t / "entry");
  return r;
}

}  // namespace

TEST_CASE("streamed pickle: a build folder's path is rewritten, whatever the pieces", "[streamed-pickle]") {
  for (const std::vector<std::size_t>& cuts : std::vector<std::vector<std::size_t>>{{}, {1}, {11, 30}, {20, 21, 22, 48}}) {
    Result r = stream(kPacked, cuts);
    CHECK(r.rewritten);
    CHECK(r.file == kRestored);
  }
}

TEST_CASE("streamed pickle: bytes that are no pickle are written as packed", "[streamed-pickle]") {
  const std::string text = "def kernel():\n    return '/build/cache/x.py'\n";
  for (const std::vector<std::size_t>& cuts : std::vector<std::vector<std::size_t>>{{}, {1}, {5, 30}}) {
    Result r = stream(text, cuts);
    CHECK_FALSE(r.rewritten);
    CHECK(r.file == text);
  }
}

TEST_CASE("streamed pickle: stopped after a rewritten part was written, the file is turned back into the packed bytes",
          "[streamed-pickle]") {
  // Bytes after STOP: the whole pickle was taken (and its longer rewrite written) before the stream fails.
  const std::string trailing = kPacked + "junk";
  for (const std::vector<std::size_t>& cuts : std::vector<std::vector<std::size_t>>{{}, {49}, {30, 50}}) {
    Result r = stream(trailing, cuts);
    CHECK_FALSE(r.rewritten);
    CHECK(r.file == trailing);
  }
  // Truncated before STOP: the frame never completes; the file is the packed bytes, no longer.
  const std::string cut = kPacked.substr(0, 40);
  Result r = stream(cut, {20});
  CHECK_FALSE(r.rewritten);
  CHECK(r.file == cut);
}

TEST_CASE("streamed pickle: turning a large written file back into its packed bytes holds a fixed buffer, not the file",
          "[streamed-pickle]") {
  // A moved str in a first frame (a changed unit: the file must be rebuilt), 64 MiB of a bytes value, then an
  // unknown opcode. Read back whole, the file and its packed copy took 128 MiB and more; streamed, about 4 MiB.
  // Bound: 10x that.
  test::ScratchDir t;
  const std::string head("\x80\x04\x95\x14\0\0\0\0\0\0\0\x8c\x11/build/cache/x.py\x94", 31);  // a frame: the str, MEMOIZE
  const std::uint64_t large = 64 << 20;
  std::string opener = "B" + std::string{static_cast<char>(large & 0xff), static_cast<char>((large >> 8) & 0xff),
                                         static_cast<char>((large >> 16) & 0xff), static_cast<char>((large >> 24) & 0xff)};
  std::uint64_t size = head.size() + opener.size() + large + 2;
  long growth = test::peak_rss_growth_kib([&] {
    UniqueFd root(::open(t.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    UniqueFd fd(::openat(root.get(), "entry", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    auto make = [](unpack::PickleStream::Write write) {
      return std::make_unique<unpack::PickleStream>(
          std::vector<std::string>{"/build/cache"}, "/a/much/longer/pod/folder", [](std::string_view) { return false; },
          std::move(write));
    };
    unpack::StreamedPickle s(make, fd.get(), root.get(), "entry", "'entry'");
    std::uint64_t at = 0;
    auto piece = [&](std::string_view data) {
      s.piece(at, data);
      at += data.size();
    };
    piece(head);
    piece(opener);
    std::string zeros(1 << 20, '\0');
    for (std::uint64_t n = 0; n < large; n += zeros.size()) piece(zeros);
    piece("\xff.");
    if (s.finish(size)) throw std::runtime_error("rewritten");
  });
  CHECK(growth >= 0);
  CHECK(growth < 40 * 1024);
  // The file is exactly as packed.
  CHECK(fs::file_size(t / "entry") == size);
  std::string file = test::slurp(t / "entry");
  CHECK(file.substr(0, head.size() + opener.size()) == head + opener);
  CHECK(file.substr(file.size() - 2) == "\xff.");
  CHECK(file.find_first_not_of('\0', head.size() + opener.size()) == file.size() - 2);
}
