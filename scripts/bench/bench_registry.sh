#!/usr/bin/env bash
# Times `ccpack restore oci://` from a loopback docker-registry against a local `ccpack restore` of the same
# archive, and a refused registry restore (no archive fits this machine).
#
# Why: restore oci:// streams the payload into staging while it downloads, so it should cost little more than a
# local restore (target: at most 1.3x), and a pod that fits no archive must learn it fast (target: under 100 ms).
# How: the cache is CACHE_DIR (an inductor cache folder), else the real fixture (../shared/fixtures) unpacked into
# a temporary folder, else a synthetic cache (scripts/bench/gen_synthetic_cache.py --scale 0.25). One registry on a free
# 127.0.0.1 port (storage in the temporary folder, stopped by PID), one push, then REPS (default 3) alternating
# runs of each restore into fresh folders; medians are printed with PASS/FAIL per target.
# Usage: scripts/bench/bench_registry.sh [path/to/ccpack] [CACHE_DIR]
set -euo pipefail
# The benchmark's archive is unsigned: push and restore accept it only with the opt-out.
export CCPACK_ALLOW_UNSIGNED=1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CCPACK=$(realpath "${1:-$ROOT/build/ccpack}")
CACHE=${2:-}
REPS=${REPS:-3}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
HELP="$ROOT/tests/cli/helpers/registry_helpers.py"
W=$(mktemp -d "${TMPDIR:-/tmp}/ccpack-bench-registry.XXXXXX")
REG_PID=""
trap '[ -n "$REG_PID" ] && kill "$REG_PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$W"' EXIT

if [ -z "$CACHE" ]; then
  FIXTURE="$ROOT/../shared/fixtures/real-cache-h200.tar.xz"
  if [ -f "$FIXTURE" ]; then
    mkdir -p "$W/cache" && tar -xJf "$FIXTURE" -C "$W/cache"
    IND=$(find "$W/cache" -maxdepth 3 -type d -name 'inductor*' | head -1)
    TRI=$(find "$W/cache" -maxdepth 3 -type d -name 'triton*' | head -1)
  else
    "$PY" "$ROOT/scripts/bench/gen_synthetic_cache.py" "$W/cache" --scale 0.25 >/dev/null
    IND="$W/cache/inductor_cache" TRI="$W/cache/triton_cache"
  fi
else
  IND="$CACHE" TRI=""
fi
DIRS=(--inductor-dir "$IND")
[ -n "$TRI" ] && DIRS+=(--triton-dir "$TRI")
"$CCPACK" create -q -o "$W/a.ccpack" "${DIRS[@]}"
printf '{"schema":1,"fields":{"cpu.arch":{"value":"aarch64","source":"bench"}}}\n' >"$W/other.json"  # refused: another CPU

PORT=$("$PY" "$HELP" free-port)
mkdir -p "$W/reg"
printf 'version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: 127.0.0.1:%s\n' "$W/reg" "$PORT" >"$W/reg.yml"
docker-registry serve "$W/reg.yml" >"$W/reg.log" 2>&1 &
REG_PID=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/v2/" >/dev/null && break; sleep 0.1; done
"$CCPACK" push -q --plain-http "$W/a.ccpack" "127.0.0.1:$PORT/bench:v1"

ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
local_ms=() oci_ms=() refused_ms=()
for i in $(seq "$REPS"); do
  sync; sleep 0.5
  t=$(date +%s%N); "$CCPACK" restore -q "$W/a.ccpack" --inductor-dir "$W/l$i/ind" --triton-dir "$W/l$i/tri"; local_ms+=("$(ms "$t")")
  sync; sleep 0.5
  t=$(date +%s%N); "$CCPACK" restore -q --plain-http "oci://127.0.0.1:$PORT/bench:v1" --inductor-dir "$W/o$i/ind" --triton-dir "$W/o$i/tri"
  oci_ms+=("$(ms "$t")")
  diff -r --exclude=.ccpack-marker.json "$W/l$i" "$W/o$i" >/dev/null || { echo "FAIL: registry restore differs from local restore"; exit 1; }
  t=$(date +%s%N)
  CCPACK_FINGERPRINT_FILE="$W/other.json" "$CCPACK" restore -q --plain-http "oci://127.0.0.1:$PORT/bench:v1" \
    --inductor-dir "$W/r$i/ind" 2>/dev/null && { echo "FAIL: refused restore succeeded"; exit 1; }
  refused_ms+=("$(ms "$t")")
  rm -rf "$W/l$i" "$W/o$i"
done
L=$(median "${local_ms[@]}") O=$(median "${oci_ms[@]}") R=$(median "${refused_ms[@]}")
SIZE=$(stat -c %s "$W/a.ccpack")
RATIO=$(awk -v o="$O" -v l="$L" 'BEGIN{printf "%.2f", (l > 0 ? o / l : 0)}')
echo "archive            $((SIZE / 1000000)) MB ($(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
echo "local restore      ${L} ms (median of $REPS: ${local_ms[*]})"
echo "restore oci://     ${O} ms (median of $REPS: ${oci_ms[*]})  ratio ${RATIO}x  $(awk -v r="$RATIO" 'BEGIN{print (r <= 1.3 ? "PASS" : "FAIL")}') (target <= 1.3x)"
echo "refused oci://     ${R} ms (median of $REPS: ${refused_ms[*]})  $([ "$R" -lt 100 ] && echo PASS || echo FAIL) (target < 100 ms)"
