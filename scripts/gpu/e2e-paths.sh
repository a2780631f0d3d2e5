#!/bin/bash
# Control: warm run in the warm-up's own folders; then ccpack restore into the same paths, and into other paths.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
D=$(cd "$(dirname "$0")" && pwd)
# ccpack built on Debian 12, carried with its libraries (ldd: libtbb, libzstd, libcrypto) in $CCPACK_DIR.
CCPACK_DIR=${CCPACK_DIR:-$D}; export LD_LIBRARY_PATH=$CCPACK_DIR/lib; C=$CCPACK_DIR/ccpack
W=/tmp/ccw2; rm -rf $W; mkdir -p $W
# The signed flow, as in production: create signs with the key in CCPACK_SIGNING_KEY, restore trusts only its public key.
$C keygen -q --out $W/ci.key >/dev/null; export CCPACK_SIGNING_KEY="$(cat $W/ci.key)" CCPACK_TRUSTED_KEYS=$W/ci.key.pub
export TORCHINDUCTOR_CACHE_DIR=$W/build/ind TRITON_CACHE_DIR=$W/build/tri
echo "== cold"; timeout 300 python3 $D/step.py cold 2>&1 | tail -1
echo "== warm, same folders, no ccpack (control)"; timeout 200 python3 $D/step.py warm-control 2>&1 | tail -1
$C create -q -o $W/model.ccpack; echo create rc=$?
echo "== wipe, restore into the same paths"; rm -rf $W/build
TIMEFORMAT="restore %R s"; time $C restore $W/model.ccpack; echo rc=$?
timeout 200 python3 $D/step.py warm-restored-same-paths 2>&1 | tail -1
echo "== restore into other paths (a pod with other folders)"; export TORCHINDUCTOR_CACHE_DIR=$W/pod/ind TRITON_CACHE_DIR=$W/pod/tri
$C restore -q $W/model.ccpack; echo rc=$?
timeout 200 python3 $D/step.py warm-restored-other-paths 2>&1 | tail -1
echo "== nothing restored (cold again, for reference)"; export TORCHINDUCTOR_CACHE_DIR=$W/none/ind TRITON_CACHE_DIR=$W/none/tri
echo skipped
