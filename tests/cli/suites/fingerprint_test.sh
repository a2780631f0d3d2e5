#!/usr/bin/env bash
# Fingerprint suite: a fake Python environment (dist-info folders, torch/version.py, Triton's bundled ptxas), the
# stub NVML library, a fake nvidia-smi and a fake KFD sysfs stand in for a GPU machine. Each scenario is pinned to
# its exact exit code, the fields it names, and whether anything was written.
# Usage: fingerprint_test.sh PATH/TO/ccpack PATH/TO/tests/data PATH/TO/nvml_stub.so
set -u
# The fingerprint checks run after the signature gate; these archives are unsigned (signing_test.sh covers the gate).
export CCPACK_ALLOW_UNSIGNED=1
SUITE=fingerprint  # the shared harness: $T, ok, bad, expect
. "$(dirname "${BASH_SOURCE[0]}")/../helpers/harness.sh"
suite_paths "$@"

# The real interpreter (not a shim), for the fake environments and for reading JSON.
real_python

isolate

# --- fakes ------------------------------------------------------------------------------------------------
BASE="$T/site/base"; CUDNN="$T/site/cudnn"; CU128="$T/site/cu128"
dist "$BASE" torch-2.7.1+cu126; dist "$BASE" triton-3.6.0; dist "$BASE" nvidia_cublas_cu12-12.6.4.1
mkdir -p "$BASE/torch" "$BASE/triton/backends/nvidia/bin"
printf "from typing import Optional\n__version__ = '2.7.1+cu126'\ncuda: Optional[str] = '12.6'\nhip: Optional[str] = None\n" >"$BASE/torch/version.py"
printf '#!/bin/sh\necho "ptxas: NVIDIA (R) Ptx optimizing assembler"\necho "Cuda compilation tools, release 12.8, V12.8.93"\n' \
  >"$BASE/triton/backends/nvidia/bin/ptxas"
chmod +x "$BASE/triton/backends/nvidia/bin/ptxas"
dist "$CUDNN" nvidia_cudnn_cu13-9.13.0.50
OLDTRI="$T/site/oldtriton"; dist "$OLDTRI" triton-3.3.1
dist "$CU128" torch-2.7.1+cu128; mkdir -p "$CU128/torch"
sed 's/cu126/cu128/; s/12\.6/12.8/' "$BASE/torch/version.py" >"$CU128/torch/version.py"
mkdir -p "$T/bin"
fake_python "$T/bin/py-base" "$BASE"; fake_python "$T/bin/py-cudnn" "$CUDNN:$BASE"
fake_python "$T/bin/py-cu128" "$CU128:$BASE"; fake_python "$T/bin/py-oldtriton" "$OLDTRI:$BASE"
# A Python that hangs: the shell stays (no exec) with a child, so a kill of the shell alone would leave the child.
# The hung interpreter sleeps through a copy of sleep in $T, so the check below finds this run's processes only (not
# those of the same suite running beside it).
cp "$(command -v sleep)" "$T/bin/hang-sleep"
printf '#!/bin/sh\n"%s" 5999\necho never\n' "$T/bin/hang-sleep" >"$T/bin/py-hang"; chmod +x "$T/bin/py-hang"
printf '#!/bin/sh\necho "not json at all"\n' >"$T/bin/py-junk"; chmod +x "$T/bin/py-junk"
# nvidia-smi: one that reports an A100, one that fails as it does without a driver.
mkdir -p "$T/smi-a100"
printf '#!/bin/sh\necho "NVIDIA A100-SXM4-80GB, 8.0, 550.54.15"\n' >"$T/smi-a100/nvidia-smi"
chmod +x "$T/smi-a100/nvidia-smi"
failing_nvidia_smi "$T/smi-none"
# An MI300X as KFD shows it: node 0 a CPU, node 1 the GPU.
KFD="$T/sys/class/kfd/kfd/topology/nodes"
mkdir -p "$KFD/0" "$KFD/1"
printf 'cpu_cores_count 64\nsimd_count 0\ngfx_target_version 0\n' >"$KFD/0/properties"
printf 'cpu_cores_count 0\nsimd_count 1216\nsimd_per_cu 4\nwave_front_size 64\ngfx_target_version 90402\ndevice_id 29857\n' >"$KFD/1/properties"

