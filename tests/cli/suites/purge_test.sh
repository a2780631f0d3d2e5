#!/usr/bin/env bash
# Purge suite: `ccpack purge`, `restore --on-mismatch=purge` and `inspect --card` on a fake machine (the fake
# Python environment and stub NVML of fingerprint_test.sh). Each scenario is pinned to its exit code, the entries
# removed and kept, and the reason named.
# Usage: purge_test.sh PATH/TO/ccpack PATH/TO/tests/data PATH/TO/nvml_stub.so
set -u
# These archives are unsigned (signing_test.sh covers the gate).
export CCPACK_ALLOW_UNSIGNED=1
SUITE=purge  # the shared harness: $T, ok, bad, expect
. "$(dirname "${BASH_SOURCE[0]}")/../helpers/harness.sh"
suite_paths "$@"
real_python
exists() { [ -e "$1" ] && ok || bad "$1 is gone"; }
gone() { [ ! -e "$1" ] && ok || bad "$1 still exists"; }

isolate
unset CCPACK_LIB_SEARCH_DIRS

# --- the fake machine (as fingerprint_test.sh): torch 2.7.1+cu126, triton 3.6.0, an H200 through the stub NVML ---
BASE="$T/site/base/site-packages"
dist "$BASE" torch-2.7.1+cu126; dist "$BASE" triton-3.6.0; dist "$BASE" nvidia_cublas_cu12-12.6.4.1
mkdir -p "$BASE/torch" "$BASE/triton/backends/nvidia/bin" "$T/bin"
printf "from typing import Optional\n__version__ = '2.7.1+cu126'\ncuda: Optional[str] = '12.6'\nhip: Optional[str] = None\n" >"$BASE/torch/version.py"
printf '#!/bin/sh\necho "Cuda compilation tools, release 12.8, V12.8.93"\n' >"$BASE/triton/backends/nvidia/bin/ptxas"
chmod +x "$BASE/triton/backends/nvidia/bin/ptxas"
fake_python "$T/bin/py-base" "$BASE"
mkdir -p "$T/smi-none"; printf '#!/bin/sh\nexit 9\n' >"$T/smi-none/nvidia-smi"; chmod +x "$T/smi-none/nvidia-smi"
export CCPACK_NVML_LIBRARY="$STUB" CCPACK_PYTHON="$T/bin/py-base" STUB_NVML_SMS=132 PATH="$T/smi-none:$PATH"
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
# refused components still refuse the whole restore under purge (an older driver here): exit 3, nothing written,
# and nothing purged, not even what the sm_80 machine would purge (a kernel for sm_90, a lock file, tmp.pid_ debris)
STUB_NVML_DRIVER=570.86.10 expect 3 "gpu.driver" -- "$CCPACK" restore "$A" --on-mismatch=purge --inductor-dir "$T/rf/ind" --triton-dir "$T/rf/tri"
gone "$T/rf"
R="$T/rf2"; mkdir -p "$R/ind/fxgraph" "$R/tri/tmp.pid_999999999_x"
cp -r "$SAMPLE/triton_cache/$K90" "$R/tri/$K90"; : >"$R/ind/fxgraph/entry.lock"
listing() { (cd "$1" && find . -printf '%p %y %s\n' | LC_ALL=C sort); }
before=$(listing "$R")
STUB_NVML_DRIVER=570.86.10 expect 3 "gpu.driver" -- "$CCPACK" restore --json "$A" --on-mismatch=purge --inductor-dir "$R/ind" --triton-dir "$R/tri"
json_is "$T/out" "not j['ok'] and j['exit_code']==3 and 'purge' not in j and [(c['name'],c['verdict']) for c in j['fingerprint']['components']]==[('inductor','refuse'),('triton','refuse')]"
json_is "$T/out" "sorted((f['field'],f['verdicts']['triton']) for f in j['fingerprint']['fields'] if f['verdicts']['triton'] in ('stale','refuse'))==[('cache.targets','stale'),('gpu.arch','stale'),('gpu.driver','refuse')]"
[ "$(listing "$R")" = "$before" ] && ok || bad "the refused restore changed $R: $(diff <(echo "$before") <(listing "$R"))"
unset STUB_NVML_CC STUB_NVML_NAME

