#!/usr/bin/env python3
"""Benchmark ccpack against the stock `tar | zstd --long` pipeline on a torch.compile cache.

Why: ccpack has numeric targets (archive no larger than stock, create no slower, restore at most
half the stock time, no-op restore < 100 ms including the fingerprint check, peak RSS < 512 MiB). This script measures them the same
way every time, on the real fixture when present, and checks that a restore gives back the source.

How: the cache is --cache DIR, else the real fixture <repo>/../shared/fixtures/real-cache-h200.tar.xz
unpacked once into WORKDIR/fixture, else a synthetic cache from gen_synthetic_cache.py --scale 1.
Every repetition runs ccpack and then stock (alternating), each after `sync` + 0.5 s (not timed);
wall time is time.perf_counter() around the child, peak RSS is ru_maxrss from os.wait4() (for a
shell pipeline or `tar -I zstd` that is the max over the children it waited for). Restores go into
fresh empty folders, removed before the timed part. After the first ccpack restore the trees are
compared with the source (bytes and modes; a __grp__*.json may differ only by its absolute paths
being rewritten to the new triton folder). Medians, ratios, sizes, RSS and PASS/FAIL per target are
printed as a table, or as JSON with --json (progress goes to stderr).
Signing: the archive that is restored is signed (create --sign-key, a key made with `ccpack keygen`) and
restored with --trust, as in production; each rep also times an unsigned create and a restore and no-op restore
with --allow-unsigned (no signature check), and the report shows what signing and checking add, in wall time
and in CPU time (user + system: the part of the cost that another process's load does not blur).

Every restore probes the environment fingerprint (one Python call) and compares it with the archive's; `ccpack
fingerprint` alone is timed too. The interpreter is --python (default: this script's own, sys.executable, so
that a version-manager shim such as pyenv's, ~0.4 s a call, is not what is measured).
--scaling measures synthetic caches of 10k files, 100k files and --scale 3 (3 reps by default).
Exit status: 0 when it ran (failing targets are reported, not an error), 1 when a command failed or
a restore did not match.
"""
import argparse
import filecmp
import json
import os
import shlex
import shutil
import stat
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO.parent / "shared" / "fixtures" / "real-cache-h200.tar.xz"
GEN = Path(__file__).resolve().parent / "gen_synthetic_cache.py"
MB, MIB = 1e6, 1024 * 1024
DELETE_BETWEEN_REPS = False


class Failure(Exception):
    pass


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# CPU seconds (user + system, from os.wait4) of the last run(): what signing and checking add is far below the
# wall-clock noise of a shared machine, and CPU time is what they cost.
LAST_CPU = 0.0


def run(cmd, timed=True):
    """Run cmd (argv list); return (wall seconds, peak RSS MiB). Raise Failure on a non-zero exit."""
    global LAST_CPU
    if timed:
        subprocess.run(["sync"], check=False)
        time.sleep(0.5)
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


def listing(root):
    """Everything under root but ccpack's own restore marker, which is not part of the cache."""
    out = {}
    for dirpath, dirs, names in os.walk(root):
        for n in dirs + names:
            if dirpath == str(root) and n == ".ccpack-marker.json":
                continue
            p = os.path.join(dirpath, n)
            out[os.path.relpath(p, root)] = os.lstat(p)
    return out


def grp_rewritten_ok(src, dst, dst_root):
    """True if dst is src with its child paths rewritten to <dst_root>/<HASH>/<file>."""
    try:
        a, b = json.loads(Path(src).read_bytes()), json.loads(Path(dst).read_bytes())
        ca, cb = a["child_paths"], b["child_paths"]
    except (ValueError, KeyError, TypeError):
        return False
    roots = {os.path.abspath(dst_root), os.path.realpath(dst_root)}
    return ca.keys() == cb.keys() and all(
        Path(cb[k]).parts[-2:] == Path(ca[k]).parts[-2:] and str(Path(cb[k]).parent.parent) in roots for k in ca)


