#!/bin/bash
# Relocation on real HuggingFace `transformers` models, in one command on the GPU machine: for each model, a cold
# warm-up in its build folders (the models' warm-ups run side by side), a signed `ccpack create`, then RUNS rounds
# of: a fresh `restore --at-build-paths` and a fresh process, and a fresh restore into other folders (the build
# folders removed first, so anything written there shows) and a fresh process. Each run is one line of
# scripts/gpu/hf_step.py (first step, every Inductor counter, the files it added). Prints the medians per model and
# PASS/FAIL against: relocated first step within 15% of in place, coordinate-descent benchmarks and Triton kernels
# compiled anew within 10%, nothing written under the build folders.
# Usage: relocate-hf.sh CCPACK_PACKAGE_DIR [MODEL...]   (models of hf_step.py; default: gpt2 llama; RUNS=3)
# PHASE=warmup does only the warm-ups and creates, PHASE=runs only the rounds on an earlier warm-up's folder (two
# commands where one would outlast a time limit); the default does both.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
D=$(cd "$(dirname "$0")" && pwd)
BIN=$1/bin/ccpack; shift
MODELS=${*:-gpt2 llama}; RUNS=${RUNS:-3}
W=${RELOCATE_WORK:-/tmp/ccreloc-hf}; PHASE=${PHASE:-all}
LOG=${OUT:-$W}/relocate-hf.jsonl
step() {  # label model inductor-dir triton-dir
  TORCHINDUCTOR_CACHE_DIR=$3 TRITON_CACHE_DIR=$4 timeout 420 python3 "$D/hf_step.py" "$1" "$2" 2>"$W/$2-$1.err" | tail -1 >>"$LOG"
}
if [ "$PHASE" != runs ]; then
  rm -rf "$W"; mkdir -p "$W"; : >"$LOG"
  $BIN keygen -q --out "$W/ci.key"
  for m in $MODELS; do step cold "$m" "$W/$m/build/ind" "$W/$m/build/tri" & done; wait
  for m in $MODELS; do
    $BIN create -q -o "$W/$m.ccpack" --sign-key "$W/ci.key" --inductor-dir "$W/$m/build/ind" --triton-dir "$W/$m/build/tri" || echo "FAIL create $m"
    grep "\"model\": \"$m\"" "$LOG" >"$W/$m-cold.jsonl"
  done
  [ "$PHASE" = warmup ] && exit 0
fi
[ "$PHASE" = runs ] && { cat "$W"/*-cold.jsonl >"$LOG" 2>/dev/null; }
for m in $MODELS; do
  for r in $(seq "$RUNS"); do
    rm -rf "$W/$m/build"
    $BIN restore "$W/$m.ccpack" -q --trust "$W/ci.key.pub" --at-build-paths >/dev/null || echo "FAIL restore in place $m"
    step "in-place-$r" "$m" "$W/$m/build/ind" "$W/$m/build/tri"
    rm -rf "$W/$m/build" "$W/$m/pod"
    $BIN restore "$W/$m.ccpack" --json --trust "$W/ci.key.pub" --inductor-dir "$W/$m/pod/ind" --triton-dir "$W/$m/pod/tri" \
      >"$W/$m-restore-$r.json" || echo "FAIL restore relocated $m"
    step "relocated-$r" "$m" "$W/$m/pod/ind" "$W/$m/pod/tri"
    echo "{\"label\": \"written-under-build-$r\", \"model\": \"$m\", \"files\": $(find "$W/$m/build" -type f 2>/dev/null | wc -l)}" >>"$LOG"
  done
  python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["components"]; print(sys.argv[2], "relocated restore:", [(x["name"], x["group_paths_rewritten"], x["pickle_paths_rewritten"], x["files_unparsed"]) for x in c])' "$W/$m-restore-1.json" "$m"
done
python3 - "$LOG" $MODELS <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
def med(model, prefix, f):
    v = [f(r) for r in runs if r.get("model") == model and r["label"].startswith(prefix) and "counters" in r]
    return statistics.median(v) if v else float("nan"), v
first = lambda r: r["first_step_s"]
coord = lambda r: r["counters"].get("inductor", {}).get("coordesc_tuning_bench", 0)
anew = lambda r: r["added"].get("triton_kernel", 0)
for m in sys.argv[2:]:
    cold = [r["first_step_s"] for r in runs if r.get("model") == m and r["label"] == "cold"]
    print("%s cold first step: %s s" % (m, cold))
    rows = []
    for name, f in (("first step s", first), ("coordesc benchmarks", coord), ("Triton kernels compiled anew", anew)):
        a, av = med(m, "in-place", f); b, bv = med(m, "relocated", f)
        print("%s %-28s in place %s (median %s), relocated %s (median %s)" % (m, name, av, a, bv, b))
        rows.append((name, a, b))
    written = sum(r["files"] for r in runs if r.get("model") == m and r["label"].startswith("written-under-build"))
    (n1, a1, b1), (n2, a2, b2), (n3, a3, b3) = rows
    print("PASS" if b1 <= a1 * 1.15 else "FAIL", m, "relocated first step within 15%% of in place: %.2f vs %.2f s" % (b1, a1))
    print("PASS" if abs(b2 - a2) <= 0.10 * max(a2, 1) else "FAIL", m, "coordinate-descent benchmarks within 10%%: %s vs %s" % (b2, a2))
    print("PASS" if b3 <= a3 * 1.10 + 1 else "FAIL", m, "Triton kernels compiled anew within 10%%: %s vs %s" % (b3, a3))
    print("PASS" if written == 0 else "FAIL", m, "files written under the build folders during relocated runs: %d" % written)
PY
