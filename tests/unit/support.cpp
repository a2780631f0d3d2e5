#include "unit/support.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "util/error.hpp"
#include "util/sha256.hpp"

namespace ccpack::test {

ScopedEnv::ScopedEnv(const char* name, const std::optional<std::string>& value) : name_(name) {
  if (const char* old = std::getenv(name)) old_ = old;
  if (value) {
    ::setenv(name, value->c_str(), 1);
  } else {
    ::unsetenv(name);
  }
}

ScopedEnv::~ScopedEnv() {
  if (old_) {
    ::setenv(name_, old_->c_str(), 1);
  } else {
    ::unsetenv(name_);
  }
}
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

namespace {

// What a child wrote to its pipe, and how it ended (waitpid's status).
struct ChildResult {
  std::string text;
  int status = 0;
};

// Runs `child` in a forked child that writes its answer to the pipe and _exit(0)s; the parent reads it all.
ChildResult run_in_child(const std::function<std::string()>& child) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) throw std::runtime_error("pipe");
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork");
  if (pid == 0) {
    ::close(pipe_fds[0]);
    std::string text = child();
    (void)!::write(pipe_fds[1], text.data(), text.size());
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  ChildResult r;
  char buf[4096];
  for (ssize_t n; (n = ::read(pipe_fds[0], buf, sizeof buf)) > 0;) r.text.append(buf, static_cast<std::size_t>(n));
  ::close(pipe_fds[0]);
  ::waitpid(pid, &r.status, 0);
  return r;
}

}  // namespace

long peak_rss_growth_kib(const std::function<void()>& work) {
  ChildResult r = run_in_child([&] {
    rusage before{}, after{};
    ::getrusage(RUSAGE_SELF, &before);
    long growth = -1;
    try {
      work();
      ::getrusage(RUSAGE_SELF, &after);
      growth = after.ru_maxrss - before.ru_maxrss;
    } catch (...) {
    }
    return std::to_string(growth);
  });
  return r.text.empty() ? -2 : std::stol(r.text);
}

std::string error_as_other_user(const std::function<void()>& work) {
  return run_in_child([&] {
           std::string message = "(no Error)";
           if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) message = "(other: cannot drop privileges)";
           try {
             if (message == "(no Error)") work();
           } catch (const Error& e) {
             message = e.what();
           } catch (const std::exception& e) {
             message = std::string("(other: ") + e.what() + ")";
           }
           return message;
         })
      .text;
}

std::string answer_within(unsigned seconds, const std::function<std::string()>& work) {
  ChildResult r = run_in_child([&] {
    ::alarm(seconds);  // default action of SIGALRM: the child ends, the parent sees the signal
    try {
      return work();
    } catch (const std::exception& e) {
      return std::string("(threw: ") + e.what() + ")";
    }
  });
  if (WIFSIGNALED(r.status)) return "(hung: no answer in " + std::to_string(seconds) + " s)";
  return r.text;
}

NoCredentials::NoCredentials() {
  ::setenv("HOME", dir_.path().c_str(), 1);
  ::setenv("DOCKER_CONFIG", dir_.path().c_str(), 1);
  ::unsetenv("REGISTRY_AUTH_FILE");
  ::unsetenv("XDG_RUNTIME_DIR");
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

fs::path fixture_archive() {
  const char* env = std::getenv("CCPACK_FIXTURE");
  return env != nullptr && *env != '\0' ? fs::path(env) : fs::path(CCPACK_FIXTURE);
}

void cannot_run(const std::string& why) {
  const char* required = std::getenv("CCPACK_REQUIRE_FIXTURES");
  const char* skip_code = std::getenv("CCPACK_FIXTURE_SKIP_CODE");
  bool require = required != nullptr && std::string(required) == "1";
  if (!require && skip_code != nullptr) {
    std::printf("SKIPPED: %s\n", why.c_str());
    std::fflush(stdout);
    std::_Exit(std::atoi(skip_code));
  }
  FAIL(why + (require ? " (CCPACK_REQUIRE_FIXTURES=1)" : " (leave such tests out with ~[fixture]~[host])"));
  std::abort();  // not reached: FAIL throws
}

fs::path real_fixture() {
  fs::path archive = fixture_archive();
  if (!fs::exists(archive)) cannot_run("the real fixture " + archive.string() + " is absent");
  static fs::path unpacked = [&archive] {
    fs::path dir = fs::temp_directory_path() / ("ccpack-fixture-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(fs::temp_directory_path() / ("ccpack-fixture-" + std::to_string(::getpid())), ec);
    });
    // set -o pipefail: a failing xz fails the pipe, not only a failing tar.
    std::string cmd = "bash -o pipefail -c \"xz -dc '" + archive.string() + "' | tar -xf - -C '" + dir.string() + "'\"";
    if (std::system(cmd.c_str()) != 0) throw std::runtime_error("cannot unpack the real fixture: " + cmd + " failed");
    return dir;
  }();
  return unpacked;
}

