#!/usr/bin/env bash
# Purge suite: `ccpack purge`, `restore --on-mismatch=purge` and `inspect --card` on a fake machine (the fake
# Python environment and stub NVML of fingerprint_test.sh). Each scenario is pinned to its exit code, the entries
# removed and kept, and the reason named.
# Usage: purge_test.sh PATH/TO/ccpack PATH/TO/tests/data PATH/TO/nvml_stub.so
set -u
# These archives are unsigned (signing_test.sh covers the gate).
export CCPACK_ALLOW_UNSIGNED=1
CCPACK=$(realpath "$1")
DATA=$(realpath "$2")
STUB=$(realpath "$3")
SAMPLE="$DATA/sample-cache"
SUITE=purge  # the shared harness: $T, ok, bad, expect
. "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
PY=$(python3 -c 'import sys; print(sys.executable)')
json_is() {
  if "$PY" -c "import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"; then ok; else bad "$1: not ($2): $(head -c 3000 "$1")"; fi
}
exists() { [ -e "$1" ] && ok || bad "$1 is gone"; }
gone() { [ ! -e "$1" ] && ok || bad "$1 still exists"; }

unset TORCHINDUCTOR_CACHE_DIR TRITON_CACHE_DIR TRITON_HOME CCPACK_PYTHON CCPACK_ON_MISMATCH TRITON_PTXAS_PATH WORLD_SIZE CCPACK_LIB_SEARCH_DIRS
for v in $(env | sed -n 's/^\(TORCHINDUCTOR_[A-Z_]*\|TRITON_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
export HOME="$T/home" TMPDIR="$T/tmp"
mkdir -p "$HOME" "$TMPDIR"

# --- the fake machine (as fingerprint_test.sh): torch 2.7.1+cu126, triton 3.6.0, an H200 through the stub NVML ---
dist() { mkdir -p "$1/$2.dist-info" && printf 'Metadata-Version: 2.1\nName: x\n' >"$1/$2.dist-info/METADATA"; }
BASE="$T/site/base/site-packages"
dist "$BASE" torch-2.7.1+cu126; dist "$BASE" triton-3.6.0; dist "$BASE" nvidia_cublas_cu12-12.6.4.1
mkdir -p "$BASE/torch" "$BASE/triton/backends/nvidia/bin" "$T/bin"
printf "from typing import Optional\n__version__ = '2.7.1+cu126'\ncuda: Optional[str] = '12.6'\nhip: Optional[str] = None\n" >"$BASE/torch/version.py"
printf '#!/bin/sh\necho "Cuda compilation tools, release 12.8, V12.8.93"\n' >"$BASE/triton/backends/nvidia/bin/ptxas"
chmod +x "$BASE/triton/backends/nvidia/bin/ptxas"
printf '#!/bin/sh\nPYTHONPATH=%s exec %s "$@"\n' "$BASE" "$PY" >"$T/bin/py-base"; chmod +x "$T/bin/py-base"
mkdir -p "$T/smi-none"; printf '#!/bin/sh\nexit 9\n' >"$T/smi-none/nvidia-smi"; chmod +x "$T/smi-none/nvidia-smi"
export CCPACK_NVML_LIBRARY="$STUB" CCPACK_PYTHON="$T/bin/py-base" STUB_NVML_SMS=132 PATH="$T/smi-none:$PATH"
DIRS=(--inductor-dir "$SAMPLE/inductor_cache" --triton-dir "$SAMPLE/triton_cache")
K90=2NKP7YHQDMPSUQYZ22I5XXVS3MFN4OW3IZHQMPZRUFO77YV35RCA
K80=FKIXBELYSTXMCGHVGTO57WWXJG6UD54E6BN2QAH2UWQZMCDJQGOA
# kernel_for ARCH SRC DST: a copy of kernel folder SRC whose .json files name target ARCH.
kernel_for() { cp -r "$2" "$3" && sed -i "s/\"arch\": 90,/\"arch\": $1,/" "$3"/*.json; }

A="$T/h200.ccpack"
expect 0 "" -- "$CCPACK" create -q -o "$A" "${DIRS[@]}"

# --- restore --on-mismatch=purge of the sm_90 archive on an sm_80 machine --------------------------------------
export STUB_NVML_CC=8.0 STUB_NVML_NAME="NVIDIA A100"
P="$T/p"
mkdir -p "$P/tri" "$P/ind/triton/0" "$P/ind/fxgraph"
cp -r "$SAMPLE/triton_cache/$K90" "$P/tri/$K90"; kernel_for 80 "$SAMPLE/triton_cache/$K80" "$P/tri/$K80"
cp -r "$SAMPLE/triton_cache/$K90" "$P/ind/triton/0/$K90"; kernel_for 80 "$SAMPLE/triton_cache/$K80" "$P/ind/triton/0/$K80"
echo x >"$P/ind/fxgraph/entry"; : >"$P/ind/fxgraph/entry.lock"
expect 0 "triton: purged .*stale here \(gpu.arch" -- "$CCPACK" restore "$A" --on-mismatch=purge --inductor-dir "$P/ind" --triton-dir "$P/tri"
grep -q "inductor: purged" "$T/err" && ok || bad "inductor not reported purged: $(cat "$T/err")"
grep -q "restored into" "$T/err" && bad "a purged component reported as relocated: $(cat "$T/err")" || ok
grep -Eq "removed '$P/tri/$K90' \[triton-kernel\]: built for gpu.arch sm_90 here sm_80" "$T/err" && ok || bad "kernel removal not named: $(cat "$T/err")"
gone "$P/tri/$K90"; gone "$P/ind/triton/0/$K90"; gone "$P/ind/fxgraph/entry.lock"
exists "$P/tri/$K80/triton_poi_fused_div_expand_mul_view_0.json"; exists "$P/ind/triton/0/$K80"; exists "$P/ind/fxgraph/entry"
# nothing of the archive was restored: no marker, none of its files
gone "$P/tri/.ccpack-marker.json"; gone "$P/ind/.ccpack-marker.json"; gone "$P/ind/23"
[ "$(find "$P" -name '*.ccpack-staging.*' | wc -l)" -eq 0 ] && ok || bad "staging debris left: $(find "$P" -name '*ccpack-staging*')"
# the same with --json: each removal with its rule; then nothing left to remove
kernel_for 90 "$SAMPLE/triton_cache/$K90" "$P/tri/$K90"
expect 0 "" -- "$CCPACK" restore --json "$A" --on-mismatch=purge --inductor-dir "$P/ind" --triton-dir "$P/tri"
json_is "$T/out" "[c['status'] for c in j['components']]==['purged','purged'] and [(r['rule'],r['path']) for r in j['purge']['removed']]==[('triton-kernel','$P/tri/$K90')]"
json_is "$T/out" "j['purge']['removed'][0]['files']==8 and j['purge']['kept_files']>=9"
CCPACK_ON_MISMATCH=purge expect 0 "removed 0 entries" -- "$CCPACK" restore "$A" --inductor-dir "$P/ind" --triton-dir "$P/tri"
# where it fits (sm_90), purge restores as usual and removes nothing
STUB_NVML_CC=9.0 expect 0 "triton: restored" -- "$CCPACK" restore "$A" --on-mismatch=purge --inductor-dir "$T/ok/ind" --triton-dir "$T/ok/tri"
exists "$T/ok/tri/.ccpack-marker.json"
# a folder restored for sm_90 (its marker) judged on the sm_80 machine: its whole content goes
expect 0 "removed '$T/ok/tri' \[marker\]: restored for another machine: .*gpu.arch" -- "$CCPACK" purge --inductor-dir "$T/ok/ind" --triton-dir "$T/ok/tri"
[ -d "$T/ok/tri" ] && [ -z "$(ls -A "$T/ok/tri")" ] && ok || bad "marker purge did not leave an empty folder: $(ls -A "$T/ok/tri")"
# refused components still refuse the whole restore under purge (an older driver here)
STUB_NVML_CC=9.0 STUB_NVML_DRIVER=570.86.10 expect 3 "gpu.driver" -- "$CCPACK" restore "$A" --on-mismatch=purge --inductor-dir "$T/rf/ind" --triton-dir "$T/rf/tri"
gone "$T/rf"
unset STUB_NVML_CC STUB_NVML_NAME

# --- contamination: a .so built against a CUDA 13 wheel's library ------------------------------------------------
C="$T/c"; W13="$BASE/nvidia/cu13/lib"; mkdir -p "$W13" "$C/src" "$C/ext/mod_a" "$C/ext/mod_b" "$C/ext/mod_c"
printf 'int stub_cuda(void) { return 13; }\n' >"$C/src/stub.c"
printf 'int stub_cuda(void);\nint ext(void) { return stub_cuda(); }\n' >"$C/src/ext.c"
printf 'int plain(void) { return 1; }\n' >"$C/src/plain.c"
if gcc -shared -fPIC -o "$W13/libcudart_stub.so.13" -Wl,-soname,libcudart_stub.so.13 "$C/src/stub.c" &&
   gcc -shared -fPIC -o "$C/ext/mod_a/ext_a.so" "$C/src/ext.c" "$W13/libcudart_stub.so.13" -Wl,-rpath,"$W13" &&
   gcc -shared -fPIC -o "$C/ext/mod_b/ext_b.so" "$C/src/ext.c" "$W13/libcudart_stub.so.13" -Wl,-rpath,"$W13" &&
   gcc -shared -fPIC -o "$C/ext/mod_c/plain.so" "$C/src/plain.c"; then ok; else bad "cannot build the test libraries"; fi
echo "not an ELF file" >"$C/ext/mod_c/junk.so"
readelf -d "$C/ext/mod_a/ext_a.so" | grep -q "libcudart_stub.so.13" && ok || bad "ext_a.so does not need the stub"
# the CUDA 13 wheel still installed, torch built for CUDA 12: ext_a/ext_b resolve only from another major's wheel
expect 0 "would remove '$C/ext/mod_a/ext_a.so' \[library\]: needs 'libcudart_stub.so.13', found only in a CUDA 13 wheel" -- \
  "$CCPACK" purge --dry-run --add ext="$C/ext" --inductor-dir "$C/none-i" --triton-dir "$C/none-t"
exists "$C/ext/mod_a/ext_a.so"
# the wheel removed: the needed library resolves nowhere
rm -rf "$BASE/nvidia/cu13"
expect 0 "" -- "$CCPACK" purge --dry-run --json --add ext="$C/ext" --inductor-dir "$C/none-i" --triton-dir "$C/none-t"
json_is "$T/out" "j['dry_run'] and sorted(r['path'] for r in j['removed'])==['$C/ext/mod_a/ext_a.so','$C/ext/mod_b/ext_b.so']"
json_is "$T/out" "all(r['rule']=='library' and r['reason']==\"needs 'libcudart_stub.so.13', which resolves nowhere here\" for r in j['removed'])"
json_is "$T/out" "j['unjudged']==1 and j['unjudged_examples'][0]['path']=='$C/ext/mod_c/junk.so' and j['unjudged_examples'][0]['reason']=='not an ELF file'"
exists "$C/ext/mod_a/ext_a.so"; exists "$C/ext/mod_b/ext_b.so"
expect 0 "removed '$C/ext/mod_a/ext_a.so' \[library\]: needs 'libcudart_stub.so.13', which resolves nowhere here" -- \
  "$CCPACK" purge --add ext="$C/ext" --inductor-dir "$C/none-i" --triton-dir "$C/none-t"
grep -q "removed 2 entries" "$T/err" && ok || bad "summary: $(cat "$T/err")"
gone "$C/ext/mod_a/ext_a.so"; gone "$C/ext/mod_b/ext_b.so"; exists "$C/ext/mod_c/plain.so"; exists "$C/ext/mod_c/junk.so"
# The sample cache's real Triton launcher (needs libcuda.so.1, a driver library) and kernels on the H200: kept
cp -r "$SAMPLE" "$T/s"
expect 0 "removed 0 entries" -- "$CCPACK" purge --inductor-dir "$T/s/inductor_cache" --triton-dir "$T/s/triton_cache"
diff -r "$SAMPLE" "$T/s" >/dev/null && ok || bad "purge on a fitting machine changed the sample cache"
# debris: a dead writer's tmp.pid_ folder and a ccpack staging folder beside the triton folder; a live one is kept
mkdir -p "$T/s/triton_cache/tmp.pid_999999999_x" "$T/s/triton_cache/tmp.pid_$$_y" "$T/s/.triton_cache.ccpack-staging.999999999"
expect 0 "" -- "$CCPACK" purge --json --inductor-dir "$T/s/inductor_cache" --triton-dir "$T/s/triton_cache"
json_is "$T/out" "sorted((r['rule'],r['path']) for r in j['removed'])==[('debris','$T/s/.triton_cache.ccpack-staging.999999999'),('debris','$T/s/triton_cache/tmp.pid_999999999_x')]"
exists "$T/s/triton_cache/tmp.pid_$$_y"

# --- inspect --card: kernels for two targets; no GPU name the fingerprint does not hold ----------------------------
M="$T/mixed"; cp -r "$SAMPLE" "$M"
for k in "$K80" 23OKJRPET2JMZXT3GCEAGUIH6YUPJL4XY6DTWVIEEIT37ZXHU4WQ; do sed -i 's/"arch": 90,/"arch": 80,/' "$M/triton_cache/$k"/*.json; done
expect 0 "" -- "$CCPACK" create -q -o "$T/mixed.ccpack" --inductor-dir "$M/inductor_cache" --triton-dir "$M/triton_cache"
expect 0 "" -- "$CCPACK" inspect --card "$T/mixed.ccpack"
cp "$T/out" "$T/card.md"
grep -q "The cache holds kernels for 2 targets: sm_80 (triton 3.6.0), sm_90 (triton 3.6.0)" "$T/card.md" && ok || bad "card: $(cat "$T/card.md")"
grep -q "^| sm_80 | cuda | 32 | 3.6.0 | 2 |" "$T/card.md" && ok || bad "card targets table: $(grep sm_ "$T/card.md")"
"$CCPACK" inspect --json "$T/mixed.ccpack" >"$T/insp.json"
GPU=$("$PY" -c "import json,sys; v=json.load(open(sys.argv[1]))['manifest']['fingerprint']['fields'].get('gpu.name',{}).get('value'); print(v or '')" "$T/insp.json")
names=$(grep -Eo "NVIDIA [A-Za-z0-9-]+|A100|H100|H200|MI300X|MI250X?|L40S?" "$T/card.md" | sort -u)
for n in $names; do case "$GPU" in *"$n"*) ok ;; *) bad "the card names GPU '$n'; the fingerprint's gpu.name is '$GPU'" ;; esac; done
grep -q "^- gpu.arch: absent" "$T/card.md" && ok || bad "card gpu.arch: $(grep gpu.arch "$T/card.md")"
grep -q "^- \[ \] gpu.arch = " "$T/card.md" && ok || bad "card lacks the gpu.arch trigger"
# an sm_90 cache created on an A100 machine: the card says sm_90 and never A100
STUB_NVML_CC=8.0 STUB_NVML_NAME="NVIDIA A100" expect 0 "" -- "$CCPACK" create -q -o "$T/a100.ccpack" "${DIRS[@]}"
expect 0 "" -- "$CCPACK" inspect --card "$T/a100.ccpack"
grep -q "A100" "$T/out" && bad "the card names the A100: $(grep A100 "$T/out")" || ok
grep -q "^- gpu.arch: sm_90" "$T/out" && ok || bad "card gpu.arch: $(grep gpu.arch "$T/out")"
grep -q "The cache's kernels and the fingerprint agree" "$T/out" && ok || bad "card consistency: $(cat "$T/out")"
expect 0 "" -- "$CCPACK" inspect --card --json "$A"
json_is "$T/out" "j['ok'] and j['card'].startswith('# Model card: h200.ccpack') and 'NVIDIA H200' in j['card']"

echo "purge: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
