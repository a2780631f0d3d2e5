#!/usr/bin/env bash
# CLI suite: drives the real binary and pins each scenario to its exact exit code and error line.
# Usage: cli_test.sh PATH/TO/ccpack PATH/TO/tests/data
set -u
SUITE=cli  # the shared harness: $T, ok, bad, expect
. "$(dirname "${BASH_SOURCE[0]}")/../helpers/harness.sh"
suite_paths "$@"

same_tree() {  # same files, bytes and modes (restore marker aside; Triton group files checked by grp_ok)
  if diff <(cd "$1" && find . \( -path ./.ccpack-marker.json -o -path ./.ccpack-entries \) -prune -o -printf '%p %y %m\n' | sort) \
          <(cd "$2" && find . \( -path ./.ccpack-marker.json -o -path ./.ccpack-entries \) -prune -o -printf '%p %y %m\n' | sort) >/dev/null &&
     diff -r --exclude=.ccpack-marker.json --exclude=.ccpack-entries --exclude='__grp__*.json' "$1" "$2" >/dev/null; then ok; else bad "trees differ: $1 vs $2"; fi
}

grp_ok() {  # every child path of every Triton group file under $1 is a file under $1
  if python3 - "$1" <<'PY'
import json, os, sys
root = sys.argv[1]; n = 0
for d, _, files in os.walk(root):
    for f in files:
        if f.startswith("__grp__") and f.endswith(".json"):
            for p in json.load(open(os.path.join(d, f)))["child_paths"].values():
                n += 1
                assert p.startswith(root + "/") and os.path.isfile(p), p
assert n > 0
PY
  then ok; else bad "group file child paths under $1"; fi
}

isolate
# This suite is about packing and restoring; signatures and trust have their own (signing_test.sh). Unsigned
# archives are refused by default, so opt out here, the way an entrypoint would.
export CCPACK_ALLOW_UNSIGNED=1
unset CCPACK_TRUSTED_KEYS CCPACK_SIGNING_KEY
A="$T/a.ccpack"

# --- usage -------------------------------------------------------------------------------------------
# The exit-code table in --help (from util/error.hpp) and the README's are the same rows.
README="$DATA/../../README.md"
if diff <("$CCPACK" --help | sed -n '/^Exit codes:/,$p' | sed -n 's/^  \([0-9]\+\)  \(.*\)$/\1 \2/p') \
        <(sed -n 's/^| \([0-9]\+\) | \(.*\) |$/\1 \2/p' "$README") >/dev/null; then ok; else bad "README exit codes differ from --help"; fi
expect 2 "" -- "$CCPACK"
expect 2 "" -- "$CCPACK" create
expect 2 "--level" -- "$CCPACK" create -o "$A" --level fastest --inductor-dir "$SAMPLE/inductor_cache"
# restore oci:// takes every --on-mismatch policy (fleet_test.sh); a bad one is a usage error before any request.
expect 2 "--on-mismatch must be refuse, force or purge" -- "$CCPACK" restore oci://127.0.0.1:1/ccpack/x:y --on-mismatch purged
CCPACK_ON_MISMATCH=never expect 2 "CCPACK_ON_MISMATCH must be refuse" -- "$CCPACK" restore oci://127.0.0.1:1/ccpack/x:y
expect 2 "--select: 'x' is not a fingerprint field" -- "$CCPACK" restore oci://127.0.0.1:1/ccpack/x:y --select x=1
# A typo in a --select value would make every pod cold (the archive judged stale): refused, with the value meant.
for typo in sm90 SM_90 sm_9O; do
  expect 2 "^ccpack: error: --select gpu.arch=$typo: not a gpu.arch value \(sm_NN for NVIDIA .*\); did you mean 'sm_90'\?$" -- \
    "$CCPACK" restore oci://127.0.0.1:1/ccpack/x:y --select "gpu.arch=$typo"
  expect 2 "did you mean 'sm_90'" -- "$CCPACK" check --select "gpu.arch=$typo" "$A"