def verify(pairs):
    """Compare restored trees with their sources; return the number of rewritten __grp__ files."""
    problems, rewritten = [], 0
    for src, dst in pairs:
        a, b = listing(src), listing(dst)
        problems += [f"missing in restore: {dst}/{p}" for p in sorted(a.keys() - b.keys())]
        problems += [f"extra in restore: {dst}/{p}" for p in sorted(b.keys() - a.keys())]
        for rel in sorted(a.keys() & b.keys()):
            sa, sb = a[rel], b[rel]
            s, d = os.path.join(src, rel), os.path.join(dst, rel)
            if stat.S_IFMT(sa.st_mode) != stat.S_IFMT(sb.st_mode):
                problems.append(f"file type differs: {d}")
            elif stat.S_ISLNK(sa.st_mode):
                if os.readlink(s) != os.readlink(d):
                    problems.append(f"symlink target differs: {d}")
            elif stat.S_IMODE(sa.st_mode) != stat.S_IMODE(sb.st_mode):
                problems.append(f"mode differs: {d} ({oct(sa.st_mode)} vs {oct(sb.st_mode)})")
            elif stat.S_ISREG(sa.st_mode) and not filecmp.cmp(s, d, shallow=False):
                if os.path.basename(rel).startswith("__grp__") and grp_rewritten_ok(s, d, dst):
                    rewritten += 1
                else:
                    problems.append(f"content differs: {d}")
    if problems:
        raise Failure("RESTORE MISMATCH (%d problems):\n  " % len(problems) + "\n  ".join(problems[:30]))
    return rewritten


PYTHON = sys.executable


