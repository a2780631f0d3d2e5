#!/usr/bin/env bash
# "Say exactly why": fake environments that differ in one wheel or one setting, and check, the refusal of restore and
# check --json must each name exactly that entry; inspect --card holds every value whole; status says which archive
# restored each folder and what was compiled there since, grouped, and exits 5 for a folder ccpack did not restore.
# Usage: explain_test.sh PATH/TO/ccpack PATH/TO/tests/data PATH/TO/nvml_stub.so
set -u
export CCPACK_ALLOW_UNSIGNED=1  # signing_test.sh covers the trust gate
SUITE=explain
. "$(dirname "${BASH_SOURCE[0]}")/../helpers/harness.sh"
suite_paths "$@"

real_python
has() { if grep -Eq -- "$2" "$1"; then ok; else bad "$1 lacks /$2/: $(head -c 3000 "$1")"; fi; }
lacks() { if grep -Eq -- "$2" "$1"; then bad "$1 has /$2/: $(grep -E -- "$2" "$1" | head -3)"; else ok; fi; }

isolate

# --- a fake environment: one venv with seven CUDA wheels (so two wheel lists share a long prefix); each scenario
# changes one wheel in it and puts it back, so nothing else differs (not even sys.path) ---------------------------
SITE="$T/site"
for d in torch-2.11.0+cu130 triton-3.6.0 cuda_bindings-13.3.1 cuda_core-0.3.2 nvidia_cublas-13.0.0.19 \
         nvidia_cuda_runtime-13.0.48 nvidia_cudnn_cu13-9.13.0.50 nvidia_nccl_cu13-2.27.7; do dist "$SITE" "$d"; done
mkdir -p "$SITE/torch"
printf "__version__ = '2.11.0+cu130'\ncuda = '13.0'\nhip = None\n" >"$SITE/torch/version.py"
with_wheel() { dist "$SITE" nvidia_cusparselt_cu13-0.8.0; }
without_wheel() { rm -rf "$SITE/nvidia_cusparselt_cu13-0.8.0.dist-info"; }
cudnn() { mv "$SITE"/nvidia_cudnn_cu13-*.dist-info "$SITE/nvidia_cudnn_cu13-$1.dist-info"; }
mkdir -p "$T/bin"
fake_python "$T/bin/py" "$SITE"
mkdir -p "$T/smi-none"
printf '#!/bin/sh\nexit 9\n' >"$T/smi-none/nvidia-smi"; chmod +x "$T/smi-none/nvidia-smi"
export CCPACK_NVML_LIBRARY="$STUB" CCPACK_PYTHON="$T/bin/py" STUB_NVML_SMS=132 PATH="$T/smi-none:$PATH"
A="$T/base.ccpack"
expect 0 "" -- "$CCPACK" create -q -o "$A" "${DIRS[@]}"
with_wheel
expect 0 "" -- "$CCPACK" create -q -o "$T/plus.ccpack" "${DIRS[@]}"

# --- one wheel more here than in the archive: check, check --json and the refusal name exactly that wheel --------
expect 3 "does not fit this machine: inductor stale \(wheels.cuda: nvidia-cusparselt-cu13==0.8.0 only here\); triton warn \(wheels.cuda\)$" -- \
  "$CCPACK" check "$A" "${DIRS[@]}"
has "$T/out" '^wheels.cuda +\(not in the archive\) +nvidia-cusparselt-cu13==0\.8\.0 +stale +warn '
lacks "$T/out" '^wheels.cuda .*(cuda-bindings|\.\.\.)'
expect 3 "" -- "$CCPACK" check --json "$A" "${DIRS[@]}"
json_is "$T/out" "[(f['added'],f['removed'],f['changed']) for f in j['fingerprint']['fields'] if f['field']=='wheels.cuda']==[(['nvidia-cusparselt-cu13==0.8.0'],[],[])]"
json_is "$T/out" "'nvidia-cusparselt-cu13==0.8.0' in [f['local'] for f in j['fingerprint']['fields'] if f['field']=='wheels.cuda'][0].split(', ')"
expect 3 "^ccpack: error: not restoring '$A': it does not fit this machine: inductor stale \(wheels.cuda: nvidia-cusparselt-cu13==0.8.0 only here\); triton warn \(wheels.cuda, paths.triton\) \(nothing written" -- \
  "$CCPACK" restore "$A" --inductor-dir "$T/r/ind" --triton-dir "$T/r/tri"
