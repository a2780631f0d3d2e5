#!/usr/bin/env python3
"""One table of ccpack against the stock tools: create, restore, no-op restore and peak RSS, per cache and CPU count.

Why: the performance targets are ratios to `tar | zstd -3 --long=27 -T0` (create) and `zstd -d | tar -x` (restore)
on the fixture and at 100k files, and a no-op restore (the pod restart) in milliseconds. On a shared machine only
alternating runs compared pair by pair are fair, and only one table that holds them all, with the command that
made it, can be quoted. The same script runs on a bare host (no compiler, no zstd CLI, no fixture) from the
portable package and a carried zstd binary, and under a CPU quota of 1 or 2 CPUs as an init container has.

How: for each case ("fixture": the real fixture when present, else --cache, else gen_synthetic_cache.py --scale 1,
a sample of the fixture's shape generated there; "100k": --files 100000) and each CPU count of --cpus ("all": no
limit; N: a cgroup CFS quota of N CPUs where one can be made, else taskset, as bench_quota.py does), --pairs pairs
of: create (ccpack signed, stock), restore into fresh folders (each into its own new ext4 when root can make one,
else a new folder of --workdir), then --noops no-op restores of ccpack's restored folders (their median is the
pair's). ccpack goes first in even pairs, stock in odd ones; `sync` and --settle seconds before each timed command.
Each command's clock starts once its shell is inside the limit (benchkit/timing.py). Reported: the median over
pairs of the per-pair wall ratio ccpack/stock, the median wall and CPU time (user+sys of the command and its
children, os.wait4) of each, the median of the per-pair CPU ratios, the median no-op, and the largest peak RSS.
The first ccpack restore of each case is compared with the source (benchkit/treecmp.py).
The restore floor (benchkit/floor.c: only creating the same folders and files from ccpack's tar stream, already
decompressed in memory, with one thread per CPU of the limit) runs in each pair after the restores, under the same
limit and into its own fresh ext4: its file creation time over stock's restore is the least a restore's ratio can
be on this machine's filesystem (--floor: built with the C compiler when there is one, or a prebuilt binary).
Decoding alone follows it: `zstd -d` of ccpack's archive to /dev/null under the same limit (one thread, every frame
in turn). Under one CPU, where a restore both decodes and creates the files on that CPU, the floor plus decoding
is about the least a restore can take.

Usage: bench_table.py [--cases fixture,100k] [--cpus all] [--pairs 7] [--ccpack BIN] [--zstd BIN] [--floor auto|off|BIN]
                      [--journal-mb MIB] [--json]
Exit status: 0 when it ran, 1 when a command failed or a restore did not match, 2 when a limit cannot be set here.
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402  (prepare_cache, tree_stats, warm_page_cache, Failure, REPO, GEN)
import bench_quota  # noqa: E402  (Limit, cgroup_hierarchy)
from benchkit import floor, freshfs, report  # noqa: E402
from benchkit.timing import timed  # noqa: E402
from benchkit.caches import synthetic_cache  # noqa: E402
from benchkit.treecmp import Mismatch, verify_in_child  # noqa: E402

MIB = 1024 * 1024


def log(msg):
    print(msg, file=sys.stderr, flush=True)


class NoLimit:
    """The machine as it is (--cpus all)."""
    cpus = "all"

    def argv(self, cmd):
        return cmd

    def describe(self):
        return f"no limit ({os.cpu_count()} CPUs)"

    def close(self):
        pass


class Commands:
    """The commands of one case: ccpack's and stock's create and restore, and ccpack's no-op restore."""

    def __init__(self, args, cache, work):
        self.args, self.cache, self.work = args, cache, work
        self.tar = work / "stream.tar"  # the floor's input (make_floor_input)
        self.ck, self.st, self.key = work / "out.ccpack", work / "out.tar.zst", work / "bench.key"
        subprocess.run([args.ccpack, "keygen", "-q", "--out", str(self.key)], check=True)
        z = shlex.quote(args.zstd)
        self.stock_create = ["sh", "-c", f"tar -C {shlex.quote(str(cache))} -c inductor_cache triton_cache"
                                         f" | {z} -q -3 --long=27 -T0 > {shlex.quote(str(self.st))}"]

    def ccpack_create(self):
        return [self.args.ccpack, "create", "--inductor-dir", str(self.cache / "inductor_cache"), "--triton-dir",
                str(self.cache / "triton_cache"), "-q", "--python", self.args.python, "-o", str(self.ck),
                "--sign-key", str(self.key)]

    def ccpack_restore(self, into):
        return [self.args.ccpack, "restore", str(self.ck), "--inductor-dir", str(into / "inductor"), "--triton-dir",
                str(into / "triton"), "-q", "--python", self.args.python, "--trust", f"{self.key}.pub"]

    def make_floor_input(self):
        """ccpack's archive decompressed by zstd into its tar stream, what the floor program reads."""
        subprocess.run([self.args.zstd, "-q", "-d", "-f", "--long=27", str(self.ck), "-o", str(self.tar)], check=True)

    def floor(self, into, threads):
        """The floor's command, without syncfs: its one line of figures goes to a file (read by floor_seconds)."""
        cmd = shlex.join(floor.argv(self.args.floor_exe, self.tar, into, threads, sync=False))
        return ["sh", "-c", f"{cmd} > {shlex.quote(str(self.work / 'floor.out'))}"]

    def decompress(self, archive):
        """Shell text: stock zstd decoding `archive` to its standard output."""
        return f"{shlex.quote(self.args.zstd)} -q -d --long=27 -c {shlex.quote(str(archive))}"

    def decode(self):
        """Decoding alone: ccpack's archive through stock zstd into /dev/null."""
        return ["sh", "-c", f"{self.decompress(self.ck)} > /dev/null"]

    def floor_seconds(self):
        return floor.parse((self.work / "floor.out").read_text())[0]

    def stock_restore(self, into):
        return ["sh", "-c", f"{self.decompress(self.st)} | tar -x -C {shlex.quote(str(into))}"]