# The default "machine": an H200 through the stub NVML, the base Python environment.
export CCPACK_NVML_LIBRARY="$STUB" CCPACK_PYTHON="$T/bin/py-base" STUB_NVML_SMS=132
export PATH="$T/smi-none:$PATH"

# --- each probed value is read ------------------------------------------------------------------------------
expect 0 "" -- "$CCPACK" fingerprint --json
F="$T/out"
json_is "$F" "j['ok'] and j['schema']==1"
json_is "$F" "j['fields']['torch.version']=={'value':'2.7.1+cu126','source':'torch/version.py'}"
json_is "$F" "j['fields']['torch.cuda']['value']=='12.6' and j['fields']['torch.hip']['value']=='none'"
json_is "$F" "j['fields']['triton.version']['value']=='3.6.0' and j['fields']['ptxas.version']['value']=='12.8.93'"
json_is "$F" "j['fields']['wheels.cuda']['value']=='nvidia-cublas-cu12==12.6.4.1'"
json_is "$F" "'$BASE' in j['fields']['python.site_packages']['value'].split(', ')"
json_is "$F" "j['fields']['python.abi']['value'].startswith('cpython-')"
json_is "$F" "[j['fields'][k]['value'] for k in ('gpu.vendor','gpu.count','gpu.name','gpu.arch','gpu.sm_count','gpu.warp_size','gpu.driver')]==['nvidia','1','NVIDIA H200','sm_90','132','32','580.159.04']"
json_is "$F" "j['fields']['gpu.arch']['source']=='nvml'"
json_is "$F" "j['fields']['paths.triton']['value']=='$HOME/.triton/cache'"
TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS=TRITON TORCHINDUCTOR_CACHE_DIR=/x TRITON_DEFAULT_FP_FUSION=0 WORLD_SIZE=8 \
  expect 0 "" -- "$CCPACK" fingerprint --json
json_is "$T/out" "j['fields']['env.inductor']['value']=='TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS=TRITON' and j['fields']['env.triton']['value']=='TRITON_DEFAULT_FP_FUSION=0' and j['fields']['world_size']['value']=='8'"
expect 0 "" -- "$CCPACK" fingerprint
grep -Eq '^gpu.arch +sm_90 +nvml$' "$T/out" && ok || bad "fingerprint table: $(cat "$T/out")"
# The SM count where NVML's attributes call is not supported: absent, not derived.
STUB_NVML_SMS= expect 0 "" -- env -u STUB_NVML_SMS "$CCPACK" fingerprint --json
json_is "$T/out" "j['fields']['gpu.sm_count']['value'] is None and 'nvmlDeviceGetAttributes_v2' in j['fields']['gpu.sm_count']['source']"
# nvidia-smi when NVML cannot be loaded.
CCPACK_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 PATH="$T/smi-a100:$PATH" expect 0 "" -- "$CCPACK" fingerprint --json
json_is "$T/out" "j['fields']['gpu.arch']=={'value':'sm_80','source':'nvidia-smi'} and j['fields']['gpu.name']['value']=='NVIDIA A100-SXM4-80GB' and j['fields']['gpu.driver']['value']=='550.54.15'"
# AMD through KFD when neither answers.
CCPACK_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 CCPACK_SYSFS_ROOT="$T/sys" expect 0 "" -- "$CCPACK" fingerprint --json
json_is "$T/out" "[j['fields'][k]['value'] for k in ('gpu.vendor','gpu.count','gpu.arch','gpu.sm_count','gpu.warp_size')]==['amd','1','gfx942','304','64']"

