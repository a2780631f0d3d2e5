// See interrupt.hpp.
#include "util/interrupt.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstring>

#include "util/error.hpp"

namespace ccpack::interrupt {
namespace {

std::atomic<int> g_caught{0};
std::atomic<bool> g_writing{false};

constexpr const char* kPrefix = "ccpack: error: ";

// Folders the handler removes: a slot is free (0), being filled (1) or ready (2); only ready ones are read.
constexpr std::size_t kSlots = 4;
constexpr std::size_t kPathMax = 4096;
std::array<std::atomic<int>, kSlots> g_state{};
std::array<std::array<char, kPathMax>, kSlots> g_paths{};

// Deeper than any tree a scratch folder holds (archive paths are bounded); past it the walk stops, not the stack.
constexpr int kMaxDepth = 256;
// Passes over a folder: entries removed while getdents64 reads it, or added by a worker still running, are caught
// by the next pass.
constexpr int kPasses = 4;

// What is under `name` (relative to `parent`) and the folder itself, with async-signal-safe calls only.
void remove_tree_at(int parent, const char* name, int depth) {
  if (::unlinkat(parent, name, 0) == 0 || depth > kMaxDepth) return;
  int fd = ::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  alignas(8) char buf[2048];
  for (int pass = 0; ::unlinkat(parent, name, AT_REMOVEDIR) != 0 && pass < kPasses; ++pass) {
    (void)::lseek(fd, 0, SEEK_SET);
    for (long n; (n = ::syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0;) {
      for (long off = 0; off < n;) {
        // struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1), d_name
        std::uint16_t reclen = 0;
        std::memcpy(&reclen, buf + off + 16, sizeof reclen);
        const char* entry = buf + off + 19;
        if (std::strcmp(entry, ".") != 0 && std::strcmp(entry, "..") != 0) remove_tree_at(fd, entry, depth + 1);
        off += reclen;
      }
    }
  }
  ::close(fd);
}

void remove_registered() {
  for (std::size_t i = 0; i < kSlots; ++i) {
    if (g_state[i].load() == 2) remove_tree_at(AT_FDCWD, g_paths[i].data(), 0);
  }
}

void on_signal(int sig) {
  g_caught.store(sig);
  if (g_writing.load()) return;
  remove_registered();
  const char* text = message(sig);
  (void)!::write(STDERR_FILENO, kPrefix, std::strlen(kPrefix));
  (void)!::write(STDERR_FILENO, text, std::strlen(text));
  (void)!::write(STDERR_FILENO, "\n", 1);
  ::_exit(static_cast<int>(exit_code(sig)));
}

}  // namespace

void install() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGHUP, &sa, nullptr);
}

int caught() { return g_caught.load(); }

void begin_writing() { g_writing.store(true); }

const char* message(int signal) {
  if (signal == SIGHUP) return "interrupted, nothing changed (SIGHUP)";
  return signal == SIGINT ? "interrupted, nothing changed (SIGINT)" : "interrupted, nothing changed (SIGTERM)";
}

ExitCode exit_code(int signal) {
  if (signal == SIGHUP) return ExitCode::interrupted_hup;
  return signal == SIGINT ? ExitCode::interrupted_int : ExitCode::interrupted_term;
}

void remove_on_signal(const std::filesystem::path& folder) {
  const std::string& text = folder.native();
  if (text.size() >= kPathMax) return;
  for (std::size_t i = 0; i < kSlots; ++i) {
    int free = 0;
    if (!g_state[i].compare_exchange_strong(free, 1)) continue;
    std::memcpy(g_paths[i].data(), text.c_str(), text.size() + 1);
    g_state[i].store(2);
    return;
  }
}

void forget_on_signal(const std::filesystem::path& folder) {
  for (std::size_t i = 0; i < kSlots; ++i) {
    int ready = 2;
    if (folder.native() == g_paths[i].data() && g_state[i].compare_exchange_strong(ready, 1)) g_state[i].store(0);
  }
}

void check() {
  int sig = g_caught.load();
  if (sig == 0) return;
  throw Error(message(sig), exit_code(sig));
}

}  // namespace ccpack::interrupt