@contextlib.contextmanager
def fresh_folder(work, name, need):
    """An empty folder to restore into: a new ext4 when this machine can make one, else a new folder of work."""
    if need is not None:
        with freshfs.fresh_ext4(work, name, *need) as mnt:
            yield mnt
        return
    d = work / name
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def one_pair(i, c, limit, need, verify):
    """One pair of creates, one of restores and the no-ops: {name: (wall, cpu, rss)}."""
    s, settle = {}, c.args.settle
    order = ("ccpack", "stock") if i % 2 == 0 else ("stock", "ccpack")
    for who in order:
        (c.ck if who == "ccpack" else c.st).unlink(missing_ok=True)
        s[f"create_{who}"] = timed(c.ccpack_create() if who == "ccpack" else c.stock_create, limit, settle)
    with contextlib.ExitStack() as stack:
        for who in order:
            into = stack.enter_context(fresh_folder(c.work, f"restore-{who}", need))
            s[f"restore_{who}"] = timed(c.ccpack_restore(into) if who == "ccpack" else c.stock_restore(into), limit, settle)
            if who == "ccpack":
                if verify:
                    verify_in_child([(c.cache / "inductor_cache", into / "inductor"), (c.cache / "triton_cache", into / "triton")])
                noops = [timed(c.ccpack_restore(into), limit, 0.2) for _ in range(c.args.noops)]
                s["noop"] = sorted(noops)[len(noops) // 2]
    if c.args.floor_exe is not None:
        with fresh_folder(c.work, "restore-floor", need) as into:
            threads = os.cpu_count() if limit.cpus == "all" else int(limit.cpus)
            timed(c.floor(into, threads), limit, settle)
            s["floor"] = c.floor_seconds()
    s["decode"] = timed(c.decode(), limit, settle)[0]
    return s


def run_limit(c, limit, need):
    samples = []
    for i in range(c.args.pairs):
        s = one_pair(i, c, limit, need, verify=not samples)
        samples.append(s)
        log(f"  {limit.cpus} CPUs pair {i + 1}/{c.args.pairs}: create {s['create_ccpack'][0]:.3f} vs "
            f"{s['create_stock'][0]:.3f} s, restore {s['restore_ccpack'][0]:.3f} vs {s['restore_stock'][0]:.3f} s, "
            f"no-op {s['noop'][0] * 1000:.1f} ms" + (f", floor {s['floor']:.3f} s" if "floor" in s else "") +
            f", decode {s['decode']:.3f} s")
    return samples


def summary(samples):
    med = statistics.median
    row = {}
    for op in ("create", "restore"):
        c, s = [x[f"{op}_ccpack"] for x in samples], [x[f"{op}_stock"] for x in samples]
        row[op] = {"ratio": med(a[0] / b[0] for a, b in zip(c, s)), "ccpack_s": med(a[0] for a in c),
                   "stock_s": med(b[0] for b in s), "ccpack_cpu_s": med(a[1] for a in c),
                   "stock_cpu_s": med(b[1] for b in s), "cpu_ratio": med(a[1] / b[1] for a, b in zip(c, s)),
                   "ccpack_rss_mib": max(a[2] for a in c), "stock_rss_mib": max(b[2] for b in s)}
    if all("floor" in x for x in samples):
        row["floor"] = {"ratio": med(x["floor"] / x["restore_stock"][0] for x in samples),
                        "s": med(x["floor"] for x in samples)}
    row["decode"] = {"ratio": med(x["decode"] / x["restore_stock"][0] for x in samples),
                     "s": med(x["decode"] for x in samples)}
    row["noop"] = {"ms": med(x["noop"][0] for x in samples) * 1000, "cpu_ms": med(x["noop"][1] for x in samples) * 1000,
                   "rss_mib": max(x["noop"][2] for x in samples)}
    return row


@contextlib.contextmanager
def cache_of(case, args, work):
    if case == "100k":
        with synthetic_cache(case, work, bench.GEN, log) as cache:
            yield cache, "100k files (gen_synthetic_cache.py --files 100000)"
    elif case == "fixture":
        cache, what = bench.prepare_cache(args, work)
        yield cache, "real fixture" if "real fixture" in what else ("given cache" if args.cache else
                                                                    "fixture-shaped sample (gen_synthetic_cache.py --scale 1)")
    else:
        raise bench.Failure(f"unknown case {case!r} (fixture, 100k)")


def run_case(case, args, work, limits):
    with cache_of(case, args, work) as (cache, what):
        files, size = bench.tree_stats(cache)
        log(f"{case}: {what}, {files:,} files, {size / 1e6:.0f} MB")
        run_dir = work / f"table-{case}"
        shutil.rmtree(run_dir, ignore_errors=True)
        run_dir.mkdir(parents=True)
        c = Commands(args, cache, run_dir)
        bench.warm_page_cache(cache)
        subprocess.run(c.ccpack_create(), check=True)  # untimed: the first create after idle pays faults
        if args.floor_exe is not None:
            c.make_floor_input()
        fp = freshfs.footprint(cache)
        # (size, inodes, journal MiB): room for the journal on top of --room times the cache's footprint
        need = ((int(fp[0] * args.room) + args.journal_mb * MIB, fp[1], args.journal_mb or None)
                if freshfs.available() and not args.plain_folders else None)
        rows = {}
        for limit in limits:
            log(f"  under {limit.describe()}")
            load = os.getloadavg()[0]
            rows[str(limit.cpus)] = {**summary(run_limit(c, limit, need)), "limit": limit.describe(),
                                     "load": [load, os.getloadavg()[0]]}
        shutil.rmtree(run_dir, ignore_errors=True)
    return {"what": what, "files": files, "bytes": size, "fresh_ext4": need is not None, "rows": rows}


def print_table(results, args):
    m = report.machine()
    print(f"{m['cpu']}, {m['cores']} CPUs, Linux {m['kernel']}, {m['date']}; ccpack {args.ccpack}, zstd {args.zstd}")
    print(f"{args.pairs} alternating pairs per row; ratios are medians of per-pair ratios ccpack/stock (wall; CPU = "
          f"user+sys); no-op: median of {args.noops} per pair, then over pairs")
    print("| cache | CPUs | create (wall; CPU) | restore (wall; CPU) | restore floor | decode | no-op restore | peak RSS "
          "create / restore / no-op (stock) | load |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results.values():
        for cpus, row in r["rows"].items():
            c, s, n = row["create"], row["restore"], row["noop"]
            print(f"| {r['what']}, {r['files']:,} files, {r['bytes'] / 1e6:.0f} MB | {cpus} | {c['ratio']:.2f}x "
                  f"({c['ccpack_s']:.2f} vs {c['stock_s']:.2f} s; CPU {c['cpu_ratio']:.2f}x: {c['ccpack_cpu_s']:.2f} vs "
                  f"{c['stock_cpu_s']:.2f} s) | {s['ratio']:.2f}x ({s['ccpack_s']:.2f} vs {s['stock_s']:.2f} s; CPU "
                  f"{s['cpu_ratio']:.2f}x: {s['ccpack_cpu_s']:.2f} vs {s['stock_cpu_s']:.2f} s) | "
                  + (f"{row['floor']['ratio']:.2f}x ({row['floor']['s']:.2f} s)" if "floor" in row else "-") +
                  f" | {row['decode']['ratio']:.2f}x ({row['decode']['s']:.2f} s) | {n['ms']:.1f} ms "
                  f"(CPU {n['cpu_ms']:.1f} ms) | {c['ccpack_rss_mib']:.0f} / {s['ccpack_rss_mib']:.0f} / "
                  f"{n['rss_mib']:.0f} MiB ({c['stock_rss_mib']:.0f} / {s['stock_rss_mib']:.0f}) | "
                  f"{row['load'][0]:.1f} -> {row['load'][1]:.1f} |")
    into = {r["fresh_ext4"] for r in results.values()}
    journal = f"{args.journal_mb} MiB journal" if args.journal_mb else "mkfs's default journal for its size"
    print(f"restores into: {f'a fresh ext4 each ({journal})' if into == {True} else 'a fresh folder each'}; "
          f"limits: {'; '.join(sorted({row['limit'] for r in results.values() for row in r['rows'].values()}))}")
    print("restore floor: benchkit/floor.c creating the same entries from the decompressed stream, one thread per CPU; "
          "its time over stock's restore (median of per-pair ratios) and its median time; -: not measured")
    print("decode: zstd -d of ccpack's archive into /dev/null under the same limit, over stock's restore, and its median")
    print("command: " + shlex.join([sys.executable] + sys.argv))


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default="fixture,100k", help="fixture and/or 100k (default: %(default)s)")
    ap.add_argument("--cpus", default="all", help="comma-separated CPU counts, 'all' for no limit (default: %(default)s)")
    ap.add_argument("--pairs", type=int, default=7, help="alternating pairs per row (default: %(default)s)")
    ap.add_argument("--noops", type=int, default=5, help="no-op restores per pair (default: %(default)s)")
    ap.add_argument("--ccpack", default=str(bench.REPO / "build" / "ccpack"), help="ccpack binary (default: build/ccpack)")
    ap.add_argument("--zstd", default="zstd", help="the zstd program of the stock commands (default: %(default)s)")
    ap.add_argument("--python", default=sys.executable, help="interpreter the fingerprint probes (default: %(default)s)")
    ap.add_argument("--cache", help="folder holding inductor_cache and triton_cache (the fixture case)")
    ap.add_argument("--settle", type=float, default=bench.SETTLE_S, help="seconds after sync before each timed command")
    ap.add_argument("--room", type=float, default=4.0, help="each fresh ext4 is this many times the cache's footprint")
    ap.add_argument("--journal-mb", type=int, default=0,
                    help="each fresh ext4's journal in MiB (default: 0, mkfs's default for the image's size: 64 MiB "
                         "at 100k files, which their folders fill; 1024 is what mkfs gives a node's disk of 128 GiB "
                         "or more, as bench_quota.py uses)")
    ap.add_argument("--plain-folders", action="store_true", help="restore into new folders of --workdir, never a new ext4")
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "ccpack-bench"),
                    help="scratch folder; synthetic caches are kept there (default: %(default)s)")
    ap.add_argument("--floor", default="auto",
                    help="the restore floor program: auto (benchkit/floor.c built with the C compiler, when there is "
                         "one), off, or a prebuilt floor binary (default: %(default)s)")
    ap.add_argument("--json", action="store_true", help="print every figure as one JSON object")
    args = ap.parse_args()
    for name in ("ccpack", "zstd"):
        found = shutil.which(getattr(args, name))
        if found is None:
            ap.error(f"--{name} {getattr(args, name)}: not found or not executable")
        setattr(args, name, os.path.abspath(found))
    args.floor_exe = None
    if args.floor not in ("auto", "off"):
        if shutil.which(args.floor) is None:
            ap.error(f"--floor {args.floor}: not found or not executable")
        args.floor_exe = os.path.abspath(shutil.which(args.floor))
    return args


