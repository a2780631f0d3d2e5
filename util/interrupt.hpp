// SIGINT, SIGTERM and SIGHUP during `ccpack restore` and `ccpack merge`: a run that is stopped (Ctrl-C, Kubernetes
// stopping the pod, a closed terminal) leaves the cache folders as they were, removes its staging or scratch
// folders, says "interrupted, nothing changed" and exits 130 (SIGINT), 143 (SIGTERM) or 129 (SIGHUP).
//
// How: install() sets a handler that only records the signal (async-signal-safe). While nothing is written yet
// the handler itself writes the line and ends the process, since there is nothing to clean up and a blocking
// wait (a lock, a stalled registry) would otherwise hold the pod; from begin_writing() on the signal is only
// recorded and check() turns it into an Error that unwinds through the normal cleanup.
// A process that never calls install() (the unit tests, `create --settle`'s own restores) is not affected.
#pragma once

#include <filesystem>

#include "util/error.hpp"

namespace ccpack::interrupt {

// Installs the SIGINT, SIGTERM and SIGHUP handlers (no SA_RESTART is needed: every EINTR loop reaches a check()).
// Until begin_writing() (probing, locking, fetching the header) the handler writes the line and ends the process
// with _exit.
void install();

// The signal caught since install() (SIGINT, SIGTERM or SIGHUP), or 0.
[[nodiscard]] int caught();

// Throws Error("interrupted, nothing changed (SIGTERM)") with exit code 130, 143 or 129 when a signal was caught.
void check();

// From now on a signal is only recorded for check(), never ends the process at once: staging folders are about
// to exist, and the code that makes them removes them. One way: it stays so for the rest of the process.
// The installer calls it before it makes staging folders, and the extraction calls check() at each chunk: the
// Error it throws unwinds through the installer, which removes the staging folders as for any failure. A signal
// after the last check, during the swap or after it, is recorded and not acted on: the swap is all-or-nothing and
// short, and the restore then completes.
void begin_writing();

// "interrupted, nothing changed (SIGINT)", "(SIGTERM)" or "(SIGHUP)": the error's text, also the handler's line.
[[nodiscard]] const char* message(int signal);

// The exit code of each signal: 130, 143, 129.
[[nodiscard]] ExitCode exit_code(int signal);

// While registered, `folder` is removed with everything in it when a signal ends the process in the handler (a
// few folders at once; one past that is not registered). forget_on_signal() takes it off before its owner
// removes it itself. The handler walks them with openat/getdents64/unlinkat only (async-signal-safe system calls),
// a few passes over, since worker threads may still be adding files until _exit stops them. merge registers its
// scratch folders.
void remove_on_signal(const std::filesystem::path& folder);
void forget_on_signal(const std::filesystem::path& folder);

}  // namespace ccpack::interrupt
