#!/usr/bin/env python3
"""Restore as an init container does: ccpack restore against `tar -I 'zstd --long=27' -x` under a CPU limit.

Why: a fleet restores in init containers with `resources.limits.cpu: 1` or `2`, a CFS quota on a machine with
more cores, into an empty volume. What is fast with every core (scripts/bench/bench.py) must not be slower than
stock there, and only a run under the same limit, in alternation, shows it.

How: the cache ("fixture": the real fixture, else --cache; "100k": gen_synthetic_cache.py --files 100000, as in
bench.py) is packed once by each tool (ccpack create signed, `tar | zstd -3 --long=27`). Then for each CPU count
of --cpus, --pairs pairs of restores, ccpack first in even pairs and tar first in odd ones, each restore into a
freshly made ext4 (benchkit/freshfs.py; made and mounted before the timed part) after `sync` and --settle
seconds. The filesystem has --room times the space the cache needs (benchkit's footprint: its blocks plus a
quarter and 256 MiB; default 4x), as a new volume on a node's disk has: ext4 makes every writer wait for the
writeback of the whole filesystem once the dirty data pass half its free space (ext4_nonda_switch), and in a
filesystem just big enough (--room 1) both tools then wait on the disk, ccpack's restore of the real fixture
for 1-2.5 s instead of 0.35 s, tar's for 1.3-1.7 s instead of 0.8 s (2-core dev VM, 2-CPU quota). Its journal
is --journal-mb, 1 GiB by default, what mkfs gives a node's disk of 128 GiB or more: with the 64 MiB journal
mkfs gives a 5 GB image, 100k files fill it and the creating process itself writes the checkpoint back
(jbd2_log_do_checkpoint, in openat; ccpack's 100k restore at one CPU 4.7 s instead of 3.9 s, tar's 5.6 s
instead of 4.4 s). The limit:
  cgroup   (root, a cgroup v1 `cpu` hierarchy or a v2 tree with the cpu controller) a cgroup of its own per CPU
           count, with a CFS quota of N CPUs (cpu.cfs_quota_us = N * cpu.cfs_period_us, or cpu.max "N*P P"); each
           restore is moved into it before it starts (so are its children: zstd, the fingerprint's Python). Its
           weight (--shares: v1 cpu.shares, v2 cpu.weight scaled from it) is high by default, as for a pod whose
           CPU request equals its limit on a node that is not overcommitted: then the quota is what limits the
           restore, not other processes of a shared machine (on the 2-core dev VM, with a dozen compilers running,
           a restore at the default weight waited 3-5 s to run 0.6 s of CPU); --shares 1024 is the default weight;
  taskset  otherwise, `taskset -c 0` / `-c 0-1`: N cores of the machine's own.
The report gives, per cache and CPU count, the median over pairs of the wall ratio ccpack/tar, the median wall
and CPU time (user + system, from os.wait4, children included) of each tool, the method used and the load
average before and after (a shared machine: alternation is what makes the ratio fair). The first ccpack restore
is compared with the source (benchkit/treecmp.py).

Usage: bench_quota.py [--cases fixture,100k] [--cpus 1,2] [--pairs 7] [--method auto|cgroup|taskset] [--room 4]
                      [--journal-mb 1024] [--shares 102400] [--json]
Exit status: 0 when it ran, 1 when a command failed or a restore did not match, 2 when no limit can be set here.
"""
import argparse
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402  (prepare_cache, tree_stats, warm_page_cache, GEN)
from benchkit import freshfs, timing  # noqa: E402
from benchkit.caches import SYNTHETIC, synthetic_cache  # noqa: E402
from benchkit.treecmp import Mismatch, verify_in_child  # noqa: E402

