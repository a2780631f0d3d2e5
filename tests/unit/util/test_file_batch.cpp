// util/file_batch: each file's bytes, count, error and status after the read as the four system calls would give
// them, across more files than one submission holds.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "unit/support.hpp"
#include "util/file_batch.hpp"

using namespace ccpack;
namespace fs = std::filesystem;

TEST_CASE("file batch: bytes, counts and status of each file, errors by file, across submissions") {
  test::ScratchDir t;
  const std::size_t n = FileBatch::kChunk * 2 + 5;
  std::vector<std::string> paths, want;
  for (std::size_t k = 0; k < n; ++k) {
    paths.push_back((t / ("f" + std::to_string(k))).string());
    want.push_back(std::string(k * 37 % 5000, static_cast<char>('a' + k % 26)));
    test::write_file(paths.back(), want.back());
  }
  test::write_file(t / "secret", "s");
  fs::create_symlink(t / "secret", t / "link");
  fs::create_directories(t / "dir");
  // Entries n..n+3: a missing file, a symlink (never followed), a folder, and a file longer than listed.
  for (const char* odd : {"missing", "link", "dir", "f1"}) paths.push_back((t / odd).string());
  std::vector<std::string> buffers(paths.size());
  std::vector<FileRead> reads(paths.size());
  for (std::size_t k = 0; k < paths.size(); ++k) {
    std::uint64_t size = k < n ? want[k].size() : 1;
    buffers[k].assign(size, '\0');
    reads[k] = FileRead{paths[k].c_str(), buffers[k].data(), size};
  }
  auto open_descriptors = [] {
    std::size_t count = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/fd")) ++count;
    return count;
  };
  REQUIRE(FileBatch::available());  // the ring is made before the count, so only the files' descriptors can differ
  const std::size_t before = open_descriptors();
  REQUIRE(FileBatch::read_files(reads));
  CHECK(open_descriptors() == before);  // every file opened was closed
  for (std::size_t k = 0; k < n; ++k) {
    INFO("file " << k);
    struct stat st {};
    REQUIRE(::stat(paths[k].c_str(), &st) == 0);
    CHECK(reads[k].error == 0);
    CHECK(reads[k].got == want[k].size());
    CHECK(buffers[k] == want[k]);
    CHECK(reads[k].after.st_ino == st.st_ino);
    CHECK(reads[k].after.st_dev == st.st_dev);
    CHECK(reads[k].after.st_size == st.st_size);
    CHECK(S_ISREG(reads[k].after.st_mode));
    CHECK(reads[k].after.st_mtim.tv_nsec == st.st_mtim.tv_nsec);
    CHECK(reads[k].after.st_ctim.tv_sec == st.st_ctim.tv_sec);
  }
  CHECK(reads[n].error == ENOENT);
  CHECK(reads[n + 1].error == ELOOP);
  CHECK(buffers[n + 1] == std::string(1, '\0'));  // the link's target was never read
  CHECK(reads[n + 2].error == EISDIR);
  CHECK(reads[n + 3].error == 0);
  CHECK(reads[n + 3].got == 2);  // listed as 1 byte, it has 37: the byte past the listing was read
  CHECK(buffers[n + 3] == "b");
}
