# The table of scripts/gpu/settle.sh from its log (one JSON line per run and per `ccpack status`): per archive, the
# medians over the rounds of the time to the first answers (serve) or the first step (gpt2), the Triton kernels each
# pod compiled since its restore, and the coordinate-descent benchmarks each pod really ran; then PASS/FAIL lines
# against the targets: the settled serving archive at most 0.5x the unsettled one's time, at most 10 kernels per pod
# (median), real coordinate descent at most 10% of the cold run's.
# Usage: settle_table.py SETTLE_LOG
import json, statistics, sys

runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by_label = {r["label"]: r for r in runs}

def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else float("nan")

def pods(archive):
    out = []
    for r in runs:
        if r["label"].startswith(archive + "-") and "counters" in r:
            status = by_label.get("status-" + r["label"], {})
            out.append((r["first_step_s"], status.get("compiled_since_restore"), r.get("real", {}).get("coordesc_bench")))
    return out

rows, verdicts = [], []
for chain in ("serve-default", "serve-pinned", "gpt2-default", "gpt2-pinned"):
    cold = by_label.get(chain + "-cold", {})
    cold_cd = cold.get("real", {}).get("coordesc_bench")
    for kind in ("unsettled", "settled"):
        p = pods(chain + "-" + kind)
        if not p:
            continue
        t, k, c = (med([x[i] for x in p]) for i in range(3))
        rows.append((chain + "-" + kind, cold.get("first_step_s"), cold_cd, p, t, k, c))
print("%-26s %8s %8s  %-44s %8s %8s %8s" % ("archive", "cold s", "cold cd", "runs (s, kernels, real coordesc)", "med s", "med k", "med cd"))
for name, cs, ccd, p, t, k, c in rows:
    print("%-26s %8s %8s  %-44s %8.2f %8s %8s" % (name, cs, ccd, "; ".join("%s %s %s" % x for x in p), t, k, c))
meds = {r[0]: r for r in rows}
for chain in ("serve-default", "serve-pinned", "gpt2-default", "gpt2-pinned"):
    s = meds.get(chain + "-settled")
    if not s:
        continue
    u = meds.get(chain.split("-")[0] + "-default-unsettled")
    if u and chain.startswith("serve"):
        print("PASS" if s[4] <= 0.5 * u[4] else "FAIL", chain, "settled time %.2f s vs unsettled %.2f s: %.2fx (target <= 0.5x)" % (s[4], u[4], s[4] / u[4]))
    elif u:
        print("INFO", chain, "settled time %.2f s vs unsettled %.2f s: %.2fx" % (s[4], u[4], s[4] / u[4]))
    print("PASS" if s[5] <= 10 else "FAIL", chain, "Triton kernels compiled per pod (median): %s (target <= 10)" % s[5])
    if s[2]:
        print("PASS" if s[6] <= 0.1 * s[2] else "FAIL", chain, "real coordinate-descent benchmarks per pod (median): %s, cold %s (target <= 10%%)" % (s[6], s[2]))
