#!/bin/bash
# Relocation proof on a GPU (issue: a cache restored into other folders must be as warm as in its build folders).
#  A. Standalone Triton cache (Inductor's folder empty): first step after restoring the Triton folder into its
#     build path, into another folder (group files rewritten, the default), and into another folder with
#     --no-relocate (v1's behaviour), against cold.
#  B. Inductor + Triton: first step after `restore --at-build-paths` and after a restore into other folders.
# Prints one JSON line per run (first step, counters) and PASS/FAIL lines. Usage: relocate.sh [CCPACK_DIR]
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
D=$(cd "$(dirname "$0")" && pwd)
CCPACK_DIR=${1:-${CCPACK_DIR:-$D}}; export LD_LIBRARY_PATH=$CCPACK_DIR/lib; BIN=$CCPACK_DIR/ccpack
W=/tmp/ccreloc; rm -rf $W; mkdir -p $W
step() {  # label inductor-dir triton-dir
  TORCHINDUCTOR_CACHE_DIR=$2 TRITON_CACHE_DIR=$3 timeout 400 python3 $D/step.py "$1" 2>&1 | tail -1 | tee -a $W/runs.jsonl
}
first() { python3 -c "import json,sys; print([j for j in map(json.loads, open(sys.argv[1])) if j['label']==sys.argv[2]][-1]['first_step_s'])" $W/runs.jsonl "$1"; }

echo "== warm-up (cold) in the build folders"
step cold $W/build/ind $W/build/tri
mkdir -p $W/empty-ind
$BIN create -q -o $W/tri.ccpack --triton-dir $W/build/tri --inductor-dir $W/empty-ind; echo "create triton-only rc=$?"
$BIN create -q -o $W/all.ccpack --inductor-dir $W/build/ind --triton-dir $W/build/tri; echo "create rc=$?"

echo "== A. standalone Triton cache"
mv $W/build $W/build.orig
$BIN restore -q $W/tri.ccpack --inductor-dir $W/a1/unused --triton-dir $W/build/tri; echo "restore in place rc=$?"
step triton-in-place $W/a1/ind $W/build/tri
rm -rf $W/build
$BIN restore --json $W/tri.ccpack --inductor-dir $W/a2/unused --triton-dir $W/a2/tri | python3 -c "import json,sys; c=json.load(sys.stdin)['components'][1]; print('relocated', c['relocated'], 'group paths rewritten', c['group_paths_rewritten'])"
step triton-relocated $W/a2/ind $W/a2/tri
$BIN restore -q --no-relocate $W/tri.ccpack --inductor-dir $W/a3/unused --triton-dir $W/a3/tri
step triton-relocated-no-rewrite $W/a3/ind $W/a3/tri

echo "== B. Inductor + Triton: build paths against other folders"
rm -rf $W/build
eval "$($BIN restore $W/all.ccpack --at-build-paths --print-env)"; echo "at-build-paths: $TORCHINDUCTOR_CACHE_DIR $TRITON_CACHE_DIR"
step all-at-build-paths $TORCHINDUCTOR_CACHE_DIR $TRITON_CACHE_DIR
$BIN restore -q $W/all.ccpack --inductor-dir $W/b2/ind --triton-dir $W/b2/tri
step all-relocated $W/b2/ind $W/b2/tri

cold=$(first cold); inplace=$(first triton-in-place); reloc=$(first triton-relocated); norew=$(first triton-relocated-no-rewrite)
bp=$(first all-at-build-paths); other=$(first all-relocated)
echo "first step: cold $cold s; triton in place $inplace s, relocated $reloc s, relocated without rewrite $norew s; all at build paths $bp s, all relocated $other s"
python3 - "$inplace" "$reloc" "$norew" "$bp" "$other" <<'PY'
import sys
inplace, reloc, norew, bp, other = map(float, sys.argv[1:])
print("PASS" if reloc <= inplace * 1.10 + 1 else "FAIL", "standalone Triton relocated within 10%% of in place: %.1f vs %.1f s" % (reloc, inplace))
print("INFO", "without the rewrite: %.1f s" % norew)
print("PASS" if other <= bp * 1.10 + 0.5 else "FAIL", "Inductor+Triton relocated within 10%% of build paths: %.2f vs %.2f s" % (other, bp))
PY
