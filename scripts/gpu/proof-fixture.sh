#!/bin/bash
# The purge and scale proofs on the real fixture instead of a fresh warm-up (no cold compile: the fixture is this
# workload's cache from an H200 with the same torch and triton), with a warm control run:
#   1. create an archive of the fixture; restore it twice, into control folders and into purge folders;
#   2. control: step.py warm on the control folders, counting the Triton kernel folders it adds;
#   3. purge.sh on the purge folders (pollute, dry run, purge, warm run) with that count as PURGE_CONTROL_ADDED;
#   4. scale.sh on the fixture (create / restore / decompress / no-op / fingerprint against stock).
# Usage (repository root): scripts/gpu/proof-fixture.sh PACKAGE.tar.gz FIXTURE.tar.xz [ZSTD_DIR]
#   ZSTD_DIR: a folder with a zstd to put first on PATH, for machines without one (stock tools need it).
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
unset LD_LIBRARY_PATH
D=$(cd "$(dirname "$0")" && pwd)
TGZ=$(realpath "$1"); FIXTURE=$(realpath "$2")
[ -n "${3:-}" ] && export PATH="$(realpath "$3"):$PATH"
W=/tmp/ccpack-proof-fixture
rm -rf "$W"; mkdir -p "$W/pkg" "$W/fixture"
tar -xzf "$TGZ" -C "$W/pkg"
PKG=$(ls -d "$W"/pkg/ccpack-*); BIN=$PKG/bin/ccpack
echo "== $("$BIN" --version | head -1), $(nproc) cores, $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1), zstd: $(command -v zstd)"
xz -dc "$FIXTURE" | tar -xf - -C "$W/fixture"
export CCPACK_ALLOW_UNSIGNED=1
"$BIN" create -q -o "$W/fixture.ccpack" --inductor-dir "$W/fixture/inductor_cache" --triton-dir "$W/fixture/triton_cache" ||
  { echo "FAIL create from the fixture"; exit 1; }
for d in ctl pur; do
  "$BIN" restore -q --on-mismatch force "$W/fixture.ccpack" --inductor-dir "$W/$d/ind" --triton-dir "$W/$d/tri" ||
    { echo "FAIL restore into $d"; exit 1; }
done

echo "== control: warm run on the restored fixture, no purge"
kernels() { find "$1" -mindepth 1 -maxdepth 1 -type d ! -name 'tmp.pid_*' | wc -l; }
k0=$(kernels "$W/ctl/tri")
TORCHINDUCTOR_CACHE_DIR=$W/ctl/ind TRITON_CACHE_DIR=$W/ctl/tri timeout 240 python3 "$D/step.py" warm-control 2>&1 | tail -1
k1=$(kernels "$W/ctl/tri")
echo "control: triton kernel folders $k0 before, $k1 after (added $((k1 - k0)))"

echo "== purge on the restored fixture, polluted"
PURGE_CONTROL_ADDED=$((k1 - k0)) PURGE_WORK=$W/purge timeout 300 bash "$D/purge.sh" "$BIN" "$W/pur/ind" "$W/pur/tri" 2>&1 | tail -22
echo "purge rc=${PIPESTATUS[0]}"

echo "== scale (fixture)"
SCALE_WORK=$W/scale timeout 200 bash "$D/scale.sh" "$BIN" --fixture "$FIXTURE" --reps 5 2>&1 | grep -v "allow-unsigned"
echo "scale rc=${PIPESTATUS[0]}"
rm -rf "$W"
