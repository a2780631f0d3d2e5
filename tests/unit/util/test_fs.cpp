// util/fs: AtomicFile on both of its paths (O_TMPFILE, and the named temporary a filesystem without O_TMPFILE
// needs, forced here through testing::set_tmpfile_open), and current_umask.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <vector>

#include "unit/support.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

using namespace ccpack;
namespace fs = std::filesystem;

namespace {

// The umask of the test process, set for one scope.
class UmaskFor {
 public:
  explicit UmaskFor(mode_t mask) : old_(::umask(mask)) {}
  ~UmaskFor() { ::umask(old_); }
  UmaskFor(const UmaskFor&) = delete;
  UmaskFor& operator=(const UmaskFor&) = delete;

 private:
  mode_t old_;
};

int g_open_errno = 0;
int refuse_open(const char* /*path*/, int /*flags*/, mode_t /*mode*/) {
  errno = g_open_errno;
  return -1;
}

// While alive, AtomicFile's O_TMPFILE open fails with `err`.
class TmpfileFails {
 public:
  explicit TmpfileFails(int err) {
    g_open_errno = err;
    testing::set_tmpfile_open(refuse_open);
  }
  ~TmpfileFails() { testing::set_tmpfile_open(nullptr); }
  TmpfileFails(const TmpfileFails&) = delete;
  TmpfileFails& operator=(const TmpfileFails&) = delete;
};

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

unsigned mode_of(const fs::path& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

void write_text(AtomicFile& file, const std::string& text) { file.write(text.data(), text.size()); }

}  // namespace

TEST_CASE("AtomicFile without O_TMPFILE writes through a named temporary, exact bytes and mode, no debris") {
  int err = GENERATE(EOPNOTSUPP, EISDIR, EINVAL);
  CAPTURE(err);
  test::ScratchDir t;
  UmaskFor mask(022);  // would take the group and other write bits of 0666 if the mode were left to it
  TmpfileFails no_tmpfile(err);
  {
    AtomicFile file(t / "out.json", 0666);
    write_text(file, "first ");
    // The fallback really ran: a named temporary sits beside the destination, which does not exist yet.
    std::vector<std::string> during = names_in(t.path());
    REQUIRE(during.size() == 1);
    CHECK(during[0].rfind("out.json.tmp.", 0) == 0);
    write_text(file, "second");
    file.commit();
  }
  CHECK(names_in(t.path()) == std::vector<std::string>{"out.json"});
  CHECK(test::slurp(t / "out.json") == "first second");
  CHECK(mode_of(t / "out.json") == 0666);
}

TEST_CASE("AtomicFile on either path: an exception mid-write leaves the old file and no debris") {
  bool tmpfile = GENERATE(true, false);
  CAPTURE(tmpfile);
  test::ScratchDir t;
  test::write_file(t / "keep", "old content", 0600);
  std::optional<TmpfileFails> no_tmpfile;
  if (!tmpfile) no_tmpfile.emplace(EOPNOTSUPP);
  try {
    AtomicFile file(t / "keep", 0644);
    write_text(file, "half of the new ");
    throw std::runtime_error("interrupted");
  } catch (const std::runtime_error&) {
  }
  CHECK(names_in(t.path()) == std::vector<std::string>{"keep"});
  CHECK(test::slurp(t / "keep") == "old content");
  CHECK(mode_of(t / "keep") == 0600);

  // Then a complete write replaces it, with the new mode.
  {
    AtomicFile file(t / "keep", 0640);
    write_text(file, "new content");
    file.commit(false);
  }
  CHECK(names_in(t.path()) == std::vector<std::string>{"keep"});
  CHECK(test::slurp(t / "keep") == "new content");
  CHECK(mode_of(t / "keep") == 0640);
}

TEST_CASE("AtomicFile: an O_TMPFILE failure that is not 'unsupported' is an error, not a fallback") {
  test::ScratchDir t;
  TmpfileFails denied(EACCES);
  CHECK_THROWS_AS(AtomicFile(t / "x", 0644), Error);
  CHECK(names_in(t.path()).empty());
}

TEST_CASE("AtomicFile on O_TMPFILE leaves no name before commit", "[host]") {
  test::ScratchDir t;
  // Asked of the kernel directly, not of AtomicFile: where the filesystem of $TMPDIR lacks O_TMPFILE, the named
  // path runs (the fallback test above covers it) and this test cannot run; where it has it, AtomicFile must use it.
  int probe = ::open(t.path().c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
  if (probe < 0) test::cannot_run("no O_TMPFILE on the filesystem of " + t.path().string());
  ::close(probe);
  AtomicFile file(t / "x", 0644);
  write_text(file, "x");
  CHECK(names_in(t.path()).empty());
  file.commit(false);
  CHECK(names_in(t.path()) == std::vector<std::string>{"x"});
}

TEST_CASE("current_umask reads the umask without changing it") {
  for (mode_t mask : {mode_t{022}, mode_t{077}, mode_t{0}, mode_t{0777}}) {
    UmaskFor set(mask);
    CHECK(current_umask() == mask);
    CHECK(current_umask() == mask);  // reading twice: the first read changed nothing
  }
}