done
# The same from the environment an init container sets (a flag would win).
CCPACK_SELECT="gpu.vendor=nvidia gpu.arch=sm90" expect 2 "did you mean 'sm_90'" -- "$CCPACK" restore oci://127.0.0.1:1/ccpack/x:y
expect 2 "^ccpack: error: --select: 'gpu.arc' is not a fingerprint field; did you mean 'gpu.arch'\?$" -- \
  "$CCPACK" restore oci://127.0.0.1:1/ccpack/x:y --select gpu.arc=sm_90
expect 2 "--add expects NAME=DIR" -- "$CCPACK" create -o "$A" --add nodir
expect 0 "" -- "$CCPACK" --help
grep -q "Exit codes" "$T/out" && ok || bad "--help does not list exit codes"

# --- create ------------------------------------------------------------------------------------------
expect 1 "no cache folder found" -- "$CCPACK" create -o "$A"
expect 1 "inductor cache folder '$T/missing'" -- "$CCPACK" create -o "$A" --inductor-dir "$T/missing"
expect 1 "folder '$T/no/such' does not exist" -- "$CCPACK" create -o "$T/no/such/a.ccpack" --inductor-dir "$SAMPLE/inductor_cache"
absent "failed create left $A" "$A"
expect 0 "" -- "$CCPACK" create -q -o "$A" "${DIRS[@]}"
[ ! -s "$T/err" ] && ok || bad "-q printed: $(cat "$T/err")"
# Environment variables pick the folders, as they do for torch.
TORCHINDUCTOR_CACHE_DIR="$SAMPLE/inductor_cache" TRITON_CACHE_DIR="$SAMPLE/triton_cache" \
  expect 0 "packed 107 files" -- "$CCPACK" create -o "$T/env.ccpack"
cmp -s "$A" "$T/env.ccpack" && ok || bad "env-var create differs from flag create"
# Deterministic.
"$CCPACK" create -q -o "$T/again.ccpack" "${DIRS[@]}"
cmp -s "$A" "$T/again.ccpack" && ok || bad "create is not deterministic"
# ... and independent of the thread count (a build machine and a laptop make the same archive).
"$CCPACK" create -q -j 1 -o "$T/j1.ccpack" "${DIRS[@]}"
"$CCPACK" create -q -j 3 -o "$T/j3.ccpack" "${DIRS[@]}"
cmp -s "$T/j1.ccpack" "$T/j3.ccpack" && cmp -s "$A" "$T/j1.ccpack" && ok || bad "archive depends on -j"

# Unreadable file: named. Root reads everything, so drop to nobody where we are root.
mkdir -p "$T/unread/sub" && echo secret >"$T/unread/sub/k.bin" && chmod 000 "$T/unread/sub/k.bin" && chmod -R a+rX "$T/unread/sub" 2>/dev/null
chmod 000 "$T/unread/sub/k.bin"; chmod 755 "$T" "$T/unread" "$T/unread/sub"
if unprivileged "an unreadable file is named"; then
  mkdir -p "$T/nobody" && chmod 777 "$T/nobody"
  expect 1 "cannot read '$T/unread/sub/k.bin': Permission denied" -- \
    "${RUNNER[@]}" "$CCPACK" create -o "$T/nobody/u.ccpack" --inductor-dir "$T/unread"
  [ -z "$(ls -A "$T/nobody")" ] && ok || bad "failed create left files in $T/nobody"
fi

# Special files are refused by name.
mkdir -p "$T/special" && mkfifo "$T/special/pipe"
expect 1 "refusing to pack FIFO '$T/special/pipe'" -- "$CCPACK" create -o "$T/s.ccpack" --inductor-dir "$T/special"

# --- inspect / verify ---------------------------------------------------------------------------------
expect 0 "" -- "$CCPACK" inspect "$A"
grep -q "inductor .* 18 files" "$T/out" && grep -q "triton .* 89 files" "$T/out" && ok || bad "inspect summary: $(cat "$T/out")"
expect 0 "" -- "$CCPACK" inspect --json --files "$A"
json_is "$T/out" "len([e for e in j['manifest']['entries'] if e['type']=='file'])==107"
expect 0 "OK, 1 frames and 107 files" -- "$CCPACK" verify "$A"

