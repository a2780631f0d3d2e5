#!/bin/bash
# Purge proof on a GPU machine (docs/PURGE.md): a real torch.compile warm-up is polluted by hand with what
# `ccpack purge` must remove, and only that; afterwards the next run still hits the cache.
#   1. warm-up: step.py cold into fresh TORCHINDUCTOR_CACHE_DIR / TRITON_CACHE_DIR (or the folders given);
#   2. baseline: `purge --dry-run --json` on the clean cache (anything it lists must be debris: lock files);
#   3. pollution: (a) a real Triton kernel folder copied under a new hash name with its .json "target" set to
#      another arch (also one under <inductor>/triton/<device>/ when that subtree exists); (b) a .so built here
#      whose DT_NEEDED library was deleted and whose RUNPATH names a fake .../nvidia/cu13/lib; (c) a lock file and
#      a dead writer's tmp.pid_* folder;
#   4. `purge --dry-run --json` removes nothing and lists exactly baseline + pollution, each with its rule;
#   5. `purge --json` removes exactly those: the file lists before/after differ by exactly that set;
#   6. warm run (step.py): its compile time, Inductor's cache counters, and how many Triton kernel folders and FX
#      graph entries it had to add (0 when everything hit). PASS/FAIL lines; exit 1 if any FAIL.
# Usage: purge.sh [--no-gpu] CCPACK [INDUCTOR_DIR TRITON_DIR]
#   CCPACK: the ccpack binary (default $CCPACK), e.g. the unpacked portable package's bin/ccpack.
#   INDUCTOR_DIR TRITON_DIR: an existing warm-up's folders, polluted and purged in place (no warm-up then).
#   --no-gpu: no warm-up and no warm run (checks steps 2-5 on the folders given, e.g. a copy of a real cache;
#   the arch comes from `ccpack fingerprint`, so the GPU must be probed, or stubbed with CCPACK_NVML_LIBRARY).
# Device time: one cold warm-up (about 4 min on an H200) and one warm run; bounded by timeouts to ~8 min.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
D=$(cd "$(dirname "$0")" && pwd)
gpu=1
[ "${1:-}" = --no-gpu ] && { gpu=0; shift; }
BIN=${1:-${CCPACK:-}}
[ -n "$BIN" ] && [ -x "$BIN" ] || { echo "usage: $0 [--no-gpu] CCPACK [INDUCTOR_DIR TRITON_DIR] (CCPACK: the ccpack binary)" >&2; exit 2; }
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
W=${PURGE_WORK:-/tmp/ccpack-purge-proof}
rm -rf "$W"; mkdir -p "$W"
fails=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
finish() { [ "$fails" -eq 0 ] && { echo "PASS purge proof: all checks"; exit 0; }; echo "FAIL purge proof: $fails checks failed"; exit 1; }

# 1. The cache.
if [ $# -ge 3 ]; then
  IND=$(cd "$2" && pwd); TRI=$(cd "$3" && pwd)
elif [ "$gpu" -eq 1 ]; then
  IND=$W/ind TRI=$W/tri
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__, torch.cuda.get_device_name())'
  echo "== 1. warm-up (step.py cold)"
  TORCHINDUCTOR_CACHE_DIR=$IND TRITON_CACHE_DIR=$TRI timeout 330 python3 "$D/step.py" cold 2>&1 | tail -1 | tee "$W/cold.json"
  python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$W/cold.json" 2>/dev/null || { fail "the warm-up did not finish"; finish; }
else
  echo "usage: --no-gpu needs INDUCTOR_DIR TRITON_DIR" >&2; exit 2
fi
[ -d "$IND" ] && [ -d "$TRI" ] || { fail "no cache folders ($IND, $TRI)"; finish; }
echo "cache: $(find "$IND" "$TRI" -type f | wc -l) files"
purge() { "$BIN" purge --inductor-dir "$IND" --triton-dir "$TRI" "$@"; }
listing() { find "$IND" "$TRI" -mindepth 1 | LC_ALL=C sort; }

# The arch to pretend: another than this machine's (ccpack's own probe says which).
"$BIN" fingerprint --json >"$W/fp.json" || fail "ccpack fingerprint rc=$?"
here=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["fields"]["gpu.arch"]["value"] or "")' "$W/fp.json")
case $here in sm_*) ;; *) fail "ccpack fingerprint gives no gpu.arch ('$here'): the kernel rule cannot judge"; finish ;; esac
other=80; [ "$here" = sm_80 ] && other=90
echo "gpu.arch here: $here; polluted kernels claim sm_$other"

echo "== 2. baseline: what purge lists on the clean cache"
purge --dry-run --json >"$W/baseline.json" 2>"$W/baseline.err" || fail "baseline dry run rc=$?: $(cat "$W/baseline.err")"

