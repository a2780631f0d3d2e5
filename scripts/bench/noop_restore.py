#!/usr/bin/env python3
"""The no-op restore a container entrypoint pays on every pod restart, with `python3` behind a version manager's
shim, against the same restore with the probe memo off (what every no-op paid before the memo kept shims).

Why: a pod restart runs `ccpack restore` again on folders it already restored. That restore only reads the markers,
probes this machine and compares; the probe's one Python call is most of it, and a pyenv shim in front of Python
costs ~0.4 s per call. The probe memo (docs/FINGERPRINT.md) keeps the answer of the interpreter a shim ran, so a
no-op restore starts no Python at all. Target: a no-op restore behind a shim at most 20 ms, with no shim run.

How: the sample cache of tests/data is packed (signed) and restored once into scratch folders. The shim is a bash
script that counts its runs, waits --shim-delay seconds (pyenv's own cost; 0.4 by default) and execs the real
interpreter. Each repetition then times, alternating: a no-op restore with the memo (warm after the first restore),
the same with CCPACK_PROBE_CACHE=off, and the shim alone starting Python (`shim -c pass`). Wall time is
time.perf_counter() around the child; CPU time (user + system) from os.wait4(). It prints the medians, the ratio
of the memo's no-op to the memo-off no-op, the shim runs seen during the memo's no-ops (must be 0), and PASS/FAIL
against the 20 ms target.

Usage: scripts/bench/noop_restore.py [--ccpack BIN] [--reps N] [--python PY] [--shim-delay S] [--json]
Exit status: 0 when it ran (a missed target is reported, not an error), 1 when a command failed.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARGET_MS = 20.0


def timed(argv, env):
    """Wall seconds and CPU seconds (user + system) of one child; exits 1 when it fails."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("noop_restore: %s failed (%s): %s" % (argv[0], os.waitstatus_to_exitcode(status), err.strip()))
    return wall, usage.ru_utime + usage.ru_stime


def shim_runs(counter):
    with open(counter) as f:
        return len(f.read().splitlines())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ccpack", default=os.path.join(ROOT, "build", "tools", "ccpack"))
    ap.add_argument("--reps", type=int, default=21)
    ap.add_argument("--python", default=sys.executable, help="the real interpreter the shim runs")
    ap.add_argument("--shim-delay", type=float, default=0.4, help="seconds the shim spends before exec (pyenv's cost)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="ccpack-noop-")
    counter = os.path.join(work, "shim-runs")
    open(counter, "w").close()
    shim = os.path.join(work, "shims", "python3")
    os.makedirs(os.path.dirname(shim))
    with open(shim, "w") as f:
        f.write('#!/usr/bin/env bash\necho run >>"%s"\nsleep %s\nexec "%s" "$@"\n' % (counter, a.shim_delay, a.python))
    os.chmod(shim, 0o755)
    env = dict(os.environ, HOME=work, XDG_CACHE_HOME=os.path.join(work, "cache"), CCPACK_PYTHON=shim,
               CCPACK_PROBE_CACHE=os.path.join(work, "memo.json"), CCPACK_TRUSTED_KEYS=os.path.join(work, "ci.key.pub"))
    sample = os.path.join(ROOT, "tests", "data", "sample-cache")
    dirs = ["--inductor-dir", os.path.join(work, "r", "ind"), "--triton-dir", os.path.join(work, "r", "tri")]
    archive = os.path.join(work, "a.ccpack")
    timed([a.ccpack, "keygen", "-q", "--out", os.path.join(work, "ci.key")], env)
    timed([a.ccpack, "create", "-q", "-o", archive, "--sign-key", os.path.join(work, "ci.key"),
           "--inductor-dir", os.path.join(sample, "inductor_cache"), "--triton-dir", os.path.join(sample, "triton_cache")], env)
    restore = [a.ccpack, "restore", "-q", archive] + dirs
    timed(restore, env)  # the real restore: the shim runs once, the memo keeps its answer
    off = dict(env, CCPACK_PROBE_CACHE="off")
    t = {"memo": [], "memo_cpu": [], "off": [], "off_cpu": [], "shim": []}
    runs_before = shim_runs(counter)
    memo_shim_runs = 0
    for _ in range(a.reps):
        before = shim_runs(counter)
        w, c = timed(restore, env)
        memo_shim_runs += shim_runs(counter) - before
        t["memo"].append(w); t["memo_cpu"].append(c)
        w, c = timed(restore, off)
        t["off"].append(w); t["off_cpu"].append(c)
        t["shim"].append(timed([shim, "-c", "pass"], env)[0])
    med = {k: statistics.median(v) * 1000 for k, v in t.items()}
    ratios = [m / o for m, o in zip(t["memo"], t["off"])]
    report = {"reps": a.reps, "shim_delay_s": a.shim_delay, "median_ms": med,
              "median_ratio_memo_to_off": statistics.median(ratios), "shim_runs_during_memo_noops": memo_shim_runs,
              "shim_runs_first_restore": runs_before, "target_ms": TARGET_MS,
              "pass": med["memo"] <= TARGET_MS and memo_shim_runs == 0}
    if a.json:
        print(json.dumps(report, indent=1))
    else:
        print("no-op restore behind a shim (%d reps, alternating; medians)" % a.reps)
        print("  memo on:  %7.1f ms wall, %6.1f ms CPU, shim runs: %d" % (med["memo"], med["memo_cpu"], memo_shim_runs))
        print("  memo off: %7.1f ms wall, %6.1f ms CPU" % (med["off"], med["off_cpu"]))
        print("  the shim alone starting Python: %.1f ms" % med["shim"])
        print("  median of per-pair ratios memo on / off: %.3fx" % report["median_ratio_memo_to_off"])
        print("  target: at most %.0f ms with no shim run: %s" % (TARGET_MS, "PASS" if report["pass"] else "FAIL"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