# --- stock tools ---------------------------------------------------------------------------------------
mkdir -p "$T/stock"
zstd -dc "$A" | tar -xf - -C "$T/stock" && ok || bad "zstd -dc | tar -x failed"
same_tree "$T/stock/inductor" "$SAMPLE/inductor_cache"
same_tree "$T/stock/triton" "$SAMPLE/triton_cache"

# --- restore -------------------------------------------------------------------------------------------
expect 0 "triton: restored" -- "$CCPACK" restore "$A" --inductor-dir "$T/r/ind" --triton-dir "$T/r/tri"
same_tree "$T/r/ind" "$SAMPLE/inductor_cache"
same_tree "$T/r/tri" "$SAMPLE/triton_cache"
grp_ok "$T/r/tri"
expect 0 "inductor: already restored" -- "$CCPACK" restore "$A" --inductor-dir "$T/r/ind" --triton-dir "$T/r/tri"
# A no-op restore starts no thread pool: oneTBB, once started, loads its allocator (libtbbmalloc), which the
# loader's LD_DEBUG=libs names; a restore that writes is the control that the check sees it.
tbb_loads() { LD_DEBUG=libs "$CCPACK" restore -q "$A" --inductor-dir "$1/ind" --triton-dir "$1/tri" 2>&1 | grep -c 'tbbmalloc'; }
if [ "$(tbb_loads "$T/tbb")" -gt 0 ]; then
  [ "$(tbb_loads "$T/r")" -eq 0 ] && ok || bad "a no-op restore started oneTBB"
else
  skip "no-op restore without oneTBB" "oneTBB loads no libtbbmalloc here, so its start cannot be seen"
fi
# Defaults: the same locations torch and triton use.
USER=tester expect 0 "" -- "$CCPACK" restore -q "$A"
same_tree "$TMPDIR/torchinductor_tester" "$SAMPLE/inductor_cache"
same_tree "$HOME/.triton/cache" "$SAMPLE/triton_cache"
expect 0 "" -- "$CCPACK" restore --json "$A" --inductor-dir "$T/j/ind" --triton-dir "$T/j/tri"
json_is "$T/out" "[c['status'] for c in j['components']]==['restored','restored']"

json_is "$T/out" "j['components'][1]['relocated'] is True and j['components'][1]['build_dir']=='$SAMPLE/triton_cache' and j['components'][1]['group_paths_rewritten']==77"
# --at-build-paths restores where the archive was built; --print-env, evaluated, names the folders that hold it.
copy_sample "$T/bp/src/inductor_cache" "$T/bp/src/triton_cache"
expect 0 "" -- "$CCPACK" create -q -o "$T/bp.ccpack" --inductor-dir "$T/bp/src/inductor_cache" --triton-dir "$T/bp/src/triton_cache"
mv "$T/bp/src" "$T/bp/orig"
expect 0 "" -- "$CCPACK" restore -q "$T/bp.ccpack" --at-build-paths --print-env
( unset TORCHINDUCTOR_CACHE_DIR TRITON_CACHE_DIR; eval "$(cat "$T/out")"
  [ "$TORCHINDUCTOR_CACHE_DIR" = "$T/bp/src/inductor_cache" ] && [ "$TRITON_CACHE_DIR" = "$T/bp/src/triton_cache" ] &&
  diff -r --exclude=.ccpack-marker.json --exclude=.ccpack-entries "$TORCHINDUCTOR_CACHE_DIR" "$T/bp/orig/inductor_cache" >/dev/null &&
  diff -r --exclude=.ccpack-marker.json --exclude=.ccpack-entries --exclude='__grp__*.json' "$TRITON_CACHE_DIR" "$T/bp/orig/triton_cache" >/dev/null ) &&
  ok || bad "--print-env: $(cat "$T/out")"
