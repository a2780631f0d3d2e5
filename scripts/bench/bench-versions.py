#!/usr/bin/env python3
"""Two ccpack builds against the stock tools in one run: did a change move the ratios?

Why: a refactor or a new check must not make create or restore slower relative to `tar | zstd`. A ratio
taken today and one taken last week on a shared machine differ by more than the change being judged, so both
builds are measured here in the same run, on the same data, alternating with stock, and their ratios compared.

How: every repetition runs, in a rotating order, create with the BEFORE build, create with the AFTER build
(unsigned, as BEFORE knows no signing, and signed with a fresh key), and stock `tar -c | zstd -3 --long=27 -T0`;
then each restore into a freshly made ext4 (bench.py's reference mode: benchkit/freshfs.py) with each build and
with stock `tar -I 'zstd --long=27' -x`. Wall time, CPU time (user + system) and peak RSS come from bench.py's
run(). It also reports whether both builds wrote the same tar stream (`zstd -dc` of each payload compared), and
whether each restore gave back the source (benchkit/treecmp.py).
A build's command line is probed from its --help: BEFORE may predate --allow-unsigned and --python.

Usage: scripts/bench/bench-versions.py --before OLD/ccpack [--ccpack build/ccpack] [--cache DIR] [--reps 5]
Exit status: 0 when it ran, 1 when a command failed or a restore did not match, 2 without root/mkfs.ext4.
"""
import argparse
import os
import tempfile
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402
from benchkit import freshfs, report  # noqa: E402
from benchkit.treecmp import Mismatch, verify_in_child  # noqa: E402


def help_text(binary, command):
    return subprocess.run([binary, command, "--help"], capture_output=True, text=True).stdout


def commands(name, binary, cache, work, python, key=None):
    """argv builders for one build: create(out), restore(archive, root)."""
    restore_help = help_text(binary, "restore")
    create = [binary, "create", "-q", "--inductor-dir", str(cache / "inductor_cache"),
              "--triton-dir", str(cache / "triton_cache")]
    if "--python" in help_text(binary, "create"):
        create += ["--python", python]
    if key:
        create += ["--sign-key", str(key)]
    extra = []
    if "--allow-unsigned" in restore_help:
        extra = ["--trust", f"{key}.pub"] if key else ["--allow-unsigned"]
    if "--python" in restore_help:
        extra += ["--python", python]
    archive = work / f"{name}.ccpack"

    def restore(root):
        return [binary, "restore", str(archive), "-q", "--inductor-dir", str(root / "inductor"),
                "--triton-dir", str(root / "triton")] + extra
    return {"create": create + ["-o", str(archive)], "restore": restore, "archive": archive}


def tar_stream(archive):
    return subprocess.run(["zstd", "-q", "-dc", "--long=27", str(archive)], capture_output=True, check=True).stdout


def measure(args, work):
    cache = Path(args.cache).resolve()
    key = work / "bench.key"
    bench.run([args.ccpack, "keygen", "-q", "--out", str(key)], timed=False)
    tools = {"before": commands("before", args.before, cache, work, args.python),
             "after": commands("after", args.ccpack, cache, work, args.python),
             "after_signed": commands("after_signed", args.ccpack, cache, work, args.python, key)}
    stock_out = work / "stock.tar.zst"
    stock_create = ["sh", "-c", f"tar -C '{cache}' -c inductor_cache triton_cache | zstd -q -3 --long=27 -T0 "
                                f"> '{stock_out}'"]
    names = list(tools) + ["stock"]
    wall = {f"{op}_{n}": [] for op in ("create", "restore") for n in names}
    cpu = {k: [] for k in wall}
    rss = {k: [] for k in wall}
    need = freshfs.footprint(cache)
    bench.warm_page_cache(cache)
    for n in names:  # one untimed run each: the first process after idle pays for faults nobody else pays for
        bench.run(tools[n]["create"] if n != "stock" else stock_create, timed=False)

    def timed(k, cmd):
        w, peak = bench.run(cmd)
        wall[k].append(w)
        cpu[k].append(bench.LAST_CPU)
        rss[k].append(peak)
        bench.log(f"  {k:22s} rep {len(wall[k])}/{args.reps}: {w:7.3f} s  cpu {bench.LAST_CPU:6.3f} s  {peak:6.1f} MiB")

    checked = set()
    for rep in range(args.reps):
        order = names[rep % len(names):] + names[:rep % len(names)]
        for n in order:
            timed(f"create_{n}", tools[n]["create"] if n != "stock" else stock_create)
        for n in order:
            with bench.restore_root(work, f"restore-{n}", need) as root:
                if n == "stock":
                    timed("restore_stock", ["tar", "-I", "zstd --long=27", "-xf", str(stock_out), "-C", str(root)])
                    continue
                bench.mkdirs(root, "inductor", "triton")
                timed(f"restore_{n}", tools[n]["restore"](root))
                if n not in checked:
                    verify_in_child([(cache / "inductor_cache", root / "inductor"),
                                     (cache / "triton_cache", root / "triton")])
                    checked.add(n)
    same = tar_stream(tools["before"]["archive"]) == tar_stream(tools["after"]["archive"])
    sizes = {n: (tools[n]["archive"] if n != "stock" else stock_out).stat().st_size for n in names}
    return summarise(wall, cpu, rss, names, same, sizes)


