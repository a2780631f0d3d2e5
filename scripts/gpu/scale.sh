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
#   bounds      what a restore here cannot beat: the largest zstd frame of ccpack's payload decoded alone
#               (zstd -d -T1; frames decode in parallel, so the largest is the critical path), and the restore
#               floor (scripts/bench/benchkit/floor.c, built with the host's C compiler when there is one: only creating
#               the same folders and files from the tar stream in memory) with 1 thread and one per core
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

# The largest frame's decode time and the restore floor for the archive $1/a.ccpack; prints one BOUNDS line.
bounds() {
  local C=$1 i fz=() f1=() fn=() big
  big=$(python3 - "$C/a.ccpack" "$C/big.zst" <<'PY'
import json, struct, sys
with open(sys.argv[1], "rb") as f:
    head = f.read(72)
    n = struct.unpack_from("<I", head, 4)[0]
    m = struct.unpack_from("<I", head, 64)[0]
    f.seek(68)
    manifest = json.loads(f.read(m))
    frame = max(manifest["frames"], key=lambda fr: fr["raw_size"])
    f.seek(8 + n + frame["offset"])
    with open(sys.argv[2], "wb") as out:
        out.write(f.read(frame["compressed_size"]))
print("%d/%d" % (frame["raw_size"], len(manifest["frames"])))
PY
) || return 1
  for ((i = 0; i < reps; i++)); do fz+=("$(t zstd -q -d -T1 --long=27 -c "$C/big.zst" -o /dev/null -f)") || return 1; done
  local cc_bin="" floor_line="floor=not-measured(no C compiler)"
  for c in cc gcc clang; do command -v "$c" >/dev/null && { cc_bin=$c; break; }; done
  if [ -n "$cc_bin" ] && "$cc_bin" -O2 -pthread -o "$W/floor" "$(dirname "$0")/../bench/benchkit/floor.c" 2>/dev/null; then
    zstd -q -dc "$C/a.ccpack" > "$C/t.tar"
    for ((i = 0; i < reps; i++)); do
      for n in 1 "$(nproc)"; do
        rm -rf "$C/fl"; mkdir -p "$C/fl"; sync
        local v; v=$("$W/floor" "$C/t.tar" "$C/fl" "$n" | sed -n 's/.*create_s=\([0-9.]*\).*/\1/p')
        if [ "$n" = 1 ]; then f1+=("$v"); else fn+=("$v"); fi
      done
    done
    floor_line="floor_1thread=$(median "${f1[@]}") floor_$(nproc)threads=$(median "${fn[@]}")"
    rm -rf "$C/fl" "$C/t.tar"
  fi
  echo "BOUNDS largest_frame_raw/frames=$big largest_frame_zstd_d_T1=$(median "${fz[@]}") $floor_line"
  rm -f "$C/big.zst"
}

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
  bounds "$C" || return 1
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