grp_ok "$T/bp/src/triton_cache"
expect 2 "does not take --inductor-dir" -- "$CCPACK" restore "$T/bp.ccpack" --at-build-paths --inductor-dir "$T/x"
# A build path this user cannot write: refused by name before anything is written.
if unprivileged "a build path this user cannot write"; then
  copy_sample "$T/ro/c/ind" "$T/ro/c/tri"
  expect 0 "" -- "$CCPACK" create -q -o "$T/ro.ccpack" --inductor-dir "$T/ro/c/ind" --triton-dir "$T/ro/c/tri"
  rm -rf "$T/ro/c" && chmod 555 "$T/ro" && chmod 644 "$T/ro.ccpack" && chmod 755 "$T"
  expect 1 "cannot restore inductor at its build path '$T/ro/c/ind': '$T/ro' is not writable here" -- \
    "${RUNNER[@]}" "$CCPACK" restore "$T/ro.ccpack" --at-build-paths
  [ -z "$(ls -A "$T/ro")" ] && ok || bad "refused --at-build-paths wrote into $T/ro"
fi
# Extra folders: packed with --add NAME=DIR, restored only where --add names them again.
mkdir -p "$T/ext/build/x" && printf 'so' >"$T/ext/build/x/mod.so" && mkdir -p "$T/ext/empty"
expect 0 "" -- "$CCPACK" create -q -o "$T/extra.ccpack" --inductor-dir "$SAMPLE/inductor_cache" --add torch_ext="$T/ext"
expect 0 "torch_ext: skipped: no folder given: pass --add torch_ext=DIR" -- "$CCPACK" restore "$T/extra.ccpack" --inductor-dir "$T/x1/ind"
absent "skipped component was written" "$T/x1/torch_ext"
expect 0 "torch_ext: restored" -- "$CCPACK" restore --inductor-dir "$T/x2/ind" --add torch_ext="$T/x2/ext" "$T/extra.ccpack"
same_tree "$T/x2/ext" "$T/ext"
[ -d "$T/x2/ext/empty" ] && ok || bad "empty folder not restored"
# A cache folder that is a symlink to a folder: restored where it points, the link kept.
mkdir -p "$T/volume/ind" && ln -s "$T/volume/ind" "$T/linked-ind"
expect 0 "inductor: restored" -- "$CCPACK" restore "$A" --inductor-dir "$T/linked-ind" --triton-dir "$T/lk/tri"
[ -L "$T/linked-ind" ] && ok || bad "symlinked cache folder replaced by a folder"
same_tree "$T/volume/ind" "$SAMPLE/inductor_cache"
# Two components into one folder, or one inside the other: a usage error before anything is written.
expect 2 "overlapping folders" -- "$CCPACK" restore "$A" --inductor-dir "$T/same" --triton-dir "$T/same"
expect 2 "overlapping folders" -- "$CCPACK" restore "$A" --inductor-dir "$T/nest" --triton-dir "$T/nest/triton"
absent "overlapping restore wrote something" "$T/same" "$T/nest"
# A target that is a file, not a folder: refused, the file kept.
echo keep >"$T/notdir"
expect 1 "is not a folder" -- "$CCPACK" restore "$A" --inductor-dir "$T/notdir" --triton-dir "$T/nd/tri"
[ "$(cat "$T/notdir")" = keep ] && ok || bad "file target changed"
absent "another component was restored before the refusal" "$T/nd/tri"

# --- damage: exit 4, target untouched --------------------------------------------------------------------
# A target holding other content (a restored target would make the restore a no-op that reads no payload).
mkdir -p "$T/d/ind" && echo precious >"$T/d/ind/keep.txt"
before=$(snap "$T/d")
size=$(stat -c %s "$A")
cp "$A" "$T/flip.ccpack"
printf '\x55' | dd of="$T/flip.ccpack" bs=1 seek=$((size - 200)) conv=notrunc status=none
expect 4 "" -- "$CCPACK" verify "$T/flip.ccpack"
expect 4 "" -- "$CCPACK" restore "$T/flip.ccpack" --inductor-dir "$T/d/ind" --triton-dir "$T/d/tri"
[ "$(snap "$T/d")" = "$before" ] && ok || bad "damaged restore changed the target"
head -c $((size - 1000)) "$A" >"$T/cut.ccpack"
expect 4 "cut.ccpack' is truncated" -- "$CCPACK" verify "$T/cut.ccpack"
expect 4 "cut.ccpack' is truncated" -- "$CCPACK" restore "$T/cut.ccpack" --inductor-dir "$T/d/ind" --triton-dir "$T/d/tri"
[ "$(snap "$T/d")" = "$before" ] && ok || bad "truncated restore changed the target"
echo "not an archive at all, just some text that is long enough" >"$T/text.ccpack"
expect 4 "is not a ccpack archive" -- "$CCPACK" inspect "$T/text.ccpack"
expect 1 "cannot open archive '$T/none.ccpack'" -- "$CCPACK" verify "$T/none.ccpack"
expect 4 "" -- "$CCPACK" verify --json "$T/cut.ccpack"
json_is "$T/out" "j['ok'] is False and j['exit_code']==4 and 'truncated' in j['error']"
ls -a "$T/d" | grep -q staging && bad "staging debris left in $T/r" || ok

