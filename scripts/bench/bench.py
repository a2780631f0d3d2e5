#!/usr/bin/env python3
"""Benchmark ccpack against the stock `tar | zstd --long` pipeline on a torch.compile cache.

Why: ccpack has numeric targets, each a ratio to stock measured in the same run (create <= 0.8x,
restore <= 0.3x on the real fixture and <= 0.35x at 100k files, no-op restore within 50/100/500 ms, peak RSS
<= 512 MiB up to a million files). This script measures them the same way every time, checks that a restore
gives back the source, and guards against regressions.

How: a case is "fixture" (--cache DIR, else the real fixture <repo>/../shared/fixtures/real-cache-h200.tar.xz
unpacked once into WORKDIR/fixture, else gen_synthetic_cache.py --scale 1), "100k" (gen_synthetic_cache.py
--files 100000) or "1m" (--files 1000000 --tiny, in its own loop-mounted ext4 image with enough inodes); the
synthetic caches are generated once and kept in WORKDIR. Every repetition runs ccpack and then stock
(alternating), each after `sync` + SETTLE_S, 3 s (not timed); wall time is time.perf_counter() around the child, CPU
time and peak RSS come from os.wait4() (for a shell pipeline or `tar -I zstd`, the max over its children).
Restores (reference mode, the default as root): each into a freshly made ext4 filesystem (benchkit/freshfs.py;
made and mounted before the timed part), ccpack's and stock's alike, as a new pod's empty volume;
`--restore-fs dir` restores into folders of WORKDIR's filesystem as before (earlier targets moved aside, or
deleted with --delete-between-reps). After the first ccpack restore the trees are compared with the source
(benchkit/treecmp.py). The restore floor (benchkit/floor.c: only creating the same folders and files from the
tar stream held in memory, 1 thread and one per core) is timed the same way.
Signing: the archive restored is signed (create --sign-key) and restored with --trust, as in production; each
rep also times an unsigned create and a restore and no-op restore with --allow-unsigned, and the report shows
what signing and checking add, in wall time and in CPU time (user + system, which other processes' load does
not blur). Every restore probes the fingerprint (one Python call: --python, default this script's own
interpreter, so that a pyenv shim's ~0.4 s is not what is measured; create gets the same --python: through the
shim, whose 260 processes are never memoised, signed create once looked 0.45 s of CPU dearer than unsigned);
`ccpack fingerprint` alone is timed too.
Output: a report per case and the targets table (PASS/FAIL per cell, machine, date), or JSON with --json.
--write-baseline stores the ratios in scripts/bench/bench-baseline.json; --check-baseline compares with it.
Exit status: 0 when it ran (failing targets are reported, not an error), 1 when a command failed, a restore did
not match, or a ratio regressed more than 10% from the baseline; 2 for a mode this machine cannot run.
"""
import argparse
import contextlib
import json
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchkit import floor, freshfs, report  # noqa: E402
from benchkit.caches import SYNTHETIC, synthetic_cache  # noqa: E402
from benchkit.treecmp import Mismatch, verify_in_child  # noqa: E402

REPO = Path(__file__).resolve().parent.parent.parent
FIXTURE = REPO.parent / "shared" / "fixtures" / "real-cache-h200.tar.xz"
GEN = Path(__file__).resolve().parent / "gen_synthetic_cache.py"
BASELINE = Path(__file__).resolve().parent / "bench-baseline.json"
MB, MIB = 1e6, 1024 * 1024
DELETE_BETWEEN_REPS = False


class Failure(Exception):
    pass


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# CPU seconds (user + system, from os.wait4) of the last run(): what signing and checking add is far below the
# wall-clock noise of a shared machine, and CPU time is what they cost.
LAST_CPU = 0.0


# Seconds between a sync and each timed command. On this VM (Firecracker, free page reporting on) memory a process
# frees goes back to the host within a few seconds, and a later process pays host faults when it touches it again:
# with 0.5 s, whichever ccpack create ran right after stock's create paid them and the next did not (fixture,
# 2026-11-30: 1.23 s vs 0.79 s for the same command, by order alone; signed vs unsigned looked 0.19-0.45 s apart).
# After 3 s every command starts from the same state: every freed page reported, fresh memory at its full cost.
SETTLE_S = 3.0


