#!/bin/bash
# GPU proof of the environment fingerprint, for the device tool (an H200 with torch + triton, no internet).
#  1. `ccpack fingerprint --json` agrees with what torch, triton and nvidia-smi report here (torch imported by this
#     script, never by ccpack); the probe's wall time.
#  2. A real warm-up (step.py, MODE=default to stay short), the warm control run in the same folders, create
#     (no fingerprint warning expected: the kernels' target is this GPU).
#  3. Restore with one cache-key setting changed (TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS): exit 3, nothing written.
#  4. Restore with everything equal into the build paths after a wipe: exit 0, then the warm run hits the FX graph
#     cache as the control did; the no-op restore (fingerprint probed and compared) timed.
# Prints PASS/FAIL lines, numbers, and a summary line; exit status 1 when anything failed.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
D=$(cd "$(dirname "$0")" && pwd)
# ccpack built on Debian 12, carried with its libraries (ldd: libtbb, libzstd, libcrypto) in $CCPACK_DIR.
CCPACK_DIR=${CCPACK_DIR:-$D}; export LD_LIBRARY_PATH=$CCPACK_DIR/lib; C=$CCPACK_DIR/ccpack
W=/tmp/ccfp; rm -rf $W; mkdir -p $W
export MODE=${MODE:-default}
unset TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS
pass=0; fail=0
verdict() { if [ "$2" = 0 ]; then echo "PASS: $1"; pass=$((pass + 1)); else echo "FAIL: $1"; fail=$((fail + 1)); fi; }
ms() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null 2>&1; t1=$(date +%s%N); echo $(((t1 - t0) / 1000000)); }

echo "== 1. fingerprint against torch / triton / nvidia-smi"
export TORCHINDUCTOR_CACHE_DIR=$W/build/ind TRITON_CACHE_DIR=$W/build/tri
$C fingerprint --json >$W/fp.json; verdict "ccpack fingerprint --json exits 0" $?
$C fingerprint | sed 's/^/  /'
for i in 1 2 3 4 5; do ms $C fingerprint; done | sort -n | sed -n 3p | sed 's/^/fingerprint median of 5: /; s/$/ ms/'
python3 - "$W/fp.json" <<'PY'
import json, os, subprocess, sys, sysconfig
import torch, triton
f = json.load(open(sys.argv[1]))["fields"]
smi = subprocess.run(["nvidia-smi", "--query-gpu=name,compute_cap,driver_version", "--format=csv,noheader"],
                     capture_output=True, text=True).stdout.strip().splitlines()
p = torch.cuda.get_device_properties(0)
ptxas = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas")
pv = subprocess.run([os.environ.get("TRITON_PTXAS_PATH", ptxas), "--version"], capture_output=True, text=True).stdout
pv = pv.rsplit(", V", 1)[-1].split()[0] if ", V" in pv else None
expected = {
    "torch.version": torch.__version__, "torch.cuda": torch.version.cuda or "none", "torch.hip": torch.version.hip or "none",
    "triton.version": triton.__version__, "python.abi": sysconfig.get_config_var("SOABI"),
    "python.version": "%d.%d.%d" % sys.version_info[:3], "ptxas.version": pv,
    "gpu.vendor": "nvidia", "gpu.count": str(len(smi)), "gpu.name": torch.cuda.get_device_name(0),
    "gpu.arch": "sm_%d%d" % torch.cuda.get_device_capability(0), "gpu.sm_count": str(p.multi_processor_count),
    "gpu.warp_size": str(getattr(p, "warp_size", 32)), "gpu.driver": smi[0].split(",")[2].strip(),
}
bad = 0
for k, want in expected.items():
    got = f[k]["value"]
    if got is None:
        print(f"NOTE: {k} absent ({f[k]['source']}); torch/nvidia-smi say {want}")
    elif got == want:
        print(f"PASS: {k} = {got} ({f[k]['source']})")
    else:
        print(f"FAIL: {k}: ccpack says {got} ({f[k]['source']}), torch/nvidia-smi say {want}"); bad += 1
print("wheels.cuda =", f["wheels.cuda"]["value"])
sys.exit(1 if bad else 0)
PY
verdict "fingerprint agrees with torch, triton and nvidia-smi" $?

echo "== 2. warm-up, control, create"
timeout 300 python3 $D/step.py cold 2>&1 | tail -1
timeout 200 python3 $D/step.py warm-control 2>&1 | tail -1 | tee $W/control.json
$C create -o $W/model.ccpack 2>$W/create.err; verdict "create exits 0" $?
cat $W/create.err
! grep -q warning $W/create.err; verdict "create on the build machine records a fingerprint without contradictions (no warning)" $?
$C inspect --json $W/model.ccpack | python3 -c 'import json,sys; m=json.load(sys.stdin)["manifest"]["fingerprint"]; print("triton_targets:", m["triton_targets"]); print("gpu.arch:", m["fields"]["gpu.arch"])'
$C check $W/model.ccpack >$W/check.out 2>&1; verdict "check on the build machine exits 0" $?

echo "== 3. one cache-key setting changed: refused, nothing written"
rm -rf $W/build
TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS=TRITON $C restore $W/model.ccpack 2>$W/refused.err; rc=$?
grep -E 'env.inductor|error' $W/refused.err
[ $rc = 3 ]; verdict "restore with TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS changed exits 3 (got $rc)" $?
[ ! -e $W/build/ind ] && [ ! -e $W/build/tri ]; verdict "nothing written by the refused restore" $?

echo "== 4. everything equal: restored, and it still hits"
TIMEFORMAT="restore %R s"; time $C restore $W/model.ccpack; verdict "restore with everything equal exits 0" $?
for i in 1 2 3 4 5; do ms $C restore -q $W/model.ccpack; done | sort -n | sed -n 3p | sed 's/^/no-op restore (fingerprint checked) median of 5: /; s/$/ ms/'
timeout 200 python3 $D/step.py warm-restored 2>&1 | tail -1 | tee $W/restored.json
python3 - $W/control.json $W/restored.json <<'PY'
import json, sys
c, r = (json.load(open(p))["inductor_counters"] for p in sys.argv[1:3])
hits = lambda d: {k: v for k, v in d.items() if "hit" in k}
misses = lambda d: {k: v for k, v in d.items() if "miss" in k}
print("control:", c)
print("restored:", r)
sys.exit(0 if hits(r) == hits(c) and sum(hits(c).values()) > 0 and misses(r) == misses(c) else 1)
PY
verdict "restored cache hits as the control (same cache hit and miss counters, fxgraph_cache_hit among them)" $?
echo "fingerprint proof: $pass passed, $fail failed"
[ $fail = 0 ]