# --- each probe taken away: absent with the reason, never a guess or a hang ------------------------------------
CCPACK_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 expect 0 "" -- "$CCPACK" fingerprint --json
json_is "$T/out" "all(j['fields'][k]['value'] is None for k in ('gpu.vendor','gpu.count','gpu.arch','gpu.name','gpu.driver'))"
json_is "$T/out" "'nvml: /nonexistent/libnvidia-ml.so.1 not loadable; nvidia-smi: exit 9; kfd: no GPU node' in j['fields']['gpu.arch']['source']"
STUB_NVML_INIT_FAIL=1 CCPACK_SYSFS_ROOT="$T/nosys" expect 0 "" -- "$CCPACK" fingerprint --json
json_is "$T/out" "j['fields']['gpu.arch']['value'] is None and j['fields']['gpu.arch']['source'].startswith('nvml: nvmlInit_v2 failed (9)')"
expect 0 "" -- "$CCPACK" fingerprint --json --python "$T/no-python"
json_is "$T/out" "j['fields']['torch.version']=={'value':None,'source':\"python '$T/no-python': not found\"} and j['fields']['ptxas.version']['value'] is None"
expect 0 "" -- "$CCPACK" fingerprint --json --python "$T/bin/py-hang"
json_is "$T/out" "j['fields']['python.abi']['value'] is None and j['fields']['python.abi']['source'].endswith('timed out after 2000 ms')"
pgrep -f "$T/bin/py-hang|$T/bin/hang-sleep" >/dev/null && bad "the hung python was left running" || ok
expect 0 "" -- "$CCPACK" fingerprint --json --python "$T/bin/py-junk"
json_is "$T/out" "j['fields']['torch.version']['source']=='python: the probe printed no JSON'"
fake_python "$T/bin/py-notorch" "$T/site/empty"
expect 0 "" -- "$CCPACK" fingerprint --json --python "$T/bin/py-notorch"
json_is "$T/out" "j['fields']['torch.version']=={'value':None,'source':'python: no torch distribution on sys.path'} and j['fields']['python.abi']['value'] is not None"

# --- create records the fingerprint and what the cache says --------------------------------------------------
A="$T/h200.ccpack"
expect 0 "" -- "$CCPACK" create -o "$A" "${DIRS[@]}"
# (the one warning: this fake torch's cache was warmed without the tuned settings, tuned_test.sh's subject)
grep -v "this cache was warmed without" "$T/err" | grep -q warning && bad "create on a matching machine warned: $(cat "$T/err")" || ok
expect 0 "" -- "$CCPACK" inspect --json "$A"
json_is "$T/out" "j['manifest']['fingerprint']['triton_targets']==[{'backend':'cuda','arch':'90','warp_size':32,'triton_version':'3.6.0','kernels':11}]"
json_is "$T/out" "j['manifest']['fingerprint']['fields']['gpu.arch']=={'value':'sm_90','source':'nvml'}"
expect 0 "" -- "$CCPACK" inspect "$A"
grep -q "^fingerprint  gpu.arch sm_90, torch.version 2.7.1+cu126, triton.version 3.6.0 (" "$T/out" && ok || bad "inspect fingerprint line: $(cat "$T/out")"
# A fingerprint that is not what the contract says (the manifest's digest fixed up): exit 4 naming the field.
"$PY" - "$A" "$T/badfp.ccpack" <<'PYEOF'
import hashlib, struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
m = struct.unpack_from("<I", b, 64)[0]
man = bytes(b[68:68 + m])
bad = man.replace(b'"gpu.arch":{"value":"sm_90"', b'"gpu.arch":{"value":  90   ', 1)
assert bad != man and len(bad) == len(man)
b[68:68 + m] = bad
b[32:64] = hashlib.sha256(bad).digest()
open(sys.argv[2], "wb").write(b)
PYEOF
expect 4 "badfp.ccpack': fingerprint field 'fields.gpu.arch.value' is not a string" -- "$CCPACK" check "$T/badfp.ccpack"
expect 4 "badfp.ccpack': fingerprint field 'fields.gpu.arch.value' is not a string" -- "$CCPACK" inspect "$T/badfp.ccpack"
expect 4 "fingerprint field 'fields.gpu.arch.value' is not a string" -- "$CCPACK" restore "$T/badfp.ccpack" --inductor-dir "$T/bf/ind" --triton-dir "$T/bf/tri"
absent "a restore of a malformed fingerprint wrote something" "$T/bf"
# Kernels built by triton 3.6.0 where 3.3.1 is installed: named, and 3.6.0 recorded.
expect 0 "kernels were built by triton 3.6.0 but triton 3.3.1 is installed" -- \
  "$CCPACK" create -o "$T/x.ccpack" "${DIRS[@]}" --python "$T/bin/py-oldtriton"