def run(cmd, timed=True):
    """Run cmd (argv list); return (wall seconds, peak RSS MiB). Raise Failure on a non-zero exit."""
    global LAST_CPU
    if timed:
        subprocess.run(["sync"], check=False)
        time.sleep(SETTLE_S)
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            err.seek(0)
            raise Failure(f"command failed (exit {p.returncode}): {shlex.join(cmd)}\n"
                          f"{err.read().decode(errors='replace').rstrip()}")
    LAST_CPU = ru.ru_utime + ru.ru_stime
    return wall, ru.ru_maxrss * 1024 / MIB  # ru_maxrss is in KiB on Linux


# Where fresh_dir moves earlier restore targets instead of deleting them (None: delete). On ext4 without a
# journal (this machine's root filesystem), creating inodes within 60 s of deleting thousands of others makes the
# inode allocator scan for "recently deleted" slots, which doubles the cost of creating files for ccpack and tar
# alike; a pod restoring into a fresh container never pays it. Moving them aside, then deleting them all once
# the timing is over, measures the pod's case. --delete-between-reps measures the other.
TRASH = None


def fresh_dir(path, *subdirs):
    if TRASH is not None and path.exists():
        TRASH.mkdir(parents=True, exist_ok=True)
        path.rename(TRASH / f"{path.name}.{len(list(TRASH.iterdir()))}")
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    for s in subdirs:
        (path / s).mkdir()


def tree_stats(root):
    files = size = 0
    for dirpath, _, names in os.walk(root):
        for n in names:
            files += 1
            size += os.lstat(os.path.join(dirpath, n)).st_size
    return files, size


def warm_page_cache(root):
    for dirpath, _, names in os.walk(root):
        for n in names:
            with open(os.path.join(dirpath, n), "rb") as f:
                while f.read(1 << 20):
                    pass


PYTHON = sys.executable
FRESH_FS = False  # restore into a new ext4 filesystem per repetition (benchkit/freshfs.py)


@contextlib.contextmanager
def restore_root(work, name, need):
    """An empty folder to restore into: the root of a fresh ext4 filesystem (FRESH_FS), else work/name."""
    if FRESH_FS:
        with freshfs.fresh_ext4(work, name, *need) as mnt:
            yield mnt
    else:
        d = work / name
        fresh_dir(d)
        yield d