# A file-size limit (ulimit -f) is an I/O error the run cleans up after, not a SIGXFSZ kill that leaves staging.
mkdir -p "$T/fs/ind" && echo before >"$T/fs/ind/keep.txt"
expect 1 "File too large" -- bash -c 'ulimit -f 8; exec "$@"' _ "$CCPACK" restore "$A" --inductor-dir "$T/fs/ind" --triton-dir "$T/fs/tri"
[ "$(cat "$T/fs/ind/keep.txt")" = before ] && [ ! -e "$T/fs/tri" ] && ok || bad "size-limited restore changed the targets"
ls -a "$T/fs" | grep -q staging && bad "size-limited restore left staging in $T/fs" || ok

# --- thread count --------------------------------------------------------------------------------------------
# Sized from the CPU quota of $CCPACK_CPU_ROOT (a fake / with cgroup v2 cpu.max, 1.5 CPUs: 2 threads), unless -j.
CR="$T/cpuroot"
mkdir -p "$CR/proc/self" "$CR/sys/fs/cgroup/pod/ctr" "$CR/sys/devices/system/cpu"
echo "0::/pod/ctr" >"$CR/proc/self/cgroup"
echo "30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw" >"$CR/proc/self/mountinfo"
printf 'Cpus_allowed_list:\t0-7\n' >"$CR/proc/self/status"
echo "0-7" >"$CR/sys/devices/system/cpu/online"
echo "150000 100000" >"$CR/sys/fs/cgroup/pod/ctr/cpu.max"
threads_are() {  # threads_are N FROM: the --json report in $T/out says so
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); assert (j['threads'], j['threads_from']) == (int(sys.argv[2]), sys.argv[3]), j" \
    "$T/out" "$1" "$2" && ok || bad "threads: want $1 from $2: $(grep threads "$T/out")"
}
CCPACK_CPU_ROOT="$CR" expect 0 "" -- "$CCPACK" restore --json "$A" --inductor-dir "$T/cpu1/ind" --triton-dir "$T/cpu1/tri"
threads_are 2 "cgroup cpu.max"
echo "max 100000" >"$CR/sys/fs/cgroup/pod/ctr/cpu.max"
CCPACK_CPU_ROOT="$CR" expect 0 "" -- "$CCPACK" restore --json "$A" --inductor-dir "$T/cpu2/ind" --triton-dir "$T/cpu2/tri"
threads_are 8 "cores"
echo "100000 100000" >"$CR/sys/fs/cgroup/pod/ctr/cpu.max"
CCPACK_CPU_ROOT="$CR" expect 0 "" -- "$CCPACK" restore --json -j 3 "$A" --inductor-dir "$T/cpu3/ind" --triton-dir "$T/cpu3/tri"
threads_are 3 "-j"
same_tree "$T/cpu3/tri" "$SAMPLE/triton_cache"
CCPACK_CPU_ROOT="$CR" expect 0 "" -- "$CCPACK" create --json -o "$T/cpu.ccpack" --inductor-dir "$SAMPLE/inductor_cache"
threads_are 1 "cgroup cpu.max"

# --- golden archive ----------------------------------------------------------------------------------------
expect 0 "" -- "$CCPACK" verify "$DATA/golden-v1.ccpack"
expect 0 "" -- "$CCPACK" restore -q "$DATA/golden-v1.ccpack" --inductor-dir "$T/g/ind" --triton-dir "$T/g/tri"
same_tree "$T/g/tri" "$SAMPLE/triton_cache"

finish