"$CCPACK" inspect --json "$T/x.ccpack" >"$T/out"
json_is "$T/out" "j['manifest']['fingerprint']['fields']['triton.version']=={'value':'3.6.0','source':'derived:triton-json; the probe said 3.3.1'}"
# A machine whose GPU is not the cache's target: warned by name, the cache's target recorded, not the A100.
STUB_NVML_CC=8.0 STUB_NVML_NAME="NVIDIA A100" expect 0 "target sm_90 but this machine's GPU is sm_80 \(NVIDIA A100\)" -- \
  "$CCPACK" create -o "$T/a100.ccpack" "${DIRS[@]}"
"$CCPACK" inspect --json "$T/a100.ccpack" >"$T/out"
json_is "$T/out" "j['manifest']['fingerprint']['fields']['gpu.arch']['value']=='sm_90' and j['manifest']['fingerprint']['fields']['gpu.name']['value'] is None"

# --- sm_90 archive where the GPU is sm_80: exit 3, nothing written, the table names the field --------------------
export STUB_NVML_CC=8.0
expect 3 "gpu.arch" -- "$CCPACK" restore "$A" --inductor-dir "$T/r/ind" --triton-dir "$T/r/tri"
grep -Eq '^gpu.arch +sm_90 +sm_80 +stale +stale ' "$T/err" && ok || bad "restore table lacks the gpu.arch row: $(cat "$T/err")"
grep -q 'nothing written' "$T/err" && ok || bad "refusal does not say nothing was written"
[ ! -e "$T/r" ] && ok || bad "a refused restore wrote $(find "$T/r")"
expect 3 "" -- "$CCPACK" restore --json "$A" --inductor-dir "$T/r/ind" --triton-dir "$T/r/tri"
json_is "$T/out" "j['ok'] is False and j['exit_code']==3 and j['fingerprint']['verdict']=='stale'"
absent "a refused --json restore wrote something" "$T/r"
expect 3 "does not fit this machine" -- "$CCPACK" check "$A" "${DIRS[@]}"
grep -Eq '^gpu.arch +sm_90 +sm_80 +stale +stale ' "$T/out" && ok || bad "check table: $(cat "$T/out")"
# force restores, with a warning per differing field; CCPACK_ON_MISMATCH does the same for entrypoints.
expect 0 "warning: fingerprint field gpu.arch differs \(archive 'sm_90', here 'sm_80'\): inductor stale, triton stale, restored anyway" -- \
  "$CCPACK" restore "$A" --on-mismatch=force --inductor-dir "$T/f/ind" --triton-dir "$T/f/tri"
[ -f "$T/f/tri/.ccpack-marker.json" ] && ok || bad "force did not restore"
CCPACK_ON_MISMATCH=force expect 0 "restored anyway" -- "$CCPACK" restore "$A" --inductor-dir "$T/f2/ind" --triton-dir "$T/f2/tri"
# purge restores nothing stale (purge_test.sh covers what it removes)
expect 0 "triton: purged" -- "$CCPACK" restore "$A" --on-mismatch=purge --inductor-dir "$T/pg/ind" --triton-dir "$T/pg/tri"
CCPACK_ON_MISMATCH=maybe expect 2 "CCPACK_ON_MISMATCH must be refuse, force or purge" -- "$CCPACK" restore "$A" --inductor-dir "$T/p/ind"
absent "a usage error wrote something" "$T/p"
# --ignore: an informed override, field by field; a name that is no field is a usage error.
# (each --ignore takes one FIELD: the archive after them stays the positional argument)
expect 0 "" -- "$CCPACK" check --ignore gpu.arch --ignore cache.targets "$A" "${DIRS[@]}"
expect 2 "'gpu.arch2' is not a fingerprint field" -- "$CCPACK" check "$A" --ignore gpu.arch2
unset STUB_NVML_CC

# The local set-up, as the checklists look at it: notes, not refusals.
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
  expect 0 "inductor cache folder '/dev/shm/ccpack-fp-none/ind' is on tmpfs" -- "$CCPACK" check "$A" --inductor-dir /dev/shm/ccpack-fp-none/ind
else
  skip "the tmpfs note" "/dev/shm is not a tmpfs here"
fi
# (TORCHINDUCTOR_CK_DIR is itself an Inductor setting, so env.inductor differs from the archive's: ignored here.)
TORCHINDUCTOR_CK_DIR="$T/no-ck" expect 0 "TORCHINDUCTOR_CK_DIR '$T/no-ck' does not exist" -- \
  "$CCPACK" check "$A" "${DIRS[@]}" --ignore env.inductor