# --- restore --on-mismatch=purge on the H200 with one Inductor setting changed: the inductor component is stale
# (env.inductor), triton still fits, ext has no folder. The report says each one, and exactly what was removed.
mkdir -p "$T/extsrc/m" && echo e >"$T/extsrc/m/e.txt"
X="$T/three.ccpack"
expect 0 "" -- "$CCPACK" create -q -o "$X" "${DIRS[@]}" --add ext="$T/extsrc"
Q="$T/q"; mkdir -p "$Q/ind/fxgraph" "$Q/ind/triton/0"
echo x >"$Q/ind/fxgraph/entry"; : >"$Q/ind/fxgraph/entry.lock"
cp -r "$SAMPLE/triton_cache/$K90" "$Q/ind/triton/0/$K90"; kernel_for 80 "$SAMPLE/triton_cache/$K80" "$Q/ind/triton/0/$K80"
cp -r "$Q" "$T/q-json"
export TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS=TRITON
expect 0 "" -- "$CCPACK" restore -v "$X" --on-mismatch=purge --inductor-dir "$Q/ind" --triton-dir "$Q/tri"
grep -v "^ccpack: warning: \|^ccpack: fingerprint field " "$T/err" >"$T/report"
cat >"$T/want" <<WANT
ccpack: inductor: purged '$Q/ind': stale here (env.inductor): not restored; the local stale artifacts of its folder are purged
ccpack: triton: restored '$Q/tri' (89 files, 0.4 MB)
ccpack: triton: built in '$SAMPLE/triton_cache', restored into '$Q/tri'; 77 Triton group paths rewritten
ccpack: ext: skipped: no folder given: pass --add ext=DIR to restore it
ccpack: removed '$Q/ind/fxgraph/entry.lock' [debris]: a lock file
ccpack: removed '$Q/ind/triton/0/$K80' [triton-kernel]: built for gpu.arch sm_80 here sm_90
ccpack: removed 2 entries (9 files, 0.0 MB); kept 9 files; 0 entries could not be judged and were kept
WANT
diff "$T/want" "$T/report" >/dev/null && ok || bad "restore --on-mismatch=purge report: $(diff "$T/want" "$T/report")"
# Again: the Triton folder already holds the archive; its report says when its paths were rewritten, not "0".
expect 0 "" -- "$CCPACK" restore -v "$X" --on-mismatch=purge --inductor-dir "$Q/ind" --triton-dir "$Q/tri"
grep -qxF "ccpack: triton: built in '$SAMPLE/triton_cache', restored into '$Q/tri'; its paths were rewritten when it was restored" "$T/err" &&
  ok || bad "no-op relocation line: $(grep 'built in' "$T/err")"
[ "$(grep -c "^ccpack: warning: fingerprint field env.inductor differs" "$T/err")" -eq 1 ] && ok || bad "env.inductor warning: $(cat "$T/err")"
gone "$Q/ind/fxgraph/entry.lock"; gone "$Q/ind/triton/0/$K80"; exists "$Q/ind/fxgraph/entry"; exists "$Q/ind/triton/0/$K90"
gone "$Q/ind/.ccpack-marker.json"; exists "$Q/tri/.ccpack-marker.json"; exists "$Q/tri/$K90"
Q="$T/q-json"
expect 0 "" -- "$CCPACK" restore --json "$X" --on-mismatch=purge --inductor-dir "$Q/ind" --triton-dir "$Q/tri"
json_is "$T/out" "[(c['name'],c['status'],c['dir']) for c in j['components']]==[('inductor','purged','$Q/ind'),('triton','restored','$Q/tri'),('ext','skipped','')]"
json_is "$T/out" "[c['reason'] for c in j['components']]==['stale here (env.inductor): not restored; the local stale artifacts of its folder are purged','','no folder given: pass --add ext=DIR to restore it']"
json_is "$T/out" "[(r['component'],r['rule'],r['path'],r['reason'],r['folder'],r['files']) for r in j['purge']['removed']]==[('inductor','debris','$Q/ind/fxgraph/entry.lock','a lock file',False,1),('inductor','triton-kernel','$Q/ind/triton/0/$K80','built for gpu.arch sm_80 here sm_90',True,8)]"
json_is "$T/out" "j['purge']['removed_files']==9 and j['purge']['unjudged']==0 and j['purge']['kept_files']==9 and not j['purge']['truncated']"
json_is "$T/out" "[(f['field'],f['verdicts']) for f in j['fingerprint']['fields'] if f['field']=='env.inductor']==[('env.inductor',{'inductor':'stale','triton':'match'})]"
unset TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS

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

