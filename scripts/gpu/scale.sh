#!/bin/bash
# Restore and no-op costs on a GPU host (the H200 machine: 16 cores), where restore is not bound by creating files
# as it is on the 2-core build machine. For each cache (the real fixture when given, and/or cache folders given),
# alternating ccpack and stock, REPS repetitions each (default 5), medians printed:
#   create      ccpack create            vs  tar -c | zstd -3 --long=27 -T0
#   restore     ccpack restore into fresh empty folders (removed before, not timed)
#               vs  tar -I 'zstd --long=27' -xf into a fresh folder
#   decompress  zstd -d -T1 of ccpack's payload to /dev/null: the single-threaded floor of a one-frame restore
#   no-op       ccpack restore when the folders already hold the archive: probe memo on (a hit after the first
#               run) and off (CCPACK_PROBE_CACHE=off: the Python probe runs every time)
#   fingerprint ccpack fingerprint, memo on and off
# Usage: scale.sh CCPACK_BINARY [--fixture FIXTURE.tar.xz] [--cache INDUCTOR_DIR TRITON_DIR] [--reps N]
# Prints one "RESULT name key=value ..." line per cache; needs tar, zstd and python3 (for medians and timing).
set -u
unset LD_LIBRARY_PATH
BIN=$(realpath "$1"); shift
fixture="" ind="" tri="" reps=5
while [ $# -gt 0 ]; do
  case $1 in
    --fixture) fixture=$(realpath "$2"); shift 2 ;;
    --cache) ind=$(realpath "$2"); tri=$(realpath "$3"); shift 3 ;;
    --reps) reps=$2; shift 2 ;;
    *) echo "scale.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
command -v zstd >/dev/null || { echo "scale.sh: zstd not found" >&2; exit 2; }
W=${SCALE_WORK:-/tmp/ccpack-scale}
rm -rf "$W"; mkdir -p "$W"
export CCPACK_ALLOW_UNSIGNED=1 CCPACK_ON_MISMATCH=force
# Wall seconds of a command (stdout/stderr discarded); a failure prints and returns 1.
t() { python3 - "$@" <<'PY'
import subprocess, sys, time
t0 = time.perf_counter()
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
dt = time.perf_counter() - t0
if r.returncode != 0:
    sys.stderr.write("FAILED (%d): %s\n%s" % (r.returncode, " ".join(sys.argv[1:]), r.stderr.decode(errors="replace")[-2000:]))
    sys.exit(1)
print("%.4f" % dt)
PY
}
median() { python3 -c 'import statistics,sys; v=[float(x) for x in sys.argv[1:]]; print("%.4f" % statistics.median(v) if v else "nan")' "$@"; }

measure() {  # name inductor_dir triton_dir
  local name=$1 src_ind=$2 src_tri=$3 i
  local C="$W/$name"; mkdir -p "$C"
  local files; files=$(find "$src_ind" "$src_tri" -type f | wc -l)
  local bytes; bytes=$(du -sb "$src_ind" "$src_tri" | awk '{s+=$1} END {print s}')
  local cc=() sc=() cr=() sr=() dz=() non=() noff=() fon=() foff=()
  for ((i = 0; i < reps; i++)); do
    sync
    cc+=("$(t "$BIN" create -q -o "$C/a.ccpack" --inductor-dir "$src_ind" --triton-dir "$src_tri")") || return 1
    sc+=("$(t sh -c "tar -C '$(dirname "$src_ind")' -c '$(basename "$src_ind")' -C '$(dirname "$src_tri")' '$(basename "$src_tri")' | zstd -q -3 --long=27 -T0 -o '$C/s.tar.zst' -f")") || return 1
  done
  for ((i = 0; i < reps; i++)); do
    rm -rf "$C/r" "$C/s"; mkdir -p "$C/s"; sync
    cr+=("$(t "$BIN" restore -q "$C/a.ccpack" --inductor-dir "$C/r/ind" --triton-dir "$C/r/tri")") || return 1
    sync
    sr+=("$(t tar -I 'zstd --long=27' -xf "$C/s.tar.zst" -C "$C/s")") || return 1
    dz+=("$(t zstd -q -d -T1 -c "$C/a.ccpack" -o /dev/null -f)") || return 1
  done
  # No-op: the folders hold the archive now. Memo on: the first run fills it, the next ones hit.
  CCPACK_PROBE_CACHE="$W/memo.json" "$BIN" restore -q "$C/a.ccpack" --inductor-dir "$C/r/ind" --triton-dir "$C/r/tri"
  for ((i = 0; i < reps; i++)); do
    non+=("$(CCPACK_PROBE_CACHE="$W/memo.json" t "$BIN" restore -q "$C/a.ccpack" --inductor-dir "$C/r/ind" --triton-dir "$C/r/tri")") || return 1
    noff+=("$(CCPACK_PROBE_CACHE=off t "$BIN" restore -q "$C/a.ccpack" --inductor-dir "$C/r/ind" --triton-dir "$C/r/tri")") || return 1
    fon+=("$(CCPACK_PROBE_CACHE="$W/memo.json" t "$BIN" fingerprint)") || return 1
    foff+=("$(CCPACK_PROBE_CACHE=off t "$BIN" fingerprint)") || return 1
  done
  CCPACK_PROBE_CACHE="$W/memo.json" "$BIN" fingerprint | tail -1
  local mcc msc mcr msr
  mcc=$(median "${cc[@]}"); msc=$(median "${sc[@]}"); mcr=$(median "${cr[@]}"); msr=$(median "${sr[@]}")
  echo "RESULT $name files=$files bytes=$bytes archive=$(stat -c %s "$C/a.ccpack") stock_archive=$(stat -c %s "$C/s.tar.zst")" \
    "create=$mcc stock_create=$msc create_ratio=$(python3 -c "print('%.2f' % ($mcc / $msc))")" \
    "restore=$mcr stock_restore=$msr restore_ratio=$(python3 -c "print('%.2f' % ($mcr / $msr))")" \
    "zstd_d_T1=$(median "${dz[@]}") noop_memo=$(median "${non[@]}") noop_nomemo=$(median "${noff[@]}")" \
    "fingerprint_memo=$(median "${fon[@]}") fingerprint_nomemo=$(median "${foff[@]}")"
  echo "  samples: restore ${cr[*]} | stock ${sr[*]} | noop(memo) ${non[*]} | noop(off) ${noff[*]}"
  rm -rf "$C/r" "$C/s"
}

echo "== $(nproc) cores, $(uname -r), $(python3 --version 2>&1), ccpack: $("$BIN" --version | head -1)"
if [ -n "$fixture" ]; then
  mkdir -p "$W/fixture"; xz -dc "$fixture" | tar -xf - -C "$W/fixture"
  measure fixture "$W/fixture/inductor_cache" "$W/fixture/triton_cache" || echo "FAIL fixture"
fi
if [ -n "$ind" ]; then
  measure warmup "$ind" "$tri" || echo "FAIL warmup"
fi
rm -rf "$W"