echo "== 3. pollution"
: >"$W/polluted.txt"
# (a) kernel_copy SRC_FOLDER DST_PARENT: SRC's kernel folder under a new hash name, its kernel .json for sm_$other.
kernel_copy() {
  local name dst
  name=$(python3 -c 'import base64,hashlib,sys; print(base64.b32encode(hashlib.sha256(sys.argv[1].encode()).digest()).decode().rstrip("="))' "ccpack purge proof $2")
  dst=$2/$name
  cp -a "$1" "$dst" && python3 - "$dst" "$other" <<'PY' && echo "$dst" >>"$W/polluted.txt"
import glob, json, os, sys
n = 0
for f in glob.glob(os.path.join(sys.argv[1], "*.json")):
    if os.path.basename(f).startswith("__grp__"):
        continue
    j = json.load(open(f))
    if isinstance(j.get("target"), dict):
        j["target"]["arch"] = int(sys.argv[2]); json.dump(j, open(f, "w")); n += 1
sys.exit(0 if n else 1)
PY
}
# A kernel folder: one holding a <kernel>.json with a "target" (not Triton's cuda_utils / launcher folders).
first_kernel() {
  local f
  for f in $(grep -l --include='*.json' -e '"target"' -r "$1" 2>/dev/null | LC_ALL=C sort); do
    case $(basename "$f") in __grp__*) continue ;; esac
    [ "$(dirname "$(dirname "$f")")" = "$1" ] && { dirname "$f"; return 0; }
  done
  return 1
}
if k=$(first_kernel "$TRI"); then
  kernel_copy "$k" "$TRI" && pass "(a) $(basename "$k") copied to $(tail -1 "$W/polluted.txt"), target sm_$other" || fail "(a) cannot copy $k"
else
  fail "(a) no Triton kernel folder with a target in $TRI"