def summarise(wall, cpu, rss, names, same, sizes):
    med = {k: statistics.median(v) for k, v in wall.items()}
    mcpu = {k: statistics.median(v) for k, v in cpu.items()}
    out = {"same_tar_stream": same, "size_bytes": sizes, "median_s": med, "median_cpu_s": mcpu,
           "peak_rss_mib": {k: max(v) for k, v in rss.items()}, "ratio": {}, "cpu_ratio": {}}
    for op in ("create", "restore"):
        for n in names[:-1]:
            out["ratio"][f"{op}_{n}"] = med[f"{op}_{n}"] / med[f"{op}_stock"]
            out["cpu_ratio"][f"{op}_{n}"] = mcpu[f"{op}_{n}"] / mcpu[f"{op}_stock"]
    return out


def print_report(r, args):
    print(f"before: {args.before}\nafter:  {args.ccpack}\ncache:  {args.cache}, {args.reps} reps, "
          f"restores into a fresh ext4 each")
    print(f"{'':24s}{'median s':>10s}{'ratio':>8s}{'cpu s':>9s}{'cpu ratio':>11s}{'peak MiB':>10s}")
    for op in ("create", "restore"):
        for n in ("before", "after", "after_signed", "stock"):
            k = f"{op}_{n}"
            ratio = f"{r['ratio'][k]:8.2f}" if k in r["ratio"] else f"{'':8s}"
            cr = f"{r['cpu_ratio'][k]:11.2f}" if k in r["cpu_ratio"] else f"{'':11s}"
            print(f"{k:24s}{r['median_s'][k]:10.3f}{ratio}{r['median_cpu_s'][k]:9.3f}{cr}{r['peak_rss_mib'][k]:10.1f}")
    for op in ("create", "restore"):
        a, b = r["ratio"][f"{op}_after"], r["ratio"][f"{op}_before"]
        print(f"{op}: ratio to stock {b:.2f} before, {a:.2f} after (unsigned), change {a / b - 1:+.1%}")
    print(f"archive bytes: {r['size_bytes']}")
    print(f"tar streams of before and after: {'identical' if r['same_tar_stream'] else 'DIFFERENT'}")
    m = report.machine()
    print(f"machine: {m['cpu']}, {m['cores']} cores, {m['date']}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", required=True, help="the older ccpack binary")
    ap.add_argument("--ccpack", default=str(bench.REPO / "build" / "ccpack"), help="the newer binary (default: "
                    "build/ccpack)")
    ap.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "ccpack-bench", "fixture"),
                    help="folder holding inductor_cache and triton_cache (default: %(default)s, where `bench.py` "
                         "unpacks the real fixture with its default --workdir)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--workdir", default="/tmp/ccpack-bench-versions")
    ap.add_argument("--python", default=sys.executable, help="interpreter the fingerprint probes")
    args = ap.parse_args()
    if not freshfs.available():
        print("needs root, mkfs.ext4 and mount (every restore goes into a fresh ext4)", file=sys.stderr)
        return 2
    bench.FRESH_FS = True
    work = Path(args.workdir).resolve()
    bench.fresh_dir(work)
    try:
        for b in (args.before, args.ccpack):
            if not os.access(b, os.X_OK):
                raise bench.Failure(f"not an executable: {b}")
        print_report(measure(args, work), args)
        return 0
    except (bench.Failure, Mismatch) as e:
        print(e, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
