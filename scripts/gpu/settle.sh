#!/bin/bash
# Settled archives against unsettled ones on the GPU, for the serving decoder of serve_step.py (inference,
# max-autotune with CUDA graphs, two shapes) and the GPT-2 training step of hf_step.py. Two commands, since one
# would pass 10 minutes:
#   PHASE=warmup settle.sh CCPACK_DIR   four chains side by side: each a cold warm-up in its build folders, then
#       `ccpack create` of those folders (the unsettled archive), then `ccpack create --settle` on the same folders
#       with the same command (the settled archive, with its settle report). Chains: serve and gpt2, each with the
#       defaults and with the settings of docs/TUNING.md ("pinned": one TRITON_PTXAS_PATH, no Triton bundle in FX
#       entries, no dynamic RBLOCK scaling for every run, one compile thread for the runs after the warm-up).
#   PHASE=runs settle.sh CCPACK_DIR     RUNS rounds (default 3) of, for each archive: a restore into fresh folders
#       (relocated, as a pod would) and a fresh process; the archives' order rotates every round. Then the table:
#       medians of the time to the first answers (serve) or the first step (gpt2), of the Triton kernels each pod
#       compiled (`ccpack status`), and of the coordinate descent each pod really ran (compilation_time_metrics),
#       with PASS/FAIL against: settled serve at most 0.5x unsettled; at most 10 kernels per pod; real coordinate
#       descent at most 10% of the cold run's benchmarks.
# CCPACK_DIR holds bin/ccpack (the unpacked portable package). Work folder $SETTLE_WORK (default /tmp/ccsettle),
# kept between the two commands; the log, reports and table are copied to $OUT when set, else stay there.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
D=$(cd "$(dirname "$0")" && pwd)
BIN=$1/bin/ccpack
W=${SETTLE_WORK:-/tmp/ccsettle}; R=${OUT:-$W}; PHASE=${PHASE:-warmup}; RUNS=${RUNS:-3}; SETTLE=${SETTLE:-3}
LOG=$W/settle.jsonl
PTX=$(python3 -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "bin", "ptxas"))')
[ -x "$PTX" ] || PTX=$(python3 -c 'import os, triton; print(os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas"))')
PINS="TRITON_PTXAS_PATH=$PTX TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE=0 TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=0"
CHAINS="serve-default serve-pinned gpt2-default gpt2-pinned"
step_cmd() {  # chain label: the workload's command line
  case $1 in serve-*) echo "python3 $D/serve_step.py $2";; gpt2-*) echo "python3 $D/hf_step.py $2 gpt2";; esac
}
chain_env() {  # chain warm(0/1): the chain's settings
  case $1 in *-pinned) echo "$PINS"; [ "$2" = 1 ] && echo "TORCHINDUCTOR_COMPILE_THREADS=1";; esac
}
warmup() {  # chain
  local c=$1 b=$W/$1/build
  env $(chain_env "$c" 0) TORCHINDUCTOR_CACHE_DIR=$b/ind TRITON_CACHE_DIR=$b/tri timeout 480 $(step_cmd "$c" "$c-cold") \
    2>"$W/$c-cold.err" | tail -1 >>"$LOG"
  $BIN create -q -o "$W/$c-unsettled.ccpack" --sign-key "$W/ci.key" --inductor-dir "$b/ind" --triton-dir "$b/tri" \
    || echo "{\"label\": \"FAIL create $c\"}" >>"$LOG"
  # The settle runs get the pods' settings (one compile thread for the pinned chains) through the command's env.
  env $(chain_env "$c" 1) timeout $((585 - SECONDS)) "$BIN" create --json -o "$W/$c-settled.ccpack" --sign-key "$W/ci.key" \
    --inductor-dir "$b/ind" --triton-dir "$b/tri" --settle="$SETTLE" -- $(step_cmd "$c" settle) \
    >"$W/settle-report-$c.json" 2>"$W/$c-settle.err" || echo "{\"label\": \"FAIL settle $c: exit $?\"}" >>"$LOG"
}
pod() {  # chain archive-kind round: a fresh relocated restore, a fresh process, then what it compiled
  local c=$1 k=$2 r=$3 p=$W/$1/pod
  rm -rf "$p"
  # The pod's settings are the container's, so restore sees them too: an archive warmed with settings that enter
  # the key (env.inductor) is refused where they are missing.
  env $(chain_env "$c" 1) $BIN restore "$W/$c-$k.ccpack" -q --trust "$W/ci.key.pub" --inductor-dir "$p/ind" --triton-dir "$p/tri" \
    || echo "{\"label\": \"FAIL restore $c $k\"}" >>"$LOG"
  env $(chain_env "$c" 1) TORCHINDUCTOR_CACHE_DIR=$p/ind TRITON_CACHE_DIR=$p/tri timeout 300 $(step_cmd "$c" "$c-$k-$r") \
    2>"$W/$c-$k-$r.err" | tail -1 >>"$LOG"
  local n; n=$($BIN status --json --inductor-dir "$p/ind" --triton-dir "$p/tri" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("compiled_since_restore", -1))')
  echo "{\"label\": \"status-$c-$k-$r\", \"compiled_since_restore\": $n}" >>"$LOG"
}
mkdir -p "$W" "$R"
if [ "$PHASE" = warmup ]; then
  rm -rf "${W:?}"/* ; : >"$LOG"
  $BIN keygen -q --out "$W/ci.key"
  for c in $CHAINS; do warmup "$c" & done; wait
  ls -l "$W"/*.ccpack >"$W/archives.txt"
  cp "$LOG" "$R/settle-warmup.jsonl"
  (cd "$W" && tar -czf "$R/settle-reports.tgz" archives.txt settle-report-*.json ./*-settle.err)
  for c in $CHAINS; do echo "== $c"; grep "^ccpack: " "$W/$c-settle.err"; done
  exit 0
fi
[ -f "$W/ci.key.pub" ] || { echo "settle.sh: no warm-up in $W (run PHASE=warmup first, on the same machine)" >&2; exit 1; }
ARCH=${ARCH:-"serve-default-unsettled serve-default-settled serve-pinned-settled gpt2-default-unsettled gpt2-default-settled gpt2-pinned-settled"}
for r in $(seq "$RUNS"); do
  list=($ARCH); n=${#list[@]}; off=$(( (r - 1) % n ))
  for j in $(seq 0 $((n - 1))); do a=${list[$(( (j + off) % n ))]}; pod "${a%-*}" "${a##*-}" "$r"; done
done
cp "$LOG" "$R/settle.jsonl"
python3 "$D/settle_table.py" "$LOG" | tee "$R/settle-table.txt"