Streams captured(const std::function<void()>& f) {
  ScratchDir t;
  std::fflush(stdout);
  std::fflush(stderr);
  int saved_out = ::dup(1);
  int saved_err = ::dup(2);
  int out_fd = ::open((t / "out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  int err_fd = ::open((t / "err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ::dup2(out_fd, 1);
  ::dup2(err_fd, 2);
  f();
  std::fflush(stdout);
  std::fflush(stderr);
  ::dup2(saved_out, 1);
  ::dup2(saved_err, 2);
  for (int fd : {saved_out, saved_err, out_fd, err_fd}) ::close(fd);
  return {slurp(t / "out"), slurp(t / "err")};
}

manifest::Entry dir_entry(const std::string& path) { return {path, manifest::EntryType::dir, 0755, 0, {}, {}, 0}; }

manifest::Entry file_entry(const std::string& path, const std::string& bytes, std::uint32_t mode) {
  return {path, manifest::EntryType::file, mode, bytes.size(), Sha256::of(bytes), {}, 0};
}

manifest::Entry link_entry(const std::string& path, const std::string& target) {
  return {path, manifest::EntryType::symlink, 0777, 0, {}, target, 0};
}

manifest::Manifest sample_manifest() {
  using manifest::ComponentKind;
  using manifest::EntryType;
  manifest::Manifest m;
  m.created_by = "ccpack test";
  m.compression = {"zstd", 1, 27};
  m.components = {{"inductor", ComponentKind::inductor, "/tmp/ind", 1, 5}, {"triton", ComponentKind::triton, "/tmp/tri", 0, 0}};
  m.entries = {{"inductor", EntryType::dir, 0755, 0, {}, {}, 0},
               {"inductor/fx", EntryType::dir, 0755, 0, {}, {}, 0},
               {"inductor/fx/a.py", EntryType::file, 0644, 5, Sha256::of("hello"), {}, 0},
               {"inductor/fx/link", EntryType::symlink, 0777, 0, {}, "a.py", 0},
               {"triton", EntryType::dir, 0700, 0, {}, {}, 0}};
  m.frames = {{0, 100, 4096, Sha256::of("frame"), 0, 5}};
  m.tar_size = 4096;
  return m;
}

manifest::Manifest triton_manifest() {
  using manifest::EntryType;
  manifest::Manifest m;
  m.created_by = "ccpack test";
  m.compression = {"zstd", 1, 27};
  m.components = {{"triton", manifest::ComponentKind::triton, "/tmp/tri", 1, 5}};
  m.entries = {{"triton", EntryType::dir, 0755, 0, {}, {}, 0},
               {"triton/a.json", EntryType::file, 0644, 5, Sha256::of("hello"), {}, 0}};
  m.frames = {{0, 100, 4096, Sha256::of("frame"), 0, 2}};
  m.tar_size = 4096;
  return m;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  std::size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

const manifest::ComparisonRow& row_of(const manifest::Comparison& c, std::string_view name) {
  for (const manifest::ComparisonRow& r : c.rows) {
    if (r.field == name) return r;
  }
  FAIL("no row " << name);
  throw 0;
}

void flip_byte(const std::filesystem::path& path, std::uint64_t offset, unsigned char mask) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  f.read(&c, 1);
  c = static_cast<char>(c ^ static_cast<char>(mask));
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(&c, 1);
}

std::string seeded_text(std::size_t n, unsigned seed, unsigned letters) {
  std::string s;
  s.reserve(n);
  std::uint32_t x = seed;
  for (std::size_t i = 0; i < n; ++i) {
    x = x * 1103515245U + 12345U;
    s.push_back(static_cast<char>('a' + (x >> 16) % letters));
  }
  return s;
}

}  // namespace ccpack::test