has "$T/err" '^wheels.cuda +\(not in the archive\) +nvidia-cusparselt-cu13==0\.8\.0 +stale +warn '
[ ! -e "$T/r" ] && ok || bad "a refused restore wrote $(find "$T/r")"
# ... and the reverse: the wheel only in the archive (the case of the H200 run: a wheel removed from the venv).
without_wheel
expect 3 "inductor stale \(wheels.cuda: nvidia-cusparselt-cu13==0.8.0 only in the archive\); triton warn \(wheels.cuda\)$" -- \
  "$CCPACK" check "$T/plus.ccpack" "${DIRS[@]}"
has "$T/out" '^wheels.cuda +nvidia-cusparselt-cu13==0\.8\.0 +\(not here\) +stale +warn '
expect 3 "" -- "$CCPACK" restore --json "$T/plus.ccpack" --inductor-dir "$T/r/ind" --triton-dir "$T/r/tri"
json_is "$T/out" "j['exit_code']==3 and [(f['added'],f['removed']) for f in j['fingerprint']['fields'] if f['field']=='wheels.cuda']==[([],['nvidia-cusparselt-cu13==0.8.0'])]"
json_is "$T/out" "'wheels.cuda: nvidia-cusparselt-cu13==0.8.0 only in the archive' in j['error']"
# forced, the warning names the wheel too
expect 0 "warning: fingerprint field wheels.cuda differs \(nvidia-cusparselt-cu13==0.8.0 only in the archive\): inductor stale, triton warn, restored anyway" -- \
  "$CCPACK" restore "$T/plus.ccpack" --on-mismatch=force --inductor-dir "$T/f/ind" --triton-dir "$T/f/tri"

# --- one wheel's version changed: the name with both versions ---------------------------------------------------
cudnn 9.14.0.64
expect 3 "inductor stale \(wheels.cuda: nvidia-cudnn-cu13: 9.13.0.50 -> 9.14.0.64\); triton warn \(wheels.cuda\)$" -- \
  "$CCPACK" check "$A" "${DIRS[@]}"
has "$T/out" '^wheels.cuda +nvidia-cudnn-cu13==9\.13\.0\.50 +nvidia-cudnn-cu13==9\.14\.0\.64 +stale +warn '
expect 3 "" -- "$CCPACK" check --json "$A" "${DIRS[@]}"
json_is "$T/out" "[(f['added'],f['removed'],f['changed']) for f in j['fingerprint']['fields'] if f['field']=='wheels.cuda']==[([],[],[{'name':'nvidia-cudnn-cu13','archive':'9.13.0.50','local':'9.14.0.64'}])]"
expect 3 "it does not fit this machine: inductor stale \(wheels.cuda: nvidia-cudnn-cu13: 9.13.0.50 -> 9.14.0.64\)" -- \
  "$CCPACK" restore "$A" --inductor-dir "$T/r/ind" --triton-dir "$T/r/tri"

cudnn 9.13.0.50

# --- env.inductor with one setting changed: that variable with both values, whole ----------------------------------
LONG=$(printf 'x%.0s' $(seq 1 120))
export TORCHINDUCTOR_COORDINATE_DESCENT_TUNING=1 TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS=ATEN,TRITON TORCHINDUCTOR_LONG_SETTING="$LONG"
expect 0 "" -- "$CCPACK" create -q -o "$T/env.ccpack" "${DIRS[@]}"
TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS=TRITON expect 3 \
  "inductor stale \(env.inductor: TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS: ATEN,TRITON -> TRITON\); this process lacks the settings its cache was built with, so every entry would miss: TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS=ATEN,TRITON; .ccpack run " -- "$CCPACK" check "$T/env.ccpack" "${DIRS[@]}"
has "$T/out" '^env.inductor +TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS=ATEN,TRITON +TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS=TRITON +stale +match '
lacks "$T/out" '^env.inductor .*COORDINATE'
TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS=TRITON expect 3 "" -- "$CCPACK" check --json "$T/env.ccpack" "${DIRS[@]}"
json_is "$T/out" "[f['changed'] for f in j['fingerprint']['fields'] if f['field']=='env.inductor']==[[{'name':'TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS','archive':'ATEN,TRITON','local':'TRITON'}]]"
# the long setting alone differs: shown whole in the table (the only difference) and in --json
TORCHINDUCTOR_LONG_SETTING="y$LONG" expect 3 "env.inductor: TORCHINDUCTOR_LONG_SETTING: $LONG -> y$LONG\); this process lacks" -- \
  "$CCPACK" check "$T/env.ccpack" "${DIRS[@]}"