def measure(cache, work, ccpack, reps, level=None, noop=True):
    """Time ccpack vs stock create/restore on cache (a folder holding inductor_cache, triton_cache)."""
    global TRASH
    TRASH = None
    fresh_dir(work)
    if not DELETE_BETWEEN_REPS and not FRESH_FS:
        TRASH = work / "trash"
    need = freshfs.footprint(cache) if FRESH_FS else None
    ck, st, cu = work / "out.ccpack", work / "out.tar.zst", work / "unsigned.ccpack"
    key = work / "bench.key"
    run([ccpack, "keygen", "-q", "--out", str(key)], timed=False)
    create_base = [ccpack, "create", "--inductor-dir", str(cache / "inductor_cache"),
                   "--triton-dir", str(cache / "triton_cache"), "-q", "--python", PYTHON]
    create_base += ["--level", level] if level else []
    create_ck = create_base + ["-o", str(ck), "--sign-key", str(key)]
    create_unsigned = create_base + ["-o", str(cu)]
    create_st = ["sh", "-c", f"tar -C {shlex.quote(str(cache))} -c inductor_cache triton_cache"
                             f" | zstd -q -3 --long=27 -T0 > {shlex.quote(str(st))}"]

    def restore_cmd(tc, check=True):
        base = [ccpack, "restore", str(ck), "--inductor-dir", str(tc / "inductor"), "--triton-dir", str(tc / "triton"),
                "-q", "--python", PYTHON]
        return base + (["--trust", f"{key}.pub"] if check else ["--allow-unsigned"])

    verify_ck = [ccpack, "verify", str(ck), "-q", "--trust", f"{key}.pub"]
    t = {k: [] for k in ("create_ccpack", "create_unsigned", "create_stock", "restore_ccpack", "restore_unchecked",
                         "restore_stock", "verify", "noop", "noop_unchecked", "fingerprint")}
    rss = {k: [] for k in ("create_ccpack", "create_stock", "restore_ccpack", "restore_stock", "verify", "noop")}
    cpu = {k: [] for k in t}

    def timed(key, cmd):
        wall, peak = run(cmd)
        t[key].append(wall)
        cpu[key].append(LAST_CPU)
        if key in rss:
            rss[key].append(peak)
        log(f"  {key:15s} rep {len(t[key])}/{reps}: {wall:7.3f} s  {peak:7.1f} MiB")

    log("warming the page cache")
    warm_page_cache(cache)
    run(create_ck, timed=False)  # untimed: the first create after idle pays faults the others do not
    for _ in range(reps):
        ck.unlink(missing_ok=True)
        timed("create_ccpack", create_ck)
        cu.unlink(missing_ok=True)
        timed("create_unsigned", create_unsigned)
        st.unlink(missing_ok=True)
        timed("create_stock", create_st)
    rewritten = None
    for _ in range(reps):
        with restore_root(work, "restore-ccpack", need) as tc:
            mkdirs(tc, "inductor", "triton")
            timed("restore_ccpack", restore_cmd(tc))
            if rewritten is None:
                rewritten = verify_in_child([(cache / "inductor_cache", tc / "inductor"), (cache / "triton_cache", tc / "triton")])
                log(f"  restore verified equal to the source ({rewritten} __grp__ json with rewritten paths)")
        with restore_root(work, "restore-unchecked", need) as tc:
            mkdirs(tc, "inductor", "triton")
            timed("restore_unchecked", restore_cmd(tc, check=False))
        with restore_root(work, "restore-stock", need) as ts:
            timed("restore_stock", ["tar", "-I", "zstd --long=27", "-xf", str(st), "-C", str(ts)])
        timed("verify", verify_ck)
    res = {"restore_fs": "fresh ext4 per restore" if FRESH_FS else
           ("same folder, earlier targets deleted" if DELETE_BETWEEN_REPS else "same folder, earlier targets moved aside")}
    res["floor"] = measure_floor(work, ck, need, reps)
    if noop:
        with restore_root(work, "restore-noop", need) as tc:
            mkdirs(tc, "inductor", "triton")
            run(restore_cmd(tc), timed=False)
            for _ in range(2 * reps + 1):  # cheap, and the difference is small: more reps
                timed("noop", restore_cmd(tc))
                timed("noop_unchecked", restore_cmd(tc, check=False))
                timed("fingerprint", [ccpack, "fingerprint", "--python", PYTHON, "--inductor-dir", str(tc / "inductor"),
                                      "--triton-dir", str(tc / "triton")])
    res.update(summarise(t, cpu, rss, ck, st, rewritten, noop))
    TRASH = None
    shutil.rmtree(work, ignore_errors=True)
    return res


def mkdirs(root, *names):
    for n in names:
        (root / n).mkdir(parents=True, exist_ok=True)


def measure_floor(work, ck, need, reps):
    """The restore floor (benchkit/floor.c) on ccpack's own tar stream, 1 thread and one per core."""
    exe = floor.build(work)
    if exe is None:
        log("  no C compiler: the restore floor is not measured")
        return None
    tar = work / "stream.tar"
    subprocess.run(["zstd", "-q", "-d", "-f", "--long=27", str(ck), "-o", str(tar)], check=True)
    out = {}
    for threads in sorted({1, os.cpu_count() or 1}):
        samples = []
        for _ in range(reps):
            with restore_root(work, "floor", need) as d:
                subprocess.run(["sync"], check=False)
                time.sleep(SETTLE_S)
                samples.append(floor.run(exe, tar, d, threads))
            log(f"  floor {threads} thread(s): create {samples[-1][0]:.3f} s, syncfs {samples[-1][1]:.3f} s")
        out[str(threads)] = {"create_s": statistics.median(s[0] for s in samples),
                             "sync_s": statistics.median(s[1] for s in samples)}
    tar.unlink()
    return out


