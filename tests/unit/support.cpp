#include "unit/support.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

namespace ccpack::test {
namespace fs = std::filesystem;

ScratchDir::ScratchDir() {
  std::random_device rd;
  path_ = fs::temp_directory_path() / ("ccpack-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
  fs::create_directories(path_);
}

ScratchDir::~ScratchDir() {
  if (std::getenv("CCPACK_KEEP_TEST_DIRS") == nullptr) {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
}

void write_file(const fs::path& path, const std::string& content, unsigned mode) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  out.close();
  ::chmod(path.c_str(), mode);
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::map<std::string, std::string> snapshot(const fs::path& root) {
  std::map<std::string, std::string> out;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    const fs::path& p = it->path();
    std::string rel = fs::relative(p, root).string();
    if (rel.starts_with(".ccpack-")) continue;  // the restore marker is ccpack's, not the cache's
    struct stat st {};
    ::lstat(p.c_str(), &st);
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", st.st_mode & 07777);
    if (S_ISDIR(st.st_mode)) {
      out[rel] = std::string("dir ") + mode;
    } else if (S_ISLNK(st.st_mode)) {
      out[rel] = "link " + fs::read_symlink(p).string();
    } else {
      out[rel] = std::string("file ") + mode + " " + slurp(p);
    }
  }
  return out;
}

fs::path real_fixture() {
  static fs::path unpacked = [] {
    fs::path archive = CCPACK_FIXTURE;
    if (!fs::exists(archive)) return fs::path();
    fs::path dir = fs::temp_directory_path() / ("ccpack-fixture-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::string cmd = "xz -dc '" + archive.string() + "' | tar -xf - -C '" + dir.string() + "'";
    if (std::system(cmd.c_str()) != 0) return fs::path();
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(fs::temp_directory_path() / ("ccpack-fixture-" + std::to_string(::getpid())), ec);
    });
    return dir;
  }();
  return unpacked;
}

}  // namespace ccpack::test