has "$T/out" "^env.inductor +TORCHINDUCTOR_LONG_SETTING=$LONG +TORCHINDUCTOR_LONG_SETTING=y$LONG +stale"

# --- the card holds the record whole ------------------------------------------------------------------------------
expect 0 "" -- "$CCPACK" inspect --card "$T/env.ccpack"
lacks "$T/out" '\.\.\.$'
has "$T/out" "^  - TORCHINDUCTOR_LONG_SETTING=$LONG\$"
expect 0 "" -- "$CCPACK" inspect --card "$T/plus.ccpack"
lacks "$T/out" '\.\.\.'
has "$T/out" '^- wheels.cuda: 7 entries$'
has "$T/out" '^  - nvidia-cusparselt-cu13==0\.8\.0$'
unset TORCHINDUCTOR_COORDINATE_DESCENT_TUNING TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS TORCHINDUCTOR_LONG_SETTING

# --- status: right after a restore nothing was compiled -----------------------------------------------------------
S=(--inductor-dir "$T/s/ind" --triton-dir "$T/s/tri")
expect 0 "" -- "$CCPACK" restore -q "$A" "${S[@]}"
DIGEST=$(manifest_sha "$A")
expect 0 "" -- "$CCPACK" status "${S[@]}"
has "$T/out" "^inductor '$T/s/ind' \(--inductor-dir\)$"
has "$T/out" "^  restored from '$A', archive manifest sha256:$DIGEST, no trusted signer recorded, at 20[0-9-]+T[0-9:]+Z \(ccpack "
has "$T/out" '^  the archive still fits this machine, with warnings: inductor warn \(paths.inductor\)$'
[ "$(grep -c '^  nothing compiled here since the restore' "$T/out")" = 2 ] && ok || bad "status after a restore: $(cat "$T/out")"
expect 0 "" -- "$CCPACK" status --json "${S[@]}"
json_is "$T/out" "j['ok'] and j['compiled_since_restore']==0 and j['not_restored']==[] and [f['state'] for f in j['folders']]==['restored','restored']"
json_is "$T/out" "[f['archive']['manifest_sha256'] for f in j['folders']]==['$DIGEST']*2 and j['folders'][0]['fit']['verdict']=='warn'"
json_is "$T/out" "[f['archive']['origin'] for f in j['folders']]==['$A']*2"
json_is "$T/out" "j['folders'][1]['archive_files']==$(find "$SAMPLE/triton_cache" -type f | wc -l) and j['folders'][1]['missing']==[] and j['folders'][1]['modified'] is None"

# --- three kernel folders and one FX-graph entry made by hand: exactly those, grouped -------------------------------
for k in triton_poi_fused_add_0 triton_red_fused_sum_1 triton_per_fused_softmax_2; do
  h="$T/s/tri/HASH$k"; mkdir -p "$h"
  printf '{}' >"$h/$k.json"; printf 'x' >"$h/$k.cubin"; printf '{}' >"$h/__grp__$k.json"
