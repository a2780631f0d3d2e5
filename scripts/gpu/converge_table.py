# The table of scripts/gpu/converge.sh from its log (one JSON line per serving run and per `ccpack status`): for the
# merged archive and the base, each pod's time to the first answers (all three shapes) and the Triton kernels it
# compiled since its restore, their medians, and PASS/FAIL lines against the targets: the merged archive's pods
# compile at most 10 Triton kernels (median), and answer in at most 0.5x the time of the base's pods (medians).
# Usage: converge_table.py CONVERGE_LOG
import json, statistics, sys

runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by_label = {r["label"]: r for r in runs}

def med(values):
    values = [v for v in values if v is not None and v >= 0]
    return statistics.median(values) if values else float("nan")

def pods(kind):
    out = []
    for r in runs:
        # the pods of the runs: "<kind>-<round>" ("base-cold" is the warm-up, not a pod)
        if r["label"].startswith(kind + "-") and r["label"][len(kind) + 1:].isdigit() and "first_answers_s" in r:
            k = by_label.get("status-" + r["label"], {}).get("triton_kernels_since_restore")
            out.append((r["first_answers_s"], k))
    return out

for line in runs:
    if line["label"].startswith("FAIL") or line["label"] == "merge-order":
        print(line)
for label in ("base-cold", "delta-pod-a", "delta-pod-b"):
    r = by_label.get(label, {})
    k = by_label.get("status-" + label, {}).get("triton_kernels_since_restore")
    print("%-12s first answers %s s, kernels compiled since restore: %s" % (label, r.get("first_answers_s"), "-" if label == "base-cold" else k))
print("%-8s  %-48s %10s %10s" % ("archive", "pods (first answers s, Triton kernels)", "median s", "median k"))
meds = {}
for kind in ("merged", "base"):
    p = pods(kind)
    t, k = med([x[0] for x in p]), med([x[1] for x in p])
    meds[kind] = (t, k)
    print("%-8s  %-48s %10.2f %10s" % (kind, "; ".join("%s s %s k" % x for x in p), t, k))
(mt, mk), (bt, bk) = meds["merged"], meds["base"]
print("PASS" if mk <= 10 else "FAIL", "merged archive: Triton kernels compiled per pod (median): %s (target <= 10; base: %s)" % (mk, bk))
if bt == bt and bt > 0:
    print("PASS" if mt <= 0.5 * bt else "FAIL", "merged archive: time to first answers %.2f s vs base %.2f s: %.2fx (target <= 0.5x)" % (mt, bt, mt / bt))
