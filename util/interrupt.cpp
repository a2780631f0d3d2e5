// See interrupt.hpp.
#include "util/interrupt.hpp"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>

#include "util/error.hpp"

namespace ccpack::interrupt {
namespace {

std::atomic<int> g_caught{0};
std::atomic<bool> g_writing{false};

constexpr const char* kPrefix = "ccpack: error: ";

void on_signal(int sig) {
  g_caught.store(sig);
  if (g_writing.load()) return;
  const char* text = message(sig);
  (void)!::write(STDERR_FILENO, kPrefix, std::strlen(kPrefix));
  (void)!::write(STDERR_FILENO, text, std::strlen(text));
  (void)!::write(STDERR_FILENO, "\n", 1);
  ::_exit(static_cast<int>(sig == SIGINT ? ExitCode::interrupted_int : ExitCode::interrupted_term));
}

}  // namespace

void install() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}

int caught() { return g_caught.load(); }

void begin_writing() { g_writing.store(true); }

const char* message(int signal) {
  return signal == SIGINT ? "interrupted, nothing changed (SIGINT)" : "interrupted, nothing changed (SIGTERM)";
}

void check() {
  int sig = g_caught.load();
  if (sig == 0) return;
  throw Error(message(sig), sig == SIGINT ? ExitCode::interrupted_int : ExitCode::interrupted_term);
}

}  // namespace ccpack::interrupt
