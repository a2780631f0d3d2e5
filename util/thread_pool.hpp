// The process's oneTBB thread limit, applied when parallel work first starts instead of at start-up.
//
// Why: making oneTBB's global_control initialises the library (it loads its allocator and reads /proc/meminfo and
// the huge-page settings), a visible part of a no-op restore, and a run that starts no parallel work (the no-op
// restore of a pod restart, inspect, fingerprint) should not pay for a pool it never uses.
// How: the front end records the limit once (set_thread_limit: its -j or the CPU budget); every entry into oneTBB
// (pack's scanner, layout, kernel targets and pipeline, unpack's extractor) first calls use_thread_pool(), whose
// first call makes the global_control with that limit; it holds until end_thread_pool() (the end of main).
#pragma once

namespace ccpack {

// The limit oneTBB gets when it starts (0: oneTBB's own default); applied at once if it has started already.
void set_thread_limit(unsigned threads);

// Before any oneTBB call: makes the global_control with the recorded limit, once per process. Thread-safe.
void use_thread_pool();

// Whether use_thread_pool has run in this process (and oneTBB may have started).
[[nodiscard]] bool thread_pool_used();

// Drops the global_control (main's end, so that it goes before oneTBB's own teardown).
void end_thread_pool();

}  // namespace ccpack