TORCHINDUCTOR_CK_DIR="$T/no-ck" expect 0 "" -- "$CCPACK" check --json "$A" "${DIRS[@]}" --ignore env.inductor
json_is "$T/out" "j['setup_notes']==[\"TORCHINDUCTOR_CK_DIR '$T/no-ck' does not exist\"]"

# --- contamination: a CUDA wheel at build time and not here, and the reverse: inductor stale, triton kept --------
expect 0 "" -- "$CCPACK" create -q -o "$T/cudnn.ccpack" "${DIRS[@]}" --python "$T/bin/py-cudnn"
expect 3 "inductor stale \(wheels.cuda: nvidia-cudnn-cu13==9.13.0.50 only in the archive\); triton warn \(" -- \
  "$CCPACK" check --json "$T/cudnn.ccpack" "${DIRS[@]}"
json_is "$T/out" "[f['verdicts'] for f in j['fingerprint']['fields'] if f['field']=='wheels.cuda']==[{'inductor':'stale','triton':'warn'}]"
json_is "$T/out" "'nvidia-cudnn-cu13==9.13.0.50' in [f['archive'] for f in j['fingerprint']['fields'] if f['field']=='wheels.cuda'][0]"
expect 3 "inductor stale \(wheels.cuda: nvidia-cudnn-cu13==9.13.0.50 only here\); triton warn \(" -- \
  "$CCPACK" check "$A" "${DIRS[@]}" --python "$T/bin/py-cudnn"
# The triton folder alone is kept: restoring only it is allowed.
expect 0 "triton: restored" -- "$CCPACK" restore "$T/cudnn.ccpack" --triton-dir "$T/c/tri" --inductor-dir "$T/c/ind" --ignore wheels.cuda

# --- torch local tag: stale for inductor, not for triton; a driver change only warns --------------------------------
expect 3 "inductor stale \(torch.version, torch.cuda\)" -- "$CCPACK" check --json "$A" "${DIRS[@]}" --python "$T/bin/py-cu128"
json_is "$T/out" "[f['verdicts'] for f in j['fingerprint']['fields'] if f['field']=='torch.version']==[{'inductor':'stale','triton':'match'}]"
json_is "$T/out" "[c['verdict'] for c in j['fingerprint']['components']]==['stale','warn']"
STUB_NVML_DRIVER=590.10.01 expect 0 "with warnings: inductor warn \(gpu.driver\); triton warn \(gpu.driver\)" -- "$CCPACK" check "$A" "${DIRS[@]}"
STUB_NVML_DRIVER=570.86.10 expect 3 "inductor refuse \(gpu.driver\)" -- "$CCPACK" check "$A" "${DIRS[@]}"

# --- a cache-key setting changed: refused before anything is written -------------------------------------------
TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS=TRITON expect 3 "this process lacks the settings its cache was built with, so every entry would miss: unset TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS;" -- \
  "$CCPACK" restore "$A" --inductor-dir "$T/e/ind" --triton-dir "$T/e/tri"
absent "a refused restore wrote something" "$T/e"

# --- already restored is not still valid: the marker does not skip the check --------------------------------------
expect 0 "triton: restored" -- "$CCPACK" restore "$A" --inductor-dir "$T/m/ind" --triton-dir "$T/m/tri"
expect 0 "inductor: already restored" -- "$CCPACK" restore "$A" --inductor-dir "$T/m/ind" --triton-dir "$T/m/tri"
before=$(snap "$T/m")
expect 3 "torch.version" -- "$CCPACK" restore "$A" --inductor-dir "$T/m/ind" --triton-dir "$T/m/tri" --python "$T/bin/py-cu128"
[ "$(snap "$T/m")" = "$before" ] && ok || bad "a refused re-restore changed the folders"

# --- archives made before fingerprints: every field "not recorded", warn, not refuse -------------------------------
expect 0 "with warnings" -- "$CCPACK" check "$DATA/golden-v1.ccpack" --inductor-dir "$T/g/ind" --triton-dir "$T/g/tri"
grep -Eq '^gpu.arch +not recorded +sm_90 +warn +warn' "$T/out" && ok || bad "golden check table: $(cat "$T/out")"
expect 0 "records no fingerprint" -- "$CCPACK" restore "$DATA/golden-v1.ccpack" --inductor-dir "$T/g/ind" --triton-dir "$T/g/tri"