def summarise(t, cpu, rss, ck, st, rewritten, noop):
    med = {k: statistics.median(v) for k, v in t.items() if v}
    mcpu = {k: statistics.median(v) for k, v in cpu.items() if v}
    res = {
        "create_s": {"ccpack": med["create_ccpack"], "stock": med["create_stock"],
                     "ratio": med["create_ccpack"] / med["create_stock"]},
        "restore_s": {"ccpack": med["restore_ccpack"], "stock": med["restore_stock"],
                      "ratio": med["restore_ccpack"] / med["restore_stock"]},
        "cpu_ratio": {"create": mcpu["create_ccpack"] / mcpu["create_stock"],
                      "restore": mcpu["restore_ccpack"] / mcpu["restore_stock"]},
        "verify_s": med["verify"],
        "cpu_s": mcpu,
        "size_bytes": {"ccpack": ck.stat().st_size, "stock": st.stat().st_size},
        "peak_rss_mib": {k: max(v) for k, v in rss.items() if v},
        "grp_rewritten": rewritten,
        "samples_s": t,
    }
    res["signing_ms"] = {"create_signed": med["create_ccpack"] * 1000, "create_unsigned": med["create_unsigned"] * 1000,
                         "create_added": (med["create_ccpack"] - med["create_unsigned"]) * 1000,
                         "restore_checked": med["restore_ccpack"] * 1000, "restore_unchecked": med["restore_unchecked"] * 1000,
                         "restore_added": (med["restore_ccpack"] - med["restore_unchecked"]) * 1000,
                         "create_added_cpu": (mcpu["create_ccpack"] - mcpu["create_unsigned"]) * 1000,
                         "restore_added_cpu": (mcpu["restore_ccpack"] - mcpu["restore_unchecked"]) * 1000}
    if noop:
        res["noop_restore_ms"] = med["noop"] * 1000
        res["signing_ms"].update({"noop_checked": med["noop"] * 1000, "noop_unchecked": med["noop_unchecked"] * 1000,
                                  "noop_added": (med["noop"] - med["noop_unchecked"]) * 1000,
                                  "noop_added_cpu": (mcpu["noop"] - mcpu["noop_unchecked"]) * 1000})
        res["fingerprint_ms"] = med["fingerprint"] * 1000
        res["python"] = PYTHON
    return res


def prepare_cache(args, work):
    """Return (cache folder, description)."""
    if args.cache:
        cache = Path(args.cache).resolve()
        for d in ("inductor_cache", "triton_cache"):
            if not (cache / d).is_dir():
                raise Failure(f"{cache} has no {d} folder")
        return cache, f"given cache {cache}"
    if FIXTURE.exists():
        src, dest, what = FIXTURE, work / "fixture", f"real fixture {FIXTURE.resolve()}"
        cmd = ["sh", "-c", f"xz -dc {shlex.quote(str(FIXTURE))} | tar -xf - -C {shlex.quote(str(dest))}"]
    else:
        src, dest, what = GEN, work / "synthetic-s1", "synthetic cache (gen_synthetic_cache.py --scale 1)"
        cmd = [sys.executable, str(GEN), str(dest), "--scale", "1"]
    done = dest.with_name(dest.name + ".done")
    if not done.exists() or done.stat().st_mtime < src.stat().st_mtime:
        log(f"preparing {what} in {dest}")
        fresh_dir(dest)
        run(cmd, timed=False)
        done.touch()
    return dest, f"{what} (in {dest})"


def fmt_mb(n):
    return f"{n:,} B ({n / MB:.2f} MB)"