# --- the lock restore takes (flock on the parent of each cache folder): purge gives up at once with
# --lock-timeout 0, or waits and then judges what the holder left; restore --on-mismatch=purge waits the same way.
# hold_lock FOLDER: another process holds FOLDER's lock as a restore does, until $T/release exists (at most 60 s);
# returns once it is held.
hold_lock() {
  rm -f "$T/held" "$T/release"
  flock -x "$1" sh -c ': >"$0/held"; i=0; while [ ! -e "$0/release" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done' "$T" &
  HOLDER=$!
  local i=0
  while [ ! -e "$T/held" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
  [ -e "$T/held" ] || bad "flock did not take $1"
}
release_lock() { : >"$T/release"; wait "$HOLDER"; }
# saw FILE TEXT: true once FILE holds TEXT (looked for during at most 60 s).
saw() { local i=0; while ! grep -qF -- "$2" "$1" 2>/dev/null; do [ $i -lt 600 ] || return 1; sleep 0.1; i=$((i+1)); done; }
L="$T/lk"; mkdir -p "$L/ind" "$L/tri"; : >"$L/tri/x.lock"
hold_lock "$L"
expect 1 "^ccpack: error: cannot lock folder '$L': another ccpack restore or purge of its cache folders still holds it after 0 s$" -- \
  "$CCPACK" purge --lock-timeout 0 --inductor-dir "$L/ind" --triton-dir "$L/tri"
exists "$L/tri/x.lock"
"$CCPACK" purge --inductor-dir "$L/ind" --triton-dir "$L/tri" 2>"$T/perr" & P=$!
saw "$T/perr" "ccpack: waiting for the lock of '$L': another ccpack restore or purge of its cache folders holds it (up to 300 s, --lock-timeout)" &&
  ok || bad "purge did not wait for the lock: $(cat "$T/perr")"
: >"$L/tri/late.lock"  # written by the holder, before it lets go: a purge that did not wait never sees it
release_lock
wait "$P" && ok || bad "purge after the wait: exit $?: $(cat "$T/perr")"
grep -qF "ccpack: removed '$L/tri/late.lock' [debris]: a lock file" "$T/perr" && ok || bad "late.lock not purged: $(cat "$T/perr")"
gone "$L/tri/late.lock"; gone "$L/tri/x.lock"
# restore --on-mismatch=purge (the sm_90 archive on an sm_80 machine) waits for the same lock, then purges
cp -r "$SAMPLE/triton_cache/$K90" "$L/tri/$K90"
hold_lock "$L"
STUB_NVML_CC=8.0 "$CCPACK" restore "$A" --on-mismatch=purge --inductor-dir "$L/ind" --triton-dir "$L/tri" 2>"$T/rerr" & P=$!
saw "$T/rerr" "ccpack: waiting for the lock of '$L': another ccpack restore or purge of its cache folders holds it (as long as it takes)" &&
  ok || bad "restore did not wait for the lock: $(cat "$T/rerr")"
: >"$L/ind/late.lock"
release_lock
wait "$P" && ok || bad "restore --on-mismatch=purge after the wait: exit $?: $(cat "$T/rerr")"
grep -qF "ccpack: removed '$L/ind/late.lock' [debris]: a lock file" "$T/rerr" && ok || bad "late.lock not purged: $(cat "$T/rerr")"
gone "$L/ind/late.lock"; gone "$L/tri/$K90"

# --- inspect --card: kernels for two targets; no GPU name the fingerprint does not hold ----------------------------
M="$T/mixed"; cp -r "$SAMPLE" "$M"
for k in "$K80" 23OKJRPET2JMZXT3GCEAGUIH6YUPJL4XY6DTWVIEEIT37ZXHU4WQ; do sed -i 's/"arch": 90,/"arch": 80,/' "$M/triton_cache/$k"/*.json; done
expect 0 "" -- "$CCPACK" create -q -o "$T/mixed.ccpack" --inductor-dir "$M/inductor_cache" --triton-dir "$M/triton_cache"
expect 0 "" -- "$CCPACK" inspect --card "$T/mixed.ccpack"
cp "$T/out" "$T/card.md"
grep -q "The cache holds kernels for 2 targets: sm_80 (triton 3.6.0), sm_90 (triton 3.6.0)" "$T/card.md" && ok || bad "card: $(cat "$T/card.md")"
grep -q "^| sm_80 | cuda | 32 | 3.6.0 | 2 |" "$T/card.md" && ok || bad "card targets table: $(grep sm_ "$T/card.md")"
"$CCPACK" inspect --json "$T/mixed.ccpack" >"$T/insp.json"
GPU=$(field "j['manifest']['fingerprint']['fields'].get('gpu.name',{}).get('value') or ''" "$T/insp.json")
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

finish
