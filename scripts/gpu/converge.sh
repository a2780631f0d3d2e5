#!/bin/bash
# A fleet that converges, on the GPU, for the serving decoder of serve_step.py (inference, static shapes, the compile
# mode of $MODE below). Two commands (about 70 s and 165 s on the H200 in the default mode; with max-autotune each
# would pass 10 minutes):
#   PHASE=warmup converge.sh CCPACK_DIR   the base: a cold warm-up on one shape (BASE_SHAPE) in its build folders,
#       `ccpack create` (signed); then two pods side by side, each a fresh relocated restore of the base and a fresh
#       process serving one new shape (POD_A_SHAPE, POD_B_SHAPE), each then `ccpack create --since-restore` (its
#       delta); then `ccpack merge base delta-a delta-b` (signed), twice with the deltas in both orders (the
#       bytes must be the same).
#   PHASE=runs converge.sh CCPACK_DIR     RUNS rounds (default 3) of, for the merged archive and for the base: a
#       fresh relocated restore and a fresh process serving all three shapes, the order alternating every round;
#       then the table (converge_table.py): medians of the time to the first answers and of the Triton kernels
#       each pod compiled (`ccpack status --json`), with PASS/FAIL against: the merged archive's pods compile at
#       most 10 Triton kernels; their time to the first answers is at most 0.5x the base's pods'.
#       KINDS="merged" or KINDS="base" runs one kind only (to split the runs over two commands), and PHASE=table
#       prints the table of what the log holds.
# All runs use docs/TUNING.md's settings (one TRITON_PTXAS_PATH, no Triton bundle in FX entries, no dynamic RBLOCK
# scaling; one compile thread after the warm-up), as a fleet that wants to converge sets them.
# CCPACK_DIR holds bin/ccpack (the unpacked portable package of scripts/ci/package). Work folder
# $CONVERGE_WORK (default /tmp/ccconverge), kept between the commands; the log, reports and table are copied to $OUT
# when set, else stay there.
# MODE: serve_step.py's compile mode, torch.compile's default here (docs/CONVERGE.md has its figures); max-autotune
# makes each new shape minutes of GPU benchmarks and the runs pass the device's 10 minutes per command.
set -u
export MODE=${MODE:-default}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
D=$(cd "$(dirname "$0")" && pwd)
BIN=$1/bin/ccpack
W=${CONVERGE_WORK:-/tmp/ccconverge}; R=${OUT:-$W}; PHASE=${PHASE:-warmup}; RUNS=${RUNS:-3}; KINDS=${KINDS:-"merged base"}
BASE_SHAPE=${BASE_SHAPE:-1x96}; POD_A_SHAPE=${POD_A_SHAPE:-2x160}; POD_B_SHAPE=${POD_B_SHAPE:-4x224}
ALL="$BASE_SHAPE,$POD_A_SHAPE,$POD_B_SHAPE"
LOG=$W/converge.jsonl
PTX=$(python3 -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "bin", "ptxas"))')
[ -x "$PTX" ] || PTX=$(python3 -c 'import os, triton; print(os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas"))')
PINS="TRITON_PTXAS_PATH=$PTX TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE=0 TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=0"
fail() { echo "{\"label\": \"FAIL ${1//\"/\'}\"}" >>"$LOG"; echo "converge.sh: FAIL $1" >&2; }
# serve DIR SHAPES LABEL THREADS: one fresh serving process on the folders DIR/ind, DIR/tri
serve() {
  env $PINS ${4:+TORCHINDUCTOR_COMPILE_THREADS=$4} SHAPES="$2" TORCHINDUCTOR_CACHE_DIR="$1/ind" TRITON_CACHE_DIR="$1/tri" \
    timeout 280 python3 "$D/serve_step.py" "$3" 2>"$W/$3.err" | tail -1 >>"$LOG"
}
# restore ARCHIVE DIR: a fresh relocated restore, as a pod does
restore() {
  rm -rf "$2"
  env $PINS TORCHINDUCTOR_COMPILE_THREADS=1 "$BIN" restore "$1" -q --trust "$W/ci.key.pub" --inductor-dir "$2/ind" --triton-dir "$2/tri" \
    2>>"$W/restore.err" || fail "restore $1 into $2: $(tail -n 1 "$W/restore.err")"
}
# status DIR LABEL: the Triton kernels the pod compiled since its restore
status() {
  local n
  n=$("$BIN" status --json --inductor-dir "$1/ind" --triton-dir "$1/tri" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("triton_kernels_since_restore", -1))')
  echo "{\"label\": \"status-$2\", \"triton_kernels_since_restore\": ${n:--1}}" >>"$LOG"
}
delta_pod() {  # NAME SHAPE: restore the base, serve one new shape, make the delta
  local p=$W/pod-$1
  restore "$W/base.ccpack" "$p"
  serve "$p" "$2" "delta-pod-$1" 1
  status "$p" "delta-pod-$1"
  env $PINS TORCHINDUCTOR_COMPILE_THREADS=1 "$BIN" create --json -o "$W/delta-$1.ccpack" --since-restore --inductor-dir "$p/ind" --triton-dir "$p/tri" \
    >"$W/delta-$1.json" 2>"$W/delta-$1.err" || fail "create --since-restore $1"
}
mkdir -p "$W" "$R"
if [ "$PHASE" = warmup ]; then
  rm -rf "${W:?}"/* ; : >"$LOG"
  "$BIN" keygen -q --out "$W/ci.key"
  serve "$W/build" "$BASE_SHAPE" base-cold ""
  env $PINS "$BIN" create -q -o "$W/base.ccpack" --sign-key "$W/ci.key" --inductor-dir "$W/build/ind" --triton-dir "$W/build/tri" || fail "create base"
  delta_pod a "$POD_A_SHAPE" & delta_pod b "$POD_B_SHAPE" & wait
  env $PINS "$BIN" merge --json "$W/base.ccpack" "$W/delta-a.ccpack" "$W/delta-b.ccpack" -o "$W/merged.ccpack" --sign-key "$W/ci.key" \
    --trust "$W/ci.key.pub" \
    >"$W/merge.json" 2>"$W/merge.err" || fail "merge"
  env $PINS SOURCE_DATE_EPOCH=1 "$BIN" merge -q "$W/base.ccpack" "$W/delta-a.ccpack" "$W/delta-b.ccpack" -o "$W/m1.ccpack" --sign-key "$W/ci.key" --trust "$W/ci.key.pub"
  env $PINS SOURCE_DATE_EPOCH=1 "$BIN" merge -q "$W/base.ccpack" "$W/delta-b.ccpack" "$W/delta-a.ccpack" -o "$W/m2.ccpack" --sign-key "$W/ci.key" --trust "$W/ci.key.pub"
  cmp -s "$W/m1.ccpack" "$W/m2.ccpack" && echo '{"label": "merge-order", "same_bytes": true}' >>"$LOG" || fail "merge bytes differ with the deltas' order"
  "$BIN" inspect "$W/merged.ccpack" >"$W/merged-inspect.txt"
  ls -l "$W"/*.ccpack >"$W/archives.txt"
  cp "$LOG" "$R/converge-warmup.jsonl"
  (cd "$W" && tar -czf "$R/converge-reports.tgz" archives.txt delta-*.json merge.json merge.err merged-inspect.txt ./*.err)
  grep -h "^ccpack: " "$W/merge.err"; grep -E "^(merged|settle) " "$W/merged-inspect.txt"; cat "$W/archives.txt"
  exit 0
fi
[ -f "$W/merged.ccpack" ] || { echo "converge.sh: no merged archive in $W (run PHASE=warmup first, on the same machine)" >&2; exit 1; }
if [ "$PHASE" = runs ]; then
  for r in $(seq "$RUNS"); do
    list=($KINDS); [ $((r % 2)) = 0 ] && list=($(printf '%s\n' "${list[@]}" | tac))
    for k in "${list[@]}"; do
      restore "$W/$k.ccpack" "$W/pod"
      serve "$W/pod" "$ALL" "$k-$r" 1
      status "$W/pod" "$k-$r"
    done
  done
  cp "$LOG" "$R/converge.jsonl"
fi
python3 "$D/converge_table.py" "$LOG" | tee "$R/converge-table.txt"