def print_report(r):
    c = r["cache"]
    print(f"cache: {c['what']}\n       {c['files']:,} files, {c['bytes'] / MB:.1f} MB; {r['reps']} reps each\n")
    print(f"{'':26s}{'ccpack':>14s}{'stock':>14s}{'ratio':>9s}")
    for k, label in (("create_s", "create (median s)"), ("restore_s", "restore (median s)")):
        print(f"{label:26s}{r[k]['ccpack']:14.3f}{r[k]['stock']:14.3f}{r[k]['ratio']:9.2f}")
    cpu = r["cpu_s"]
    for k, label in (("create", "  CPU s (user+sys)"), ("restore", "  CPU s (user+sys)")):
        print(f"{label:26s}{cpu[k + '_ccpack']:14.3f}{cpu[k + '_stock']:14.3f}{r['cpu_ratio'][k]:9.2f}  ({k})")
    print(f"{'archive size':26s}{fmt_mb(r['size_bytes']['ccpack'])}  vs stock {fmt_mb(r['size_bytes']['stock'])}")
    p = r["peak_rss_mib"]
    print(f"{'peak RSS (MiB)':26s}create {p['create_ccpack']:.1f}, restore {p['restore_ccpack']:.1f},"
          f" verify {p['verify']:.1f}, no-op {p['noop']:.1f}"
          f"  (stock: create {p['create_stock']:.1f}, restore {p['restore_stock']:.1f})")
    g = r["signing_ms"]
    print(f"{'signing (median ms)':26s}create {g['create_signed']:.1f} signed vs {g['create_unsigned']:.1f} unsigned"
          f" ({g['create_added']:+.1f}); restore {g['restore_checked']:.1f} checked vs {g['restore_unchecked']:.1f}"
          f" unchecked ({g['restore_added']:+.1f}); no-op {g['noop_checked']:.1f} vs {g['noop_unchecked']:.1f}"
          f" ({g['noop_added']:+.1f})")
    print(f"{'  CPU added (median ms)':26s}create {g['create_added_cpu']:+.1f}, restore {g['restore_added_cpu']:+.1f},"
          f" no-op {g['noop_added_cpu']:+.1f}")
    print(f"{'verify (median)':26s}{r['verify_s']:.3f} s")
    print(f"{'fingerprint (median)':26s}{r['fingerprint_ms']:.1f} ms  (python: {r['python']})")
    print(f"{'no-op restore (median)':26s}{r['noop_restore_ms']:.1f} ms  (fingerprint probed and compared)")
    print(f"{'restores into':26s}{r['restore_fs']}")
    for threads, f in (r["floor"] or {}).items():
        print(f"{'floor, ' + threads + ' thread(s)':26s}create {f['create_s']:.3f} s (+ syncfs {f['sync_s']:.3f} s);"
              f" ccpack restore / floor {r['restore_s']['ccpack'] / f['create_s']:.2f}")
    print("\ntargets:")
    for (text, passed), what in zip(report.cells(r["case"], r), ("create", "restore", "no-op restore", "peak RSS")):
        print(f"  {what:24s}{text:40s}{'' if passed is None else 'PASS' if passed else 'FAIL'}")


DEFAULT_REPS = {"fixture": 5, "100k": 3, "1m": 1}


