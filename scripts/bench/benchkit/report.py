"""The issue-14 targets table and the regression baseline of scripts/bench/bench.py.

Targets (one row per cache; every ratio is ccpack over stock `tar | zstd --long=27`, both measured in the same
run, alternating): create, restore into a fresh filesystem, no-op restore (fingerprint and signature checked),
peak RSS of every ccpack command. A limit of None means "reported, no target".

Baseline: scripts/bench/bench-baseline.json holds the ratios of one committed run per case (with its machine and
date). `--check-baseline` fails when a ratio is more than 10% above its baseline value; only ratios are kept,
never absolute times, since those depend on the machine.
"""
import datetime
import json
import os
import platform

TARGETS = {  # case: (create ratio, restore ratio, no-op ms, peak RSS MiB)
    "fixture": (0.8, 0.3, 50.0, 512.0),
    "100k": (0.8, 0.35, 100.0, 512.0),
    "1m": (None, None, 500.0, 512.0),
}
LABELS = {"fixture": "real fixture", "100k": "100k files (synthetic)", "1m": "1M files (synthetic, tiny)"}
GUARDED = ("create_ratio", "restore_ratio", "size_ratio", "create_cpu_ratio", "restore_cpu_ratio")
TOLERANCE = 0.10


def machine():
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "kernel": platform.release(),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}


def ratios(r):
    return {"create_ratio": r["create_s"]["ratio"], "restore_ratio": r["restore_s"]["ratio"],
            "create_cpu_ratio": r["cpu_ratio"]["create"], "restore_cpu_ratio": r["cpu_ratio"]["restore"],
            "size_ratio": r["size_bytes"]["ccpack"] / r["size_bytes"]["stock"]}


def peak_rss(r):
    return max(r["peak_rss_mib"][k] for k in r["peak_rss_mib"] if not k.endswith("_stock"))


def cells(case, r):
    """[(text, pass or None)] for create, restore, no-op, peak RSS."""
    lim = TARGETS.get(case, (None, None, None, 512.0))
    c, s = r["create_s"], r["restore_s"]
    cpu = r["cpu_ratio"]
    vals = [(c["ratio"], f"{c['ratio']:.2f}x ({c['ccpack']:.2f} s vs {c['stock']:.2f} s; CPU {cpu['create']:.2f}x)", lim[0]),
            (s["ratio"], f"{s['ratio']:.2f}x ({s['ccpack']:.2f} s vs {s['stock']:.2f} s; CPU {cpu['restore']:.2f}x)", lim[1]),
            (r["noop_restore_ms"], f"{r['noop_restore_ms']:.0f} ms", lim[2]),
            (peak_rss(r), f"{peak_rss(r):.0f} MiB", lim[3])]
    return [(text, None if limit is None else v <= limit) for v, text, limit in vals]


def targets_table(results, m):
    """results: {case: measure() result with "cache"}. Returns the Markdown table and whether every cell passed."""
    out = [f"machine: {m['cpu']}, {m['cores']} cores, Linux {m['kernel']}; {m['date']}", "",
           "| cache | create | restore | no-op restore | peak RSS | restore floor (threads: s; ccpack restore / floor) |",
           "|---|---|---|---|---|---|"]
    ok = True
    for case, r in results.items():
        row = []
        for text, passed in cells(case, r):
            row.append(text + ("" if passed is None else " PASS" if passed else " FAIL"))
            ok = ok and passed is not False
        c = r["cache"]
        label = "given cache" if c["what"].startswith("given") else LABELS.get(case, case)
        row.append(", ".join(f"{n}: {f['create_s']:.2f} s; {r['restore_s']['ccpack'] / f['create_s']:.2f}x"
                             for n, f in (r.get("floor") or {}).items()) or "not measured")
        out.append(f"| {label} ({c['files']:,} files, {c['bytes'] / 1e6:,.0f} MB) | " + " | ".join(row) + " |")
    return "\n".join(out), ok


def write_baseline(path, results, m):
    data = {"machine": m, "tolerance": TOLERANCE, "cases": {case: ratios(r) for case, r in results.items()}}
    with open(path, "w") as f:
        json.dump(data, f, indent=2)
        f.write("\n")


def check_baseline(path, results):
    """Returns the list of regressions, one line each (empty: none). Cases or ratios absent from the baseline are
    not checked."""
    with open(path) as f:
        base = json.load(f)
    tol = base.get("tolerance", TOLERANCE)
    bad = []
    for case, r in results.items():
        now, was = ratios(r), base.get("cases", {}).get(case, {})
        for k in GUARDED:
            if k in was and now[k] > was[k] * (1 + tol):
                bad.append(f"{case}: {k} {now[k]:.3f} is more than {tol:.0%} worse than the baseline {was[k]:.3f}"
                           f" ({base.get('machine', {}).get('date', '?')})")
    return bad