def measure(cache, work, ccpack, reps, level=None, noop=True):
    """Time ccpack vs stock create/restore on cache (a folder holding inductor_cache, triton_cache)."""
    global TRASH
    TRASH = None
    fresh_dir(work)
    if not DELETE_BETWEEN_REPS:
        TRASH = work / "trash"
    ck, st, cu = work / "out.ccpack", work / "out.tar.zst", work / "unsigned.ccpack"
    tc, ts = work / "restore-ccpack", work / "restore-stock"
    key = work / "bench.key"
    run([ccpack, "keygen", "-q", "--out", str(key)], timed=False)
    create_base = [ccpack, "create", "--inductor-dir", str(cache / "inductor_cache"),
                   "--triton-dir", str(cache / "triton_cache"), "-q"] + (["--level", level] if level else [])
    create_ck = create_base + ["-o", str(ck), "--sign-key", str(key)]
    create_unsigned = create_base + ["-o", str(cu)]
    create_st = ["sh", "-c", f"tar -C {shlex.quote(str(cache))} -c inductor_cache triton_cache"
                             f" | zstd -q -3 --long=27 -T0 > {shlex.quote(str(st))}"]
    restore_base = [ccpack, "restore", str(ck), "--inductor-dir", str(tc / "inductor"), "--triton-dir", str(tc / "triton"), "-q",
                    "--python", PYTHON]
    restore_ck = restore_base + ["--trust", f"{key}.pub"]
    restore_unchecked = restore_base + ["--allow-unsigned"]
    fingerprint_ck = [ccpack, "fingerprint", "--python", PYTHON, "--inductor-dir", str(tc / "inductor"),
                      "--triton-dir", str(tc / "triton")]
    restore_st = ["tar", "-I", "zstd --long=27", "-xf", str(st), "-C", str(ts)]
    t = {k: [] for k in ("create_ccpack", "create_unsigned", "create_stock", "restore_ccpack", "restore_unchecked",
                         "restore_stock", "noop", "noop_unchecked", "fingerprint")}
    rss = {k: [] for k in ("create_ccpack", "create_stock", "restore_ccpack", "restore_stock")}
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
    for _ in range(reps):
        ck.unlink(missing_ok=True)
        timed("create_ccpack", create_ck)
        cu.unlink(missing_ok=True)
        timed("create_unsigned", create_unsigned)
        st.unlink(missing_ok=True)
        timed("create_stock", create_st)
    rewritten = None
    for _ in range(reps):
        fresh_dir(tc, "inductor", "triton")
        timed("restore_ccpack", restore_ck)
        if rewritten is None:
            rewritten = verify([(cache / "inductor_cache", tc / "inductor"), (cache / "triton_cache", tc / "triton")])
            log(f"  restore verified equal to the source ({rewritten} __grp__ json with rewritten paths)")
        fresh_dir(tc, "inductor", "triton")
        timed("restore_unchecked", restore_unchecked)
        fresh_dir(ts)
        timed("restore_stock", restore_st)
    for _ in range(5 * reps if noop else 0):  # cheap, and the difference is small: more reps
        timed("noop", restore_ck)
        timed("noop_unchecked", restore_unchecked)
        timed("fingerprint", fingerprint_ck)
    med = {k: statistics.median(v) for k, v in t.items() if v}
    mcpu = {k: statistics.median(v) for k, v in cpu.items() if v}
    res = {
        "create_s": {"ccpack": med["create_ccpack"], "stock": med["create_stock"],
                     "ratio": med["create_ccpack"] / med["create_stock"]},
        "restore_s": {"ccpack": med["restore_ccpack"], "stock": med["restore_stock"],
                      "ratio": med["restore_ccpack"] / med["restore_stock"]},
        "size_bytes": {"ccpack": ck.stat().st_size, "stock": st.stat().st_size},
        "peak_rss_mib": {k: max(v) for k, v in rss.items()},
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
    TRASH = None
    shutil.rmtree(work, ignore_errors=True)
    return res


def targets(r):
    rss = max(r["peak_rss_mib"]["create_ccpack"], r["peak_rss_mib"]["restore_ccpack"])
    rows = [("size <= stock", r["size_bytes"]["ccpack"], r["size_bytes"]["stock"]),
            ("create ratio <= 1.0", r["create_s"]["ratio"], 1.0),
            ("restore ratio <= 0.5", r["restore_s"]["ratio"], 0.5),
            ("no-op restore < 100 ms", r["noop_restore_ms"], 100.0),
            ("peak RSS < 512 MiB", rss, 512.0)]
    return {name: {"value": v, "limit": lim, "pass": v <= lim if "<=" in name else v < lim} for name, v, lim in rows}


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
    print(f"{'archive size':26s}{fmt_mb(r['size_bytes']['ccpack'])}  vs stock {fmt_mb(r['size_bytes']['stock'])}")
    p = r["peak_rss_mib"]
    print(f"{'peak RSS (MiB)':26s}create {p['create_ccpack']:.1f}, restore {p['restore_ccpack']:.1f}"
          f"  (stock: create {p['create_stock']:.1f}, restore {p['restore_stock']:.1f})")
    print(f"{'no-op restore (median)':26s}{r['noop_restore_ms']:.1f} ms")
    g = r["signing_ms"]
    print(f"{'signing (median ms)':26s}create {g['create_signed']:.1f} signed vs {g['create_unsigned']:.1f} unsigned"
          f" ({g['create_added']:+.1f}); restore {g['restore_checked']:.1f} checked vs {g['restore_unchecked']:.1f}"
          f" unchecked ({g['restore_added']:+.1f}); no-op {g['noop_checked']:.1f} vs {g['noop_unchecked']:.1f}"
          f" ({g['noop_added']:+.1f})")
    print(f"{'  CPU added (median ms)':26s}create {g['create_added_cpu']:+.1f}, restore {g['restore_added_cpu']:+.1f},"
          f" no-op {g['noop_added_cpu']:+.1f}\n\ntargets:")
    print(f"{'fingerprint (median)':26s}{r['fingerprint_ms']:.1f} ms  (python: {r['python']})")
    print(f"{'no-op restore (median)':26s}{r['noop_restore_ms']:.1f} ms  (fingerprint probed and compared)\n\ntargets:")
    for name, t in r["targets"].items():
        v, lim = t["value"], t["limit"]
        shown = f"{v / MB:.2f} MB vs {lim / MB:.2f} MB" if name.startswith("size") else f"{v:.3f} (limit {lim:g})"
        print(f"  {name:24s}{shown:32s}{'PASS' if t['pass'] else 'FAIL'}")


def scaling(args, work, ccpack, reps):
    rows = []
    for label, gen_args in (("10k files", ["--files", "10000"]), ("100k files", ["--files", "100000"]),
                            ("scale 3", ["--scale", "3"])):
        cache = work / "scaling-cache"
        fresh_dir(cache)
        log(f"generating synthetic cache: {label}")
        run([sys.executable, str(GEN), str(cache)] + gen_args, timed=False)
        files, size = tree_stats(cache)
        log(f"  {files:,} files, {size / MB:.1f} MB")
        r = measure(cache, work / "run", ccpack, reps, args.level, noop=False)
        shutil.rmtree(cache, ignore_errors=True)
        gb = size / 1e9
        rows.append({"cache": label, "files": files, "bytes": size,
                     "create_s": r["create_s"]["ccpack"], "restore_s": r["restore_s"]["ccpack"],
                     "stock_create_s": r["create_s"]["stock"], "stock_restore_s": r["restore_s"]["stock"],
                     "create_s_per_gb": r["create_s"]["ccpack"] / gb, "restore_s_per_gb": r["restore_s"]["ccpack"] / gb,
                     "size_bytes": r["size_bytes"], "peak_rss_mib": r["peak_rss_mib"]})
    return rows


def print_scaling(rows, reps):
    print(f"scaling (synthetic caches, median of {reps} reps)\n")
    hdr = ("cache", "files", "bytes", "create s", "restore s", "stock create s", "stock restore s",
           "create s/GB", "restore s/GB")
    print("".join(f"{h:>16s}" for h in hdr))
    for r in rows:
        print(f"{r['cache']:>16s}{r['files']:>16,}{r['bytes']:>16,}" + "".join(
            f"{r[k]:16.3f}" for k in ("create_s", "restore_s", "stock_create_s", "stock_restore_s",
                                      "create_s_per_gb", "restore_s_per_gb")))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", help="folder holding inductor_cache and triton_cache (default: real fixture, else synthetic)")
    ap.add_argument("--reps", type=int, help="repetitions of each command (default 5; 3 with --scaling)")
    ap.add_argument("--ccpack", default=str(REPO / "build" / "ccpack"), help="ccpack binary (default: build/ccpack)")
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "ccpack-bench"),
                    help="scratch folder (default: %(default)s)")
    ap.add_argument("--level", help="passed to `ccpack create --level`")
    ap.add_argument("--python", default=sys.executable,
                    help="interpreter the fingerprint probes (default: this script's own, %(default)s)")
    ap.add_argument("--json", action="store_true", help="print the results as one JSON object")
    ap.add_argument("--delete-between-reps", action="store_true",
                    help="delete earlier restore targets before each rep (default: move them aside, delete at the end)")
    ap.add_argument("--scaling", action="store_true", help="measure synthetic caches of 10k files, 100k files, --scale 3")
    args = ap.parse_args()
    global DELETE_BETWEEN_REPS, PYTHON
    DELETE_BETWEEN_REPS = args.delete_between_reps
    PYTHON = args.python
    log("restore targets of earlier reps are " + ("deleted before each rep" if DELETE_BETWEEN_REPS else "moved aside and deleted after timing"))
    reps = args.reps or (3 if args.scaling else 5)
    ccpack = shutil.which(args.ccpack) or args.ccpack
    work = Path(args.workdir).resolve()
    work.mkdir(parents=True, exist_ok=True)
    try:
        if not (os.path.isfile(ccpack) and os.access(ccpack, os.X_OK)):
            raise Failure(f"ccpack binary not found or not executable: {ccpack}")
        ccpack = os.path.abspath(ccpack)
        if args.scaling:
            rows = scaling(args, work, ccpack, reps)
            if args.json:
                print(json.dumps({"reps": reps, "rows": rows}, indent=2))
            else:
                print_scaling(rows, reps)
            return 0
        cache, what = prepare_cache(args, work)
        log(f"using {what}")
        files, size = tree_stats(cache)
        r = measure(cache, work / "run", ccpack, reps, args.level)
        r = {"cache": {"what": what, "path": str(cache), "files": files, "bytes": size}, "reps": reps,
             "ccpack": ccpack, "level": args.level, **r}
        r["targets"] = targets(r)
        r["all_pass"] = all(t["pass"] for t in r["targets"].values())
        if args.json:
            print(json.dumps(r, indent=2))
        else:
            print_report(r)
        return 0
    except Failure as e:
        print(e, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