def run_case(case, args, work, ccpack):
    """Measures one case: "fixture" (the real fixture, or --cache), "100k" or "1m" (synthetic)."""
    reps = args.reps or DEFAULT_REPS.get(case, 5)
    with contextlib.ExitStack() as stack:
        if case in SYNTHETIC:
            cache = stack.enter_context(synthetic_cache(case, work, GEN, log))
            what = f"synthetic cache (gen_synthetic_cache.py {' '.join(SYNTHETIC[case])}, in {cache})"
        else:
            cache, what = prepare_cache(args, work)
        log(f"{case}: using {what}")
        files, size = tree_stats(cache)
        r = measure(cache, work / "run", ccpack, reps, args.level)
    return {"case": case, "cache": {"what": what, "path": str(cache), "files": files, "bytes": size}, "reps": reps,
            "ccpack": ccpack, "level": args.level, **r}


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", help="folder holding inductor_cache and triton_cache (default: real fixture, else synthetic)")
    ap.add_argument("--reps", type=int, help="repetitions of each command (default: 5 fixture, 3 at 100k, 1 at 1M)")
    ap.add_argument("--ccpack", default=str(REPO / "build" / "ccpack"), help="ccpack binary (default: build/ccpack)")
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "ccpack-bench"),
                    help="scratch folder (default: %(default)s)")
    ap.add_argument("--level", help="passed to `ccpack create --level`")
    ap.add_argument("--python", default=sys.executable,
                    help="interpreter the fingerprint probes (default: this script's own, %(default)s)")
    ap.add_argument("--json", action="store_true", help="print the results as one JSON object")
    ap.add_argument("--restore-fs", choices=("fresh", "dir"), default="fresh" if freshfs.available() else "dir",
                    help="fresh: every restore into a new loop-mounted ext4 (default as root with mkfs.ext4); "
                         "dir: into folders of --workdir's filesystem (default here: %(default)s)")
    ap.add_argument("--delete-between-reps", action="store_true",
                    help="--restore-fs dir: delete earlier restore targets before each rep (default: move them aside)")
    ap.add_argument("--targets", action="store_true", help="measure the target cases (fixture, 100k, 1m) and "
                    "print the targets table with PASS/FAIL per cell, the machine and the date")
    ap.add_argument("--cases", help="comma-separated cases to measure (fixture, 100k, 1m; default: fixture, or all "
                    "three with --targets)")
    ap.add_argument("--check-baseline", nargs="?", const=str(BASELINE), metavar="FILE",
                    help="exit 1 when a ratio is more than 10%% worse than in FILE (default %(const)s)")
    ap.add_argument("--write-baseline", nargs="?", const=str(BASELINE), metavar="FILE",
                    help="write this run's ratios to FILE (default %(const)s)")
    return ap.parse_args()


def main():
    args = parse_args()
    # Killed (SIGTERM, Ctrl-C): unwind, so that the finally blocks unmount and remove the loop-mounted images.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    global DELETE_BETWEEN_REPS, PYTHON, FRESH_FS
    DELETE_BETWEEN_REPS = args.delete_between_reps
    FRESH_FS = args.restore_fs == "fresh"
    if FRESH_FS and not freshfs.available():
        print("--restore-fs fresh needs root, mkfs.ext4 and mount", file=sys.stderr)
        return 2
    PYTHON = args.python
    cases = args.cases.split(",") if args.cases else (["fixture", "100k", "1m"] if args.targets else ["fixture"])
    ccpack = shutil.which(args.ccpack) or args.ccpack
    work = Path(args.workdir).resolve()
    work.mkdir(parents=True, exist_ok=True)
    try:
        if not (os.path.isfile(ccpack) and os.access(ccpack, os.X_OK)):
            raise Failure(f"ccpack binary not found or not executable: {ccpack}")
        ccpack = os.path.abspath(ccpack)
        t0 = time.perf_counter()
        results = {c: run_case(c, args, work, ccpack) for c in cases}
        m = report.machine()
        table, all_pass = report.targets_table(results, m)
        regressions = report.check_baseline(args.check_baseline, results) if args.check_baseline else []
        with open(work / "last-results.json", "w") as f:  # every figure of the run, also after a text report
            json.dump({"machine": m, "cases": results, "regressions": regressions}, f, indent=2)
        if args.json:
            print(json.dumps({"machine": m, "cases": results, "targets_table": table, "all_pass": all_pass,
                              "regressions": regressions}, indent=2))
        else:
            for r in results.values():
                print_report(r)
                print()
            print(table)
            log(f"benchmark ran {time.perf_counter() - t0:.0f} s")
        if args.write_baseline:
            report.write_baseline(args.write_baseline, results, m)
            log(f"baseline written to {args.write_baseline}")
        for line in regressions:
            print(f"REGRESSION: {line}", file=sys.stderr)
        return 1 if regressions else 0
    except (Failure, Mismatch) as e:
        print(e, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
