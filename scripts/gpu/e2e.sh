#!/bin/bash
# End-to-end proof on a GPU machine (the device tool): cold torch.compile warm-up, ccpack create, wipe, restore
# into other folders (a new pod), warm run; timings, 8 concurrent ranks, a flipped byte. Output: one JSON line a run.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
D=$(cd "$(dirname "$0")" && pwd)
# ccpack built on Debian 12, carried with its libraries (ldd: libtbb, libzstd, libcrypto) in $CCPACK_DIR.
CCPACK_DIR=${CCPACK_DIR:-$D}; export LD_LIBRARY_PATH=$CCPACK_DIR/lib; C=$CCPACK_DIR/ccpack
W=/tmp/ccw; rm -rf $W; mkdir -p $W
# The signed flow, as in production: create signs with the key in CCPACK_SIGNING_KEY, restore trusts only its public key.
$C keygen -q --out $W/ci.key >/dev/null; export CCPACK_SIGNING_KEY="$(cat $W/ci.key)" CCPACK_TRUSTED_KEYS=$W/ci.key.pub
python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__, torch.cuda.get_device_name())'
echo "== cold"; TORCHINDUCTOR_CACHE_DIR=$W/build/ind TRITON_CACHE_DIR=$W/build/tri timeout 420 python3 $D/step.py cold 2>&1 | tail -1
du -sh $W/build/ind $W/build/tri; find $W/build -type f | wc -l
echo "== create"; export TORCHINDUCTOR_CACHE_DIR=$W/build/ind TRITON_CACHE_DIR=$W/build/tri; TIMEFORMAT="create %R s"; time $C create -o $W/model.ccpack; echo rc=$?
$C inspect $W/model.ccpack | head -8
echo "== stock create"; ( cd $W/build && TIMEFORMAT="stock create %R s"; time sh -c 'tar -c ind tri | zstd -q -3 --long=27 -T0 > ../stock.tar.zst' ); ls -l $W/stock.tar.zst
echo "== wipe"; rm -rf $W/build
echo "== restore (new pod, other folders)"; export TORCHINDUCTOR_CACHE_DIR=$W/pod/ind TRITON_CACHE_DIR=$W/pod/tri
TIMEFORMAT="restore %R s"; time $C restore $W/model.ccpack; echo rc=$?
TIMEFORMAT="noop restore %R s"; time $C restore -q $W/model.ccpack; echo rc=$?
mkdir -p $W/st; TIMEFORMAT="stock restore %R s"; time tar -I "zstd --long=27" -xf $W/stock.tar.zst -C $W/st
echo "== 8 ranks at once (fresh folders)"; export TORCHINDUCTOR_CACHE_DIR=$W/pod8/ind TRITON_CACHE_DIR=$W/pod8/tri
for i in 1 2 3 4 5 6 7 8; do ($C restore -q --json $W/model.ccpack > $W/rank$i.json; echo "rank$i rc=$?") & done; wait
grep -h -o '"status": "[a-z ]*"' $W/rank*.json | sort | uniq -c
export TORCHINDUCTOR_CACHE_DIR=$W/pod/ind TRITON_CACHE_DIR=$W/pod/tri
echo "== warm after restore"; timeout 300 python3 $D/step.py warm-restored 2>&1 | tail -1
echo "== flipped byte"; cp $W/model.ccpack $W/bad.ccpack; s=$(stat -c %s $W/bad.ccpack); printf '\x55' | dd of=$W/bad.ccpack bs=1 seek=$((s/2)) conv=notrunc status=none
$C verify $W/bad.ccpack; echo rc=$?
