# The table of scripts/gpu/tuned.sh from its log (one JSON line per serve_step.py run and per `ccpack status`): per
# pod kind, the medians over the rounds of the time to both first answers, the Triton kernels each pod compiled since
# its restore and the steady-state time per call of each shape; then PASS/FAIL against the targets: tuned pods at
# most 0.3x the default pods' time, 0 kernels (median), steady state at most 3% slower than the defaults' (faster is
# said as such).
# Usage: tuned_table.py WARMUP_LOG PODS_LOG
import json, statistics, sys

runs = [json.loads(l) for f in sys.argv[1:] for l in open(f) if l.strip()]
runs = [r for r in runs if isinstance(r, dict) and "label" in r]  # Inductor's own JSON log lines have none
by = {r["label"]: r for r in runs}

def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else float("nan")

def pods(kind):
    return [r for r in runs if r["label"].startswith(kind + "-") and r["label"][len(kind) + 1:].isdigit() and "first_answers_s" in r]

rows = {}
print("| pods | n | time to both first answers (each) | median | start-up before the first call (median) | Triton kernels compiled (each) | median | steady ms/call per shape (median) |")
print("|---|---|---|---|---|---|---|---|")
for kind in ("default", "tuned", "tunedmt"):
    p = pods(kind)
    if not p:
        continue
    times = [r["first_answers_s"] for r in p]
    kernels = [by.get("status-" + r["label"], {}).get("triton_kernels_since_restore") for r in p]
    shapes = sorted({s for r in p for s in r.get("steady_ms", {})})
    steady = {s: med([r.get("steady_ms", {}).get(s) for r in p]) for s in shapes}
    rows[kind] = (med(times), med(kernels), steady)
    startup = med([r.get("startup", {}).get("model") for r in p])  # imports, CUDA context, weights on the GPU
    print("| %s | %d | %s | %.2f s | %.2f s | %s | %s | %s |" % (kind, len(p), ", ".join("%.2f" % t for t in times), med(times), startup,
          ", ".join(str(k) for k in kernels), med(kernels), ", ".join("%s %.4f" % (s, v) for s, v in steady.items())))
for c in ("default-cold", "tuned-cold"):
    if "first_answers_s" in by.get(c, {}):
        print("%s: %.1f s to both first answers" % (c, by[c]["first_answers_s"]))
for name in ("tuned", "tunedmt"):
  d, t = rows.get("default"), rows.get(name)
  if d and t:
    ratio = t[0] / d[0]
    print("%s %s/default time to first answers: %.2fx (target <= 0.30)" % ("PASS" if ratio <= 0.30 else "FAIL", name, ratio))
    print("%s %s pods' Triton kernels compiled, median: %s (target 0)" % ("PASS" if t[1] == 0 else "FAIL", name, t[1]))
    for s in sorted(set(d[2]) & set(t[2])):
        r = t[2][s] / d[2][s]
        print("%s %s steady state %s: %.4f / %.4f ms = %.3fx (target at most 3%% slower)%s" % (
            "PASS" if r <= 1.03 else "FAIL", name, s, t[2][s], d[2][s], r, ": faster" if r < 0.97 else ""))
