// SIGINT and SIGTERM during `ccpack restore`: a restore that is stopped (Ctrl-C, or Kubernetes stopping the pod)
// leaves the cache folders as they were, removes its staging folders, says "interrupted, nothing changed" and
// exits 130 (SIGINT) or 143 (SIGTERM).
//
// How: install() sets a handler that only records the signal (async-signal-safe). While nothing is written yet
// (the default after install(): probing, locking, fetching the header) the handler itself writes the line and
// ends the process with _exit, since there is nothing to clean up and a blocking wait (a lock, a stalled
// registry) would otherwise hold the pod. From begin_writing() on (the installer calls it before it makes staging
// folders) the handler only records the signal, and the extraction checks it at each chunk (check()): the Error
// it throws unwinds through the installer, which removes the staging folders as for any failure. A signal after
// the last check, during the swap or after it, is recorded and not acted on: the swap is all-or-nothing and
// short, and the restore then completes.
// A process that never calls install() (the unit tests, `create --settle`'s own restores) is not affected.
#pragma once

namespace ccpack::interrupt {

// Installs the SIGINT and SIGTERM handlers (no SA_RESTART is needed: every EINTR loop reaches a check()).
void install();

// The signal caught since install() (SIGINT or SIGTERM), or 0.
[[nodiscard]] int caught();

// Throws Error("interrupted, nothing changed (SIGTERM)") with exit code 130 or 143 when a signal was caught.
void check();

// From now on a signal is only recorded for check(), never ends the process at once: staging folders are about
// to exist, and the code that makes them removes them. One way: it stays so for the rest of the process.
void begin_writing();

// "interrupted, nothing changed (SIGINT)" or "(SIGTERM)": the error's text, also the handler's line.
[[nodiscard]] const char* message(int signal);

}  // namespace ccpack::interrupt
