#!/bin/bash
# Tuned by default, on the GPU: the serving decoder of serve_step.py (max-autotune with CUDA graphs, two shapes) warmed
# and served with nothing exported by hand. Two commands, each under 10 minutes:
#   PHASE=warmup tuned.sh CCPACK_DIR   two chains side by side on the GPU: "default", a cold warm-up with torch's
#       defaults and a plain `ccpack create` of its folders; "tuned", `ccpack create --settle -- python3 serve_step.py`
#       (ccpack sets the settings for the warm-up and the settle runs, and records them).
#   SERIAL=1 runs the two chains one after the other (about 10 minutes of warm-up for three shapes). CHAINS=default
#   then CHAINS=tuned runs one chain per command (each under 10 minutes); the second keeps the first's work folder.
#   PHASE=all: both, one after the other (one command: the work folder cannot be lost in between).
#   PHASE=pods tuned.sh CCPACK_DIR     RUNS rounds (default 3), the kinds (KINDS, default "default tuned"; "tunedmt":
#       a tuned pod that sets its own TORCHINDUCTOR_COMPILE_THREADS=$MT) in an order that rotates: a "default" pod restores the
#       plain archive into fresh folders with `ccpack restore` and runs serve_step.py with torch's defaults; a "tuned"
#       pod is `ccpack run ARCHIVE --inductor-dir ... --triton-dir ... -- python3 serve_step.py` (the settings come from
#       the archive). Each pod reports its time to both first answers, the Triton kernels it compiled (`ccpack
#       status`) and its steady-state time per call (STEADY calls per shape, default 200); tuned_table.py prints the
#       medians and PASS/FAIL against: tuned at most 0.3x the default pods' time, 0 kernels (median), steady state
#       at most 3% slower.
# MODEL=plain serves serve_step.py's plain PyTorch decoder (SHAPES then names its shapes, e.g. 4x256,8x512).
# CCPACK_DIR holds bin/ccpack (the unpacked portable package). Work folder $TUNED_WORK (default /tmp/cctuned), kept
# between the two commands; the log and table are copied to $OUT when set. No torch or Triton setting is exported
# here: the script unsets every TORCHINDUCTOR_* and TRITON_* it inherits.
set -u
for v in $(env | sed -n 's/^\(TORCHINDUCTOR_[A-Z_]*\|TRITON_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
D=$(cd "$(dirname "$0")" && pwd)
BIN=$1/bin/ccpack
W=${TUNED_WORK:-/tmp/cctuned}; R=${OUT:-$W}; PHASE=${PHASE:-warmup}; RUNS=${RUNS:-3}
export STEADY=${STEADY:-200} SHAPES=${SHAPES:-1x96,4x200}
LOG=$W/tuned.jsonl
# Python's own bytecode: the GPU machine's image sets PYTHONDONTWRITEBYTECODE=1 and ships no .pyc, so every process
# would compile torch's ~1,000 modules again (about 4 s of each pod's start-up, the same for both kinds). An image
# built as pip builds it has them; PYCACHE=1 (the default) gives every process of this script, both kinds alike, one
# bytecode folder in the work folder, written by the warm-ups, so the pods measure such an image. PYCACHE=0: as is.
if [ "${PYCACHE:-1}" = 1 ]; then unset PYTHONDONTWRITEBYTECODE; export PYTHONPYCACHEPREFIX=$W/pycache; fi
SERVE=${SERVE:-"python3 $D/serve_step.py"}  # a CPU check of this script passes a stand-in
mkdir -p "$W" "$R"
if [ "$PHASE" = warmup ] || [ "$PHASE" = all ]; then
  CHAINS=${CHAINS:-default tuned}
  if [ "$CHAINS" = "default tuned" ]; then rm -rf "${W:?}"/*; : >"$LOG"; fi  # one chain alone keeps the other's
  [ -f "$W/ci.key" ] || $BIN keygen -q --out "$W/ci.key"
  default_chain() {
    rm -rf "$W"/default "$W"/default.ccpack
    TORCHINDUCTOR_CACHE_DIR=$W/default/ind TRITON_CACHE_DIR=$W/default/tri timeout 560 $SERVE default-cold 2>"$W/default-cold.err" | tail -1 >>"$LOG"
    $BIN create -o "$W/default.ccpack" --sign-key "$W/ci.key" --inductor-dir "$W/default/ind" --triton-dir "$W/default/tri" \
      2>"$W/default-create.err" || echo '{"label": "FAIL create default"}' >>"$LOG"
  }
  tuned_chain() {
    rm -rf "$W"/tuned "$W"/tuned.ccpack
    timeout 570 "$BIN" create --json -o "$W/tuned.ccpack" --sign-key "$W/ci.key" --inductor-dir "$W/tuned/ind" \
      --triton-dir "$W/tuned/tri" --settle -- $SERVE tuned-settle >"$W/tuned-report.json" 2>"$W/tuned-settle.err" \
      || echo "{\"label\": \"FAIL settle tuned: exit $?\"}" >>"$LOG"
    grep '^{"label": "tuned-settle", "model"' "$W/tuned-settle.err" | head -1 | sed 's/"label": "tuned-settle"/"label": "tuned-cold"/' >>"$LOG"
  }
  # side by side on the GPU (one command), or SERIAL=1: one after the other, neither tuning under the other's load
  if [ "$CHAINS" != "default tuned" ]; then for c in $CHAINS; do "${c}_chain"; done
  elif [ "${SERIAL:-0}" = 1 ]; then default_chain; tuned_chain; else default_chain & tuned_chain & wait; fi
  ls -l "$W"/*.ccpack 2>/dev/null | tee "$W/archives.txt"
  cat "$W/default-create.err" 2>/dev/null; grep -s "^ccpack: " "$W/tuned-settle.err"
  [ "$R" = "$W" ] || cp "$LOG" "$R/tuned-warmup.jsonl"
  [ "$PHASE" = all ] || exit 0
fi
[ -f "$W/ci.key.pub" ] || { echo "tuned.sh: no warm-up in $W (run PHASE=warmup first, on the same machine)" >&2; exit 1; }
WARMLOG=$LOG; LOG=$W/pods.jsonl; : >"$LOG"  # this phase's pods, beside the warm-up's lines
pod() {  # kind round
  local k=$1 r=$2 p=$W/pod-$1
  rm -rf "$p"
  if [ "$k" = default ]; then
    $BIN restore "$W/default.ccpack" -q --trust "$W/ci.key.pub" --inductor-dir "$p/ind" --triton-dir "$p/tri" \
      || echo "{\"label\": \"FAIL restore default $r\"}" >>"$LOG"
    TORCHINDUCTOR_CACHE_DIR=$p/ind TRITON_CACHE_DIR=$p/tri timeout 300 $SERVE "default-$r" 2>"$W/default-$r.err" | tail -1 >>"$LOG"
  else
    # tuned: ccpack run's own settings; tunedmt: the same with the pod's own compile threads (kept by run)
    [ "$k" = tunedmt ] && export TORCHINDUCTOR_COMPILE_THREADS=$MT
    timeout 300 "$BIN" run "$W/tuned.ccpack" --trust "$W/ci.key.pub" --inductor-dir "$p/ind" --triton-dir "$p/tri" \
      -- $SERVE "$k-$r" 2>"$W/$k-$r.err" | tail -1 >>"$LOG"
    unset TORCHINDUCTOR_COMPILE_THREADS
  fi
  local n; n=$($BIN status --json --inductor-dir "$p/ind" --triton-dir "$p/tri" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("triton_kernels_since_restore", -1))')
  echo "{\"label\": \"status-$k-$r\", \"triton_kernels_since_restore\": $n}" >>"$LOG"
}
KINDS=(${KINDS:-default tuned}); MT=${MT:-16}
for r in $(seq "$RUNS"); do  # the kinds' order rotates every round; no round starts past DEADLINE s of this script
  [ "$SECONDS" -lt "${DEADLINE:-1000000}" ] || { echo "tuned.sh: round $r not started: past DEADLINE=$DEADLINE s" >&2; break; }
  n=${#KINDS[@]}
  for j in $(seq 0 $((n - 1))); do pod "${KINDS[$(( (j + r - 1) % n ))]}" "$r"; done
done
grep -h "^ccpack: " "$W"/tuned-1.err | head -5
[ "$R" = "$W" ] || cp "$LOG" "$R/tuned-pods.jsonl"
python3 "$D/tuned_table.py" "$WARMLOG" "$LOG" | tee "$R/tuned-table.txt"
