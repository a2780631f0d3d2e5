// The extractor's last line of defence, below every manifest check: a file is created O_EXCL|O_NOFOLLOW in its
// staging folder, so a name that appears there under it (a symlink planted by someone who can write beside the
// target, or any file already present) is an error, and nothing is written through the link or over the file.
// The staging folder is given to extract() already holding them, as such a race would leave it.
#include <fcntl.h>

#include <catch2/catch.hpp>

#include "pack/packer.hpp"
#include "unit/support.hpp"
#include "unpack/archive.hpp"
#include "unpack/extractor.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

using namespace ccpack;
namespace fs = std::filesystem;

TEST_CASE("restore never writes through a link or over a name planted in its staging folder") {
  test::ScratchDir t;
  test::write_file(t / "src/ind/a.py", "archive a\n");
  test::write_file(t / "src/ind/b.py", "archive b\n");
  fs::create_directories(t / "src/tri");
  (void)pack::create_archive(test::dirs_of(t / "src/ind", t / "src/tri"), t / "a.ccpack", {});
  unpack::Archive a = unpack::Archive::open(t / "a.ccpack");
  fs::create_directories(t / "outside");
  fs::create_directories(t / "staging");
  fs::create_symlink("../outside/victim", t / "staging/a.py");
  test::write_file(t / "staging/b.py", "planted b\n");
  UniqueFd root(::open((t / "staging").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  REQUIRE(root.valid());
  // One job: entries are written in stream order, so the first planted name met is the one reported.
  auto extract_error = [&] {
    try {
      (void)unpack::extract(a, {{"inductor", root.get(), nullptr}}, unpack::ExtractOptions{1, false});
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK(extract_error() == "cannot create 'inductor/a.py': File exists");
  CHECK(!fs::exists(t / "outside/victim"));
  fs::remove(t / "staging/a.py");
  CHECK(extract_error() == "cannot create 'inductor/b.py': File exists");
  CHECK(test::slurp(t / "staging/b.py") == "planted b\n");
}
