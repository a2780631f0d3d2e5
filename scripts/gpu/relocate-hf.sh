#!/bin/bash
# Relocation on real HuggingFace `transformers` models, in one command on the GPU machine: for each model, a cold
# warm-up in its build folders (the models' warm-ups run side by side), a signed `ccpack create`, then RUNS rounds
# of: a fresh `restore --at-build-paths` and a fresh process, and a fresh restore into other folders (the build
# folders removed first, so anything written there shows) and a fresh process. The two halves of a round swap
# order every round (in place first in odd rounds, relocated first in even ones), so neither always runs on a
# GPU and page cache the other left warm. Each run is one line of scripts/gpu/hf_step.py (first step, every
# Inductor counter, the files it added), followed by a `ccpack status` line for the same folders (what the run
# compiled since the restore, by group). Prints the medians per model and PASS/FAIL against: relocated first step
# within 15% of in place, coordinate-descent benchmarks and Triton kernels compiled anew within 10%, nothing
# written under the build folders.
# Usage: relocate-hf.sh CCPACK_DIR [MODEL...]   (CCPACK_DIR holds bin/ccpack: an unpacked package or a venv with the
# wheel installed; models of hf_step.py; default: gpt2 llama; RUNS=3, or RUNS_<model> for one model)
# PHASE=warmup does only the warm-ups and creates, PHASE=runs only the rounds on an earlier warm-up's folder (two
# commands where one would outlast a time limit); the default does both. PY is the interpreter (default python3).
# WARM_ENV="VAR=VALUE ..." is set for every run but the cold warm-up (a setting of the pods, not of the build).
# API=1 (with the wheel installed for PY): the first model's warm-up ends with ccpack.create() and, after its
# rounds, one more relocated run restores with ccpack.restore() from the same process before torch starts.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
D=$(cd "$(dirname "$0")" && pwd)
BIN=$1/bin/ccpack; shift
MODELS=${*:-gpt2 llama}; RUNS=${RUNS:-3}
W=${RELOCATE_WORK:-/tmp/ccreloc-hf}; PHASE=${PHASE:-all}; PY=${PY:-python3}; API=${API:-0}
FIRST=${MODELS%% *}
mkdir -p "${OUT:-$W}"; LOG=${OUT:-$W}/relocate-hf.jsonl
step() {  # label model inductor-dir triton-dir [VAR=VALUE...]: one run, then its status line
  local label=$1 m=$2 ind=$3 tri=$4 warm=(); shift 4
  [ "$label" != cold ] && read -ra warm <<<"${WARM_ENV:-}"
  env "${warm[@]}" "$@" TORCHINDUCTOR_CACHE_DIR="$ind" TRITON_CACHE_DIR="$tri" timeout 420 "$PY" "$D/hf_step.py" "$label" "$m" \
    2>"$W/$m-$label.err" | tail -1 >>"$LOG"
  [ "$label" = cold ] && return
  $BIN status --inductor-dir "$ind" --triton-dir "$tri" >"${OUT:-$W}/status-$m-$label.txt"
  $BIN status --json --inductor-dir "$ind" --triton-dir "$tri" >"${OUT:-$W}/status-$m-$label.json"
  "$PY" - "${OUT:-$W}/status-$m-$label.json" "$m" "$label" >>"$LOG" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(json.dumps({"label": "status-" + sys.argv[3], "model": sys.argv[2], "exit_code": s.get("exit_code", 0),
                  "compiled_since_restore": s.get("compiled_since_restore"),
                  "folders": {f["name"]: {"state": f["state"], "added_count": f["added_count"],
                                          "fit": (f.get("fit") or {}).get("verdict") if isinstance(f.get("fit"), dict) else f.get("fit"),
                                          "groups": {g: (len(v) if isinstance(v, list) else v)
                                                     for g, v in (f.get("added") or {}).items()}}
                              for f in s["folders"]}}))
PY
}
if [ "$PHASE" != runs ]; then
  rm -rf "$W"; mkdir -p "$W"; : >"$LOG"
  $BIN keygen -q --out "$W/ci.key"
  for m in $MODELS; do
    extra=()
    [ "$API" = 1 ] && [ "$m" = "$FIRST" ] && extra=("CCPACK_API_CREATE=$W/$m.ccpack:$W/ci.key")
    step cold "$m" "$W/$m/build/ind" "$W/$m/build/tri" "${extra[@]}" &
  done; wait
  for m in $MODELS; do
    grep "\"model\": \"$m\"" "$LOG" >"$W/$m-cold.jsonl"
    if [ "$API" = 1 ] && [ "$m" = "$FIRST" ]; then [ -f "$W/$m.ccpack" ] || echo "FAIL ccpack.create $m"; continue; fi
    $BIN create -q -o "$W/$m.ccpack" --sign-key "$W/ci.key" --inductor-dir "$W/$m/build/ind" --triton-dir "$W/$m/build/tri" || echo "FAIL create $m"
  done
  [ "$PHASE" = warmup ] && exit 0
fi
[ "$PHASE" = runs ] && { cat "$W"/*-cold.jsonl >"$LOG" 2>/dev/null; }
in_place() {  # model round
  rm -rf "$W/$1/build"
  $BIN restore "$W/$1.ccpack" -q --trust "$W/ci.key.pub" --at-build-paths >/dev/null || echo "FAIL restore in place $1"
  step "in-place-$2" "$1" "$W/$1/build/ind" "$W/$1/build/tri"
}
relocated() {  # model round
  rm -rf "$W/$1/build" "$W/$1/pod"
  $BIN restore "$W/$1.ccpack" --json --trust "$W/ci.key.pub" --inductor-dir "$W/$1/pod/ind" --triton-dir "$W/$1/pod/tri" \
    >"$W/$1-restore-$2.json" || echo "FAIL restore relocated $1"
  step "relocated-$2" "$1" "$W/$1/pod/ind" "$W/$1/pod/tri"
  echo "{\"label\": \"written-under-build-$2\", \"model\": \"$1\", \"files\": $(find "$W/$1/build" -type f 2>/dev/null | wc -l)}" >>"$LOG"
}
for m in $MODELS; do
  runs_var=RUNS_$m
  for r in $(seq "${!runs_var:-$RUNS}"); do
    if [ $((r % 2)) = 1 ]; then in_place "$m" "$r"; relocated "$m" "$r"; else relocated "$m" "$r"; in_place "$m" "$r"; fi
  done
  if [ "$API" = 1 ] && [ "$m" = "$FIRST" ]; then
    rm -rf "$W/$m/build" "$W/$m/pod"
    step api-relocated "$m" "$W/$m/pod/ind" "$W/$m/pod/tri" "CCPACK_API_RESTORE=$W/$m.ccpack:$W/ci.key.pub" CCPACK_API_STATUS=1
  fi
  "$PY" -c 'import json,sys; c=json.load(open(sys.argv[1]))["components"]; print(sys.argv[2], "relocated restore:", [(x["name"], x["group_paths_rewritten"], x["pickle_paths_rewritten"], x["files_unparsed"]) for x in c])' "$W/$m-restore-1.json" "$m"
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