def make_limits(spec):
    """The limits of --cpus; raises SystemExit(2) when a CPU count cannot be enforced here."""
    counts = [c.strip() for c in spec.split(",") if c.strip()]
    if all(c == "all" for c in counts):
        return [NoLimit() for _ in counts]
    hierarchy = bench_quota.cgroup_hierarchy()
    if hierarchy is None and shutil.which("taskset") is None:
        log("a CPU count needs a cgroup CPU quota (root, cgroup cpu controller) or taskset")
        raise SystemExit(2)
    method = "cgroup" if hierarchy else "taskset"
    return [NoLimit() if c == "all" else bench_quota.Limit(method, int(c), hierarchy, 102400) for c in counts]


def main():
    args = parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwind: unmount the images, remove the cgroups
    limits = make_limits(args.cpus)
    work = Path(args.workdir).resolve()
    work.mkdir(parents=True, exist_ok=True)
    if args.floor == "auto":
        args.floor_exe = floor.build(work)
        if args.floor_exe is None:
            log("no C compiler: the restore floor is not measured (--floor BIN takes a prebuilt one)")
    try:
        results = {case: run_case(case, args, work, limits) for case in args.cases.split(",")}
    except (bench.Failure, Mismatch, subprocess.CalledProcessError) as e:
        log(str(e))
        return 1
    finally:
        for limit in limits:
            limit.close()
    if args.json:
        print(json.dumps({"machine": report.machine(), "command": [sys.executable] + sys.argv, "cases": results}, indent=2))
    else:
        print_table(results, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