fi
for dev in "$IND"/triton/*/; do
  [ -d "$dev" ] || continue
  dev=${dev%/}
  if k=$(first_kernel "$dev"); then
    kernel_copy "$k" "$dev" && pass "(a) inductor's $(basename "$k") copied to $(tail -1 "$W/polluted.txt")" || fail "(a) cannot copy $k"
  fi
  break
done
# (b) A .so needing a library that was deleted, with RUNPATH into a fake CUDA 13 wheel folder.
compiler=""
for c in gcc cc clang; do command -v "$c" >/dev/null && { compiler=$c; break; }; done
if [ -n "$compiler" ]; then
  mkdir -p "$W/so"
  printf 'int ccpack_gone(void) { return 13; }\n' >"$W/so/gone.c"
  printf 'int ccpack_gone(void);\nint ccpack_ext(void) { return ccpack_gone(); }\n' >"$W/so/ext.c"
  if "$compiler" -shared -fPIC -o "$W/so/libccpack_gone.so.13" -Wl,-soname,libccpack_gone.so.13 "$W/so/gone.c" &&
     "$compiler" -shared -fPIC -o "$IND/ccpack_proof_ext.so" "$W/so/ext.c" "$W/so/libccpack_gone.so.13" \
       -Wl,--enable-new-dtags -Wl,-rpath,"$W/so/site-packages/nvidia/cu13/lib"; then
    rm -f "$W/so/libccpack_gone.so.13"
    echo "$IND/ccpack_proof_ext.so" >>"$W/polluted.txt"
    pass "(b) $IND/ccpack_proof_ext.so built with $compiler (needs libccpack_gone.so.13, now deleted)"
  else
    fail "(b) cannot build the .so with $compiler"
  fi
else
  fail "(b) no C compiler (gcc, cc, clang) to build a .so"
fi
# (c) A lock file and a dead writer's temporary folder (process ids stop at 2^22, so 999999999 never runs).
: >"$TRI/ccpack_proof.lock" && echo "$TRI/ccpack_proof.lock" >>"$W/polluted.txt"
mkdir -p "$TRI/tmp.pid_999999999_ccpackproof" && echo partial >"$TRI/tmp.pid_999999999_ccpackproof/k.cubin" &&
  echo "$TRI/tmp.pid_999999999_ccpackproof" >>"$W/polluted.txt"
echo "polluted: $(wc -l <"$W/polluted.txt") entries"

# check_report REPORT BEFORE AFTER DRY: the report lists exactly baseline + pollution with the expected rules,
# and the listing changed by exactly the entries removed (nothing at all for a dry run).
check_report() {
  python3 - "$@" "$W/baseline.json" "$W/polluted.txt" <<'PY'
import json, sys
report, before, after, dry, baseline, polluted = sys.argv[1:7]
try:
    r = json.load(open(report))
except ValueError:
    print("FAIL %s is not a JSON report" % report); sys.exit(1)
base = {e["path"]: e for e in json.load(open(baseline))["removed"]}
want = set(base) | set(open(polluted).read().split())
got = {e["path"]: e for e in r["removed"]}
rule = lambda p: "debris" if p.endswith(".lock") or "/tmp.pid_" in p else "library" if p.endswith(".so") else "triton-kernel"
ok = True
def check(cond, what):
    global ok
    print(("PASS " if cond else "FAIL ") + what); ok &= cond
check(set(got) == want, "%s lists exactly the %d polluted + %d baseline entries (extra: %s; missing: %s)" %
      ("dry run" if dry == "1" else "purge", len(want) - len(base), len(base), sorted(set(got) - want), sorted(want - set(got))))
mine = set(open(polluted).read().split())
check(all(got[p]["rule"] == rule(p) for p in got if p in mine), "each polluted entry with its rule: " +
      "; ".join("%s [%s]: %s" % (p.rsplit("/", 2)[-1], got[p]["rule"], got[p]["reason"]) for p in sorted(got)))
check(all(base[p]["rule"] == "debris" for p in base), "baseline holds only debris: %s" % sorted(base))
b, a = open(before).read().split("\n"), open(after).read().split("\n")
gone = set(b) - set(a)
expect = set() if dry == "1" else {x for x in b if any(x == p or x.startswith(p + "/") for p in want)}
check(gone == expect and set(a) <= set(b), "the listing lost exactly %d entries (%d removed: %s)" %
      (len(expect), len(gone), sorted(gone - expect)[:10] or "as expected"))
sys.exit(0 if ok else 1)
PY
}

echo "== 4. purge --dry-run --json"
listing >"$W/before.txt"
purge --dry-run --json >"$W/dry.json" 2>"$W/dry.err"; rc=$?
[ $rc -eq 0 ] && pass "dry run rc=0" || fail "dry run rc=$rc: $(cat "$W/dry.err")"
listing >"$W/after-dry.txt"
check_report "$W/dry.json" "$W/before.txt" "$W/after-dry.txt" 1 || fails=$((fails + 1))

echo "== 5. purge --json"
TIMEFORMAT="%R"
t=$( { time purge --json >"$W/purge.json" 2>"$W/purge.err"; } 2>&1 ); rc=$?
[ $rc -eq 0 ] && pass "purge rc=0 in ${t}s" || fail "purge rc=$rc: $(cat "$W/purge.err")"
listing >"$W/after.txt"
check_report "$W/purge.json" "$W/before.txt" "$W/after.txt" 0 || fails=$((fails + 1))
purge --json >"$W/again.json" 2>/dev/null
python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["removed"] == [] else 1)' "$W/again.json" &&
  pass "a second purge removes nothing" || fail "a second purge still removes: $(head -c 600 "$W/again.json")"

[ "$gpu" -eq 1 ] || finish
echo "== 6. warm run after the purge"
kernels() { find "$TRI" -mindepth 1 -maxdepth 1 -type d ! -name 'tmp.pid_*' | wc -l; }
graphs() { find "$IND/fxgraph" -type f 2>/dev/null | wc -l; }
k0=$(kernels); g0=$(graphs)
TORCHINDUCTOR_CACHE_DIR=$IND TRITON_CACHE_DIR=$TRI timeout 150 python3 "$D/step.py" warm-after-purge 2>&1 | tail -1 | tee "$W/warm.json"
k1=$(kernels); g1=$(graphs)
echo "triton kernel folders: $k0 before the warm run, $k1 after; fx graph files: $g0 before, $g1 after"
python3 - "$W/warm.json" "$W/cold.json" "$k0" "$k1" "$g0" "$g1" <<'PY'
import json, os, sys
def load(path):
    try:
        return json.load(open(path))
    except (OSError, ValueError):
        return None
warm, cold = load(sys.argv[1]), load(sys.argv[2])
if warm is None:
    print("FAIL the warm run did not finish: %s" % open(sys.argv[1]).read()[-600:]); sys.exit(1)
k0, k1, g0, g1 = map(int, sys.argv[3:7])
c = warm["inductor_counters"]
hits = {k: v for k, v in c.items() if "hit" in k}
# Cache-folder misses only: async_compile_* and generated_module_* count in-process memo lookups, which miss the
# same way in a cold run, a warm control and after a purge (seen on the H200: 85 and 118 in all three).
misses = {k: v for k, v in c.items() if k in ("fxgraph_cache_miss", "aot_autograd_cache_miss") and v}
# Triton kernel folders a warm run adds: an FX-graph hit writes the kernels its bundle carries into the Triton
# cache, so a warm control run (no purge) adds some too. With PURGE_CONTROL_ADDED (that control's count) the
# purged cache must add no more; without it the count is only reported.
control = os.environ.get("PURGE_CONTROL_ADDED")
print("warm first step %.2f s%s; counters %s" % (warm["first_step_s"], " (cold %.2f s)" % cold["first_step_s"] if cold else "", c))
ok = True
for cond, what in [(c.get("fxgraph_cache_hit", 0) > 0 and not misses, "Inductor hits (fxgraph_cache_hit %d, misses %s)" % (c.get("fxgraph_cache_hit", 0), misses or "none")),
                   (control is None or k1 - k0 <= int(control),
                    "Triton: the warm run added %d kernel folders (%d before, %d after; a warm control run without purge added %s)"
                    % (k1 - k0, k0, k1, control if control is not None else "not measured")),
                   (g1 == g0, "no FX graph added (%d files before, %d after)" % (g0, g1)),
                   (cold is None or warm["first_step_s"] < cold["first_step_s"] / 2, "warm first step under half the cold one")]:
    print(("PASS " if cond else "FAIL ") + what); ok &= cond
sys.exit(0 if ok else 1)
PY
[ $? -eq 0 ] || fails=$((fails + 1))
finish