CGROUP_ROOT = Path("/sys/fs/cgroup")
PERIOD_US = 100_000
ROOM = 4.0  # --room, for the report
JOURNAL = "1024 MiB"  # --journal-mb, for the report


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def cgroup_hierarchy():
    """("v1", folder of the cpu hierarchy) or ("v2", the cgroup2 mount) where this process may make cgroups."""
    if os.geteuid() != 0:
        return None
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            fields, sup = left.split(), right.split()
            if len(sup) >= 3 and sup[0] == "cgroup" and "cpu" in sup[2].split(","):
                return "v1", Path(fields[4])
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            if right.split()[:1] == ["cgroup2"]:
                mnt = Path(left.split()[4])
                if "cpu" in (mnt / "cgroup.controllers").read_text().split():
                    return "v2", mnt
    return None


class Limit:
    """Runs commands on `cpus` CPUs: in a cgroup with that CFS quota (method "cgroup"), or under taskset."""

    def __init__(self, method, cpus, hierarchy=None, shares=1024):
        self.method, self.cpus, self.dir, self.shares = method, cpus, None, shares
        if method == "cgroup":
            version, mnt = hierarchy
            self.dir = mnt / f"ccpack-bench-{os.getpid()}-{cpus}cpu"
            self.dir.mkdir()
            if version == "v1":
                (self.dir / "cpu.cfs_period_us").write_text(str(PERIOD_US))
                (self.dir / "cpu.cfs_quota_us").write_text(str(cpus * PERIOD_US))
                (self.dir / "cpu.shares").write_text(str(shares))
            else:
                with contextlib.suppress(OSError):  # already on where the parent has it
                    (mnt / "cgroup.subtree_control").write_text("+cpu")
                (self.dir / "cpu.max").write_text(f"{cpus * PERIOD_US} {PERIOD_US}")
                (self.dir / "cpu.weight").write_text(str(max(1, min(10000, shares * 100 // 1024))))

    def describe(self):
        if self.method == "taskset":
            return f"taskset -c {self.cpu_list()}"
        return f"cgroup {self.dir} (CFS quota {self.cpus * PERIOD_US} us per {PERIOD_US} us, shares {self.shares})"

    def cpu_list(self):
        return "0" if self.cpus == 1 else f"0-{self.cpus - 1}"

    def argv(self, cmd):
        return ["taskset", "-c", self.cpu_list()] + cmd if self.method == "taskset" else cmd

    def close(self):
        if self.dir is not None:
            for _ in range(50):  # the last child may take a moment to leave
                try:
                    self.dir.rmdir()
                    return
                except OSError:
                    time.sleep(0.1)


def timed(cmd, limit, settle):
    """(wall s, CPU s) of cmd run under limit, after sync and `settle` seconds (benchkit/timing.py: the limit is
    entered before the clock starts). Raises bench.Failure."""
    return timing.timed(cmd, limit, settle)[:2]


def pack_both(cache, work, ccpack, python):
    """(signed ccpack archive, its key, tar.zst), each made once."""
    ck, st, key = work / "cache.ccpack", work / "cache.tar.zst", work / "bench.key"
    subprocess.run([ccpack, "keygen", "-q", "--out", str(key)], check=True)
    subprocess.run([ccpack, "create", "--inductor-dir", str(cache / "inductor_cache"), "--triton-dir",
                    str(cache / "triton_cache"), "-q", "--python", python, "-o", str(ck), "--sign-key", str(key)],
                   check=True)
    subprocess.run(["sh", "-c", f"tar -C '{cache}' -c inductor_cache triton_cache | zstd -q -3 --long=27 -T0 > '{st}'"],
                   check=True)
    return ck, key, st


def pairs_under(limit, cache, work, archives, args):
    """The per-pair samples of one CPU count: {"ccpack": [(wall, cpu)], "tar": [...], "ratio": [...]}."""
    ck, key, st = archives
    size, inodes = freshfs.footprint(cache)
    need = (int(size * args.room), inodes)
    out = {"ccpack": [], "tar": [], "ratio": []}

    def ccpack_once(verify):
        with freshfs.fresh_ext4(work, "restore-ccpack", *need, journal_mb=args.journal_mb) as mnt:
            cmd = [args.ccpack, "restore", str(ck), "--inductor-dir", str(mnt / "inductor"), "--triton-dir",
                   str(mnt / "triton"), "-q", "--python", args.python, "--trust", f"{key}.pub"]
            sample = timed(cmd, limit, args.settle)
            if verify:
                verify_in_child([(cache / "inductor_cache", mnt / "inductor"), (cache / "triton_cache", mnt / "triton")])
            return sample

    def tar_once():
        with freshfs.fresh_ext4(work, "restore-tar", *need, journal_mb=args.journal_mb) as mnt:
            return timed(["tar", "-I", "zstd --long=27", "-xf", str(st), "-C", str(mnt)], limit, args.settle)

    for i in range(args.pairs):
        if i % 2 == 0:
            c = ccpack_once(i == 0)
            t = tar_once()
        else:
            t = tar_once()
            c = ccpack_once(False)
        out["ccpack"].append(c)
        out["tar"].append(t)
        out["ratio"].append(c[0] / t[0])
        log(f"  {limit.cpus} CPU pair {i + 1}/{args.pairs} ({'ccpack first' if i % 2 == 0 else 'tar first'}): "
            f"ccpack {c[0]:.3f} s (CPU {c[1]:.3f}), tar {t[0]:.3f} s (CPU {t[1]:.3f}), ratio {c[0] / t[0]:.2f}")
    return out


def summary(samples):
    med = statistics.median
    return {"ratio": med(samples["ratio"]),
            "ccpack_s": med(s[0] for s in samples["ccpack"]), "tar_s": med(s[0] for s in samples["tar"]),
            "ccpack_cpu_s": med(s[1] for s in samples["ccpack"]), "tar_cpu_s": med(s[1] for s in samples["tar"]),
            "cpu_ratio": med(c[1] / t[1] for c, t in zip(samples["ccpack"], samples["tar"]))}


@contextlib.contextmanager
def cache_of(case, args, work):
    if case in SYNTHETIC:
        with synthetic_cache(case, work, bench.GEN, log) as cache:
            yield cache
    else:
        yield bench.prepare_cache(args, work)[0]


def run_case(case, args, work, method, hierarchy):
    with cache_of(case, args, work) as cache:
        files, size = bench.tree_stats(cache)
        log(f"{case}: {cache} ({files:,} files, {size / 1e6:.0f} MB)")
        run_dir = work / f"run-{case}"
        shutil.rmtree(run_dir, ignore_errors=True)
        run_dir.mkdir(parents=True)
        archives = pack_both(cache, run_dir, args.ccpack, args.python)
        bench.warm_page_cache(cache)
        rows = {}
        for cpus in args.cpus:
            limit = Limit(method, cpus, hierarchy, args.shares)
            try:
                log(f"  under {limit.describe()}")
                load0 = os.getloadavg()[0]
                samples = pairs_under(limit, cache, run_dir, archives, args)
                rows[cpus] = {**summary(samples), "load_before": load0, "load_after": os.getloadavg()[0],
                              "limit": limit.describe(), "samples": samples}
            finally:
                limit.close()
        shutil.rmtree(run_dir, ignore_errors=True)
    return {"files": files, "bytes": size, "cpus": rows}


def print_table(method, results, pairs):
    limits = {row["limit"] for r in results.values() for row in r["cpus"].values()}
    print(f"method: {method}; {pairs} alternating pairs per row, each restore into a fresh ext4 "
          f"({ROOM}x the cache's footprint, journal {JOURNAL}); medians")
    for text in sorted(limits):
        print(f"  limit: {text}")
    print("| cache | CPUs | ccpack / tar (wall) | ccpack s | tar s | ccpack CPU s | tar CPU s | CPU ratio | load 1 min |")
    print("|---|---|---|---|---|---|---|---|---|")
    for case, r in results.items():
        for cpus, row in r["cpus"].items():
            print(f"| {case} ({r['files']:,} files) | {cpus} | {row['ratio']:.2f}x | {row['ccpack_s']:.3f} | "
                  f"{row['tar_s']:.3f} | {row['ccpack_cpu_s']:.3f} | {row['tar_cpu_s']:.3f} | {row['cpu_ratio']:.2f}x | "
                  f"{row['load_before']:.1f} -> {row['load_after']:.1f} |")


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default="fixture,100k", help="fixture and/or 100k (default: %(default)s)")
    ap.add_argument("--cpus", default="1,2", help="CPU counts to limit to (default: %(default)s)")
    ap.add_argument("--pairs", type=int, default=7, help="alternating pairs per CPU count (default: %(default)s)")
    ap.add_argument("--method", choices=("auto", "cgroup", "taskset"), default="auto",
                    help="auto: a cgroup CPU quota where one can be made, else taskset")
    ap.add_argument("--shares", type=int, default=102400,
                    help="cgroup method: the restores' CPU weight, as v1 cpu.shares (default: %(default)s, 100x the "
                         "default 1024)")
    ap.add_argument("--room", type=float, default=4.0,
                    help="each fresh ext4 is this many times the cache's footprint (default: %(default)s)")
    ap.add_argument("--journal-mb", type=int, default=1024,
                    help="each fresh ext4's journal in MiB (default: %(default)s; 0: mkfs's default for its size)")
    ap.add_argument("--settle", type=float, default=bench.SETTLE_S, help="seconds after sync before each restore")
    ap.add_argument("--cache", help="folder holding inductor_cache and triton_cache (the fixture case)")
    ap.add_argument("--ccpack", default=str(bench.REPO / "build" / "ccpack"), help="ccpack binary (default: build/ccpack)")
    ap.add_argument("--python", default=sys.executable, help="interpreter the fingerprint probes (default: %(default)s)")
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "ccpack-bench"),
                    help="scratch folder; synthetic caches are kept there (default: %(default)s)")
    ap.add_argument("--json", action="store_true", help="print every sample as one JSON object")
    args = ap.parse_args()
    args.cpus = [int(c) for c in args.cpus.split(",")]
    global ROOM, JOURNAL
    ROOM = args.room
    JOURNAL = f"{args.journal_mb} MiB" if args.journal_mb else "mkfs's default"
    args.ccpack = os.path.abspath(shutil.which(args.ccpack) or args.ccpack)
    return args


def main():
    args = parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwind: unmount the images, remove the cgroups
    if not freshfs.available():
        log("restores go into fresh ext4 filesystems: this needs root, mkfs.ext4 and mount")
        return 2
    hierarchy = cgroup_hierarchy() if args.method in ("auto", "cgroup") else None
    if args.method == "cgroup" and hierarchy is None:
        log("no cgroup with a cpu controller can be made here (root and cgroup v1 cpu or v2 cpu needed)")
        return 2
    method = "cgroup" if hierarchy else "taskset"
    if method == "taskset" and shutil.which("taskset") is None:
        log("neither a cgroup CPU quota nor taskset is available")
        return 2
    log(f"limit method: {method}" + (f" ({hierarchy[0]} at {hierarchy[1]})" if hierarchy else ""))
    work = Path(args.workdir).resolve()
    work.mkdir(parents=True, exist_ok=True)
    try:
        results = {case: run_case(case, args, work, method, hierarchy) for case in args.cases.split(",")}
    except (bench.Failure, Mismatch, subprocess.CalledProcessError) as e:
        log(str(e))
        return 1
    if args.json:
        print(json.dumps({"method": method, "room": args.room, "journal_mb": args.journal_mb, "shares": args.shares, "machine": bench.report.machine(),
                          "cases": results}, indent=2))
    else:
        print_table(method, results, args.pairs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