done
mkdir -p "$T/s/ind/fxgraph/zz/fzzkey"; printf 'g' >"$T/s/ind/fxgraph/zz/fzzkey/entry"
touch "$T/s/tri/HASHtriton_poi_fused_add_0/x.lock"  # transient: not counted
expect 0 "" -- "$CCPACK" status "${S[@]}"
has "$T/out" '^  3 Triton kernels compiled here since the restore: triton_per_fused_softmax_2, triton_poi_fused_add_0, triton_red_fused_sum_1$'
has "$T/out" '^  1 FX graph compiled here since the restore: fxgraph/zz/fzzkey/entry$'
lacks "$T/out" 'autotun|other file|gone'
expect 0 "" -- "$CCPACK" status --json "${S[@]}"
json_is "$T/out" "j['compiled_since_restore']==4 and j['folders'][0]['added']=={'fx_graphs':['fxgraph/zz/fzzkey/entry'],'triton_kernels':[],'autotune':[],'other':[]}"
json_is "$T/out" "[k['name'] for k in j['folders'][1]['added']['triton_kernels']]==['triton_per_fused_softmax_2','triton_poi_fused_add_0','triton_red_fused_sum_1'] and j['folders'][1]['added_count']==3"
# an autotune result: autotuning ran again, said on the kernels' line too
mkdir -p "$T/s/ind/zz"; printf '{}' >"$T/s/ind/zz/0123.best_config"
expect 0 "" -- "$CCPACK" status "${S[@]}"
has "$T/out" '^  3 Triton kernels compiled here since the restore \(autotuning ran again\): triton_per'
has "$T/out" '^  1 autotune result written here since the restore \(autotuning ran again\): zz/0123.best_config$'
# two configs of one kernel, each in its own folder: named once, with the count
h="$T/s/tri/HASH2triton_poi_fused_add_0"; mkdir -p "$h"; printf '{}' >"$h/triton_poi_fused_add_0.json"
expect 0 "" -- "$CCPACK" status "${S[@]}"
has "$T/out" '^  4 Triton kernels compiled here since the restore \(autotuning ran again\): triton_per_fused_softmax_2, triton_poi_fused_add_0 \(2 configs\), triton_red_fused_sum_1$'
rm -rf "$h"
# --verify: a file of the archive edited in place is named; without it nothing is hashed
F1=$(cd "$T/s/tri" && find . -name '*.ptx' | sort | head -1 | cut -c3-)
printf 'edited' >>"$T/s/tri/$F1"
expect 0 "" -- "$CCPACK" status "${S[@]}"
lacks "$T/out" 'changed since'
expect 0 "" -- "$CCPACK" status --verify "${S[@]}"
NGRP=$(find "$SAMPLE/triton_cache" -name '__grp__*.json' | wc -l)
has "$T/out" "^  1 file of the archive changed since the restore \(--verify; $NGRP files the relocating restore rewrites not compared\): $F1\$"
# an image upgrade shows: the same restored folders no longer fit this machine's Python environment
cudnn 9.14.0.64
expect 0 "" -- "$CCPACK" status "${S[@]}"
has "$T/out" '^  the archive no longer fits this machine: inductor stale \(wheels.cuda: nvidia-cudnn-cu13: 9.13.0.50 -> 9.14.0.64\)'
cudnn 9.13.0.50

# --- a folder removed: not restored by ccpack, exit 5 --------------------------------------------------------------
rm -rf "$T/s/tri"
expect 5 "^ccpack: error: not restored by ccpack: triton$" -- "$CCPACK" status "${S[@]}"
has "$T/out" "^triton '$T/s/tri' \(--triton-dir\)$"
has "$T/out" '^  not restored by ccpack: the folder does not exist$'
expect 5 "" -- "$CCPACK" status --json "${S[@]}"
json_is "$T/out" "j['ok'] is False and j['exit_code']==5 and j['not_restored']==['triton'] and j['folders'][1]['state']=='absent'"
# a folder that exists but holds no marker: the same
expect 5 "not restored by ccpack: inductor$" -- "$CCPACK" status --inductor-dir "$SAMPLE/inductor_cache" --triton-dir "$T/s/ind"
has "$T/out" '^  not restored by ccpack: it holds no ccpack restore marker$'
# a default location that does not exist is only noted (as create does); the restored one still counts
expect 0 "" -- "$CCPACK" status --inductor-dir "$T/s/ind"
has "$T/out" "^triton '$HOME/.triton/cache' \(default\)$"
has "$T/out" '^  not present \(nothing to look at\)$'

# --- a signed archive: the marker names the key whose signature the restore verified ------------------------------
expect 0 "" -- "$CCPACK" keygen --out "$T/k"
KEY=$(cat "$T/out")
expect 0 "" -- "$CCPACK" create -q -o "$T/signed.ccpack" "${DIRS[@]}" --sign-key "$T/k"
CCPACK_ALLOW_UNSIGNED= expect 0 "" -- "$CCPACK" restore -q "$T/signed.ccpack" --trust "$T/k.pub" --inductor-dir "$T/g/ind" --triton-dir "$T/g/tri"
expect 0 "" -- "$CCPACK" status --json --inductor-dir "$T/g/ind" --triton-dir "$T/g/tri"
json_is "$T/out" "[f['archive']['signed_by'] for f in j['folders']]==['$KEY']*2"

finish