# --- the probe memo: the interpreter's report reused only while its inputs are unchanged ---------------------------
# The real interpreter (an ELF file, so it can be memoised), the base environment through PYTHONPATH.
memo() { CCPACK_PROBE_CACHE="$T/memo.json" PYTHONPATH="$BASE" "$CCPACK" fingerprint --python "$PY" "$@"; }
said() { grep -q "^python probe memo: $1" "$T/out" && ok || bad "expected memo $1: $(grep 'probe memo' "$T/out")"; }
expect 0 "" -- memo; said miss
[ "$(stat -c %a "$T/memo.json")" = 600 ] && ok || bad "memo file mode $(stat -c %a "$T/memo.json")"
expect 0 "" -- memo; said hit
expect 0 "" -- memo --json; cp "$T/out" "$T/fp-hit.json"
CCPACK_PROBE_CACHE=off PYTHONPATH="$BASE" expect 0 "" -- "$CCPACK" fingerprint --json --python "$PY"
json_is "$T/out" "j['fields']==json.load(open('$T/fp-hit.json'))['fields'] and j['fields']['torch.version']['value']=='2.7.1+cu126'"
CCPACK_PROBE_CACHE=off PYTHONPATH="$BASE" expect 0 "" -- "$CCPACK" fingerprint --python "$PY"; said off
# Distributions are read on every probe: a new wheel shows on a hit.
dist "$BASE" nvidia_cudnn_cu13-9.13.0.50
expect 0 "" -- memo; said hit
grep -q "nvidia-cudnn-cu13==9.13.0.50" "$T/out" && ok || bad "a wheel installed after the memo was not seen"
rm -rf "$BASE/nvidia_cudnn_cu13-9.13.0.50.dist-info"
# A site folder that appears changes sys.path: a miss, and what it holds is seen.
USITE=$(PYTHONPATH="$BASE" "$PY" -c 'import site; print(site.getusersitepackages())')
case $USITE in "$T"/*) ;; *) bad "user site '$USITE' is not under the test's HOME" ;; esac
dist "$USITE" ck4inductor-0.1.0
expect 0 "" -- memo; said miss
grep -Eq "^ck4inductor.version +0.1.0" "$T/out" && ok || bad "ck4inductor in the new user site not seen: $(grep ck4 "$T/out")"
expect 0 "" -- memo; said hit
# A .pth file added to a site folder extends sys.path: a miss, and the folder it names is listed.
EXTRA="$T/site/extra"; dist "$EXTRA" nvidia_nccl_cu13-2.27.3
echo "$EXTRA" >"$USITE/extra.pth"
expect 0 "" -- memo; said miss
grep -q "nvidia-nccl-cu13==2.27.3" "$T/out" && ok || bad "the folder a new .pth names was not listed"
# ... and one edited in place too (same name, new content).
sleep 0.01; echo "$T/site/none" >"$USITE/extra.pth"
expect 0 "" -- memo; said miss
grep -q "nvidia-nccl-cu13" "$T/out" && bad "an edited .pth was not noticed" || ok
rm -rf "$USITE"
# Another PYTHONPATH is another key; a wrapper script (a shim) is memoised for the interpreter it ran, and another
# PYENV_VERSION is another key; a corrupt memo is an empty one.
CCPACK_PROBE_CACHE="$T/memo.json" PYTHONPATH="$CU128:$BASE" expect 0 "" -- "$CCPACK" fingerprint --python "$PY"; said miss
grep -Eq "^torch.version +2.7.1\+cu128" "$T/out" && ok || bad "PYTHONPATH change: $(grep '^torch.version' "$T/out")"
shim() { CCPACK_PROBE_CACHE="$T/memo.json" "$CCPACK" fingerprint --python "$T/bin/py-base" "$@"; }
expect 0 "" -- shim; said miss
expect 0 "" -- shim; said hit
grep -Eq "^torch.version +2.7.1\+cu126" "$T/out" && ok || bad "shim hit: $(grep '^torch.version' "$T/out")"
PYENV_VERSION=3.11 expect 0 "" -- shim; said miss
printf '{"schema": 1, "python": [[[[' >"$T/memo.json"
expect 0 "" -- memo; said miss
expect 0 "" -- memo; said hit

finish
