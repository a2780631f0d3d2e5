#!/bin/bash
# One device run for this version's GPU proofs, sharing one cold warm-up (device time is scarce):
#   1. the portable package (only the .tar.gz carried, unpacked here, LD_LIBRARY_PATH unset): portable.sh on the
#      warm-up's folders (ldd, --version, create, verify, import, restore, no-op, byte compare);
#   2. purge on a copy of the warm-up polluted by hand: purge.sh (removes exactly the pollution, the warm run hits);
#   3. scale.sh: create / restore / no-op / fingerprint against stock, on the real fixture and on the warm-up.
#   The purge step first runs a warm control (step.py on an unpolluted copy, no purge) and hands purge.sh the
#   number of Triton kernel folders that control added (an FX-graph hit writes its bundled kernels back).
# Usage (repository root): [PROOF_STEPS="portable purge scale"] scripts/gpu/proof.sh PACKAGE.tar.gz [FIXTURE.tar.xz]
# Output: each script's PASS/FAIL and RESULT lines; everything also in $OUT/proof.log when $OUT is set.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
unset LD_LIBRARY_PATH
D=$(cd "$(dirname "$0")" && pwd)
TGZ=$(realpath "$1")
FIXTURE=${2:+$(realpath "$2")}
W=/tmp/ccpack-proof
rm -rf "$W"; mkdir -p "$W/pkg"
[ -n "${OUT:-}" ] && exec > >(tee "$OUT/proof.log") 2>&1
tar -xzf "$TGZ" -C "$W/pkg"
PKG=$(ls -d "$W"/pkg/ccpack-*)
echo "== package $(basename "$TGZ"), $(nproc) cores, $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'

echo "== warm-up (step.py cold)"
IND=$W/warm/ind TRI=$W/warm/tri
TORCHINDUCTOR_CACHE_DIR=$IND TRITON_CACHE_DIR=$TRI timeout 420 python3 "$D/step.py" cold 2>&1 | tail -1
echo "cache: $(find "$IND" "$TRI" -type f | wc -l) files, $(du -sh "$IND" "$TRI" | awk '{print $1}' | tr '\n' ' ')"

STEPS=${PROOF_STEPS:-portable purge scale}
step() { case " $STEPS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
if step portable; then
echo "== 1. portable package"
PORTABLE_WORK=$W/portable bash "$D/portable.sh" "$PKG" "$IND" "$TRI" 2>&1 | grep -E "^(PASS|FAIL)|RESULT|error" ; echo "portable rc=${PIPESTATUS[0]}"

fi
if step purge; then
echo "== 2. purge"
kernels() { find "$1" -mindepth 1 -maxdepth 1 -type d ! -name 'tmp.pid_*' | wc -l; }
mkdir -p "$W/ctl" "$W/purge-src"
cp -a "$IND" "$W/ctl/ind"; cp -a "$TRI" "$W/ctl/tri"; cp -a "$IND" "$W/purge-src/ind"; cp -a "$TRI" "$W/purge-src/tri"
k0=$(kernels "$W/ctl/tri")
TORCHINDUCTOR_CACHE_DIR=$W/ctl/ind TRITON_CACHE_DIR=$W/ctl/tri timeout 200 python3 "$D/step.py" warm-control 2>&1 | tail -1
k1=$(kernels "$W/ctl/tri")
echo "control (warm, no purge): triton kernel folders $k0 before, $k1 after (added $((k1 - k0)))"
PURGE_CONTROL_ADDED=$((k1 - k0)) PURGE_WORK=$W/purge timeout 300 bash "$D/purge.sh" "$PKG/bin/ccpack" "$W/purge-src/ind" "$W/purge-src/tri" 2>&1 | tail -40; echo "purge rc=${PIPESTATUS[0]}"
fi

step scale || { rm -rf "$W"; exit 0; }
echo "== 3. scale"
SCALE_WORK=$W/scale timeout 240 bash "$D/scale.sh" "$PKG/bin/ccpack" ${FIXTURE:+--fixture "$FIXTURE"} --cache "$IND" "$TRI" --reps 5 2>&1 |
  grep -v "allow-unsigned"; echo "scale rc=${PIPESTATUS[0]}"
rm -rf "$W"
