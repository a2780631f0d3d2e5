#!/usr/bin/env bash
# Fleet suite: restores where init containers run. Archives are built on a fake GPU machine (the stub NVML, a fake
# Python environment) and restored on the same machine with the GPU taken away (no NVML, a failing nvidia-smi,
# no KFD), the way a container that requests no GPU sees it; a docker-registry on 127.0.0.1 serves them.
# Pinned: a registry restore does exactly what a file restore does (same warnings, byte-identical folders); an
# index whose archives differ only in gpu.arch refuses naming gpu.arch; --select and --fingerprint name the target.
# Usage: fleet_test.sh PATH/TO/ccpack PATH/TO/tests/data PATH/TO/nvml_stub.so
set -u
export CCPACK_ALLOW_UNSIGNED=1  # signing_test.sh covers the trust gate
SUITE=fleet
. "$(dirname "${BASH_SOURCE[0]}")/../helpers/harness.sh"
suite_paths "$@"
HELP="$HERE/registry_helpers.py"

isolate
mkdir -p "$T/bin"

# The machine: a Python environment with torch and triton, and either the stub NVML (an H200) or no GPU at all.
SITE="$T/site"
fake_site "$SITE"
fake_python "$T/bin/py" "$SITE" "$("$PY" -c 'import sys; print(sys.executable)')"
failing_nvidia_smi "$T/smi-none"
export CCPACK_PYTHON="$T/bin/py" PATH="$T/smi-none:$PATH" CCPACK_SYSFS_ROOT="$T/nosys"

# A plain docker-registry on a free port, stopped by PID at the end.
start_plain_registry
R="127.0.0.1:$PORT"

# Archives built on the GPU machine: an H200 (sm_90) and, with its fingerprint rewritten to a B200's (sm_100,
# the same Triton kernels: create records what the cache holds), a second one that differs only in gpu.arch.
gpu "$CCPACK" create -q -o "$T/h200.ccpack" "${DIRS[@]}"
gpu "$CCPACK" fingerprint --json >"$T/h200-machine.json"
"$CCPACK" inspect --json "$T/h200.ccpack" | "$PY" -c '
import json, sys
fp = json.load(sys.stdin)["manifest"]["fingerprint"]
fp["fields"]["gpu.arch"]["value"] = "sm_100"
fp["fields"]["gpu.name"]["value"] = "NVIDIA B200"
json.dump(fp, open(sys.argv[1], "w"))' "$T/b200.json"
"$PY" "$HELP" set-fingerprint "$T/h200.ccpack" "$T/b200.ccpack" "$T/b200.json"
expect 0 "" -- "$CCPACK" inspect --json "$T/h200.ccpack"
json_is "$T/out" "j['manifest']['fingerprint']['fields']['gpu.arch']['value']=='sm_90'"
nogpu "$CCPACK" fingerprint --json >"$T/here.json"
json_is "$T/here.json" "j['fields']['gpu.arch']['value'] is None and j['fields']['torch.version']['value']=='2.7.1+cu126'"

"$CCPACK" push -q --plain-http "$T/h200.ccpack" "$R/model:v1"
"$CCPACK" push -q --plain-http --index "$T/h200.ccpack" "$R/model:fleet"
"$CCPACK" push -q --plain-http --index "$T/b200.ccpack" "$R/model:fleet"

# --- a GPU-less container restores the GPU machine's archive: the file and the registry do the same ---------
TGT=(--inductor-dir "$T/cache/ind" --triton-dir "$T/cache/tri")
expect 0 "fingerprint field gpu.arch differs \(archive 'sm_90', here absent" -- nogpu "$CCPACK" restore "$T/h200.ccpack" "${TGT[@]}"
grep 'warning:' "$T/err" | grep -v -- '--allow-unsigned' >"$T/file-warnings"  # that one names the archive
mv "$T/cache" "$T/cache-file"
expect 0 "inductor: restored" -- nogpu "$CCPACK" restore --plain-http "oci://$R/model:v1" "${TGT[@]}"
grep 'warning:' "$T/err" | grep -v -- '--allow-unsigned' >"$T/oci-warnings"
check_same() { if cmp -s "$1" "$2"; then ok; else bad "$3: $(diff "$1" "$2" | head -20)"; fi; }
check_same "$T/file-warnings" "$T/oci-warnings" "the registry restore warns as the file restore does"
[ "$(grep -c 'cannot compare' "$T/file-warnings")" -ge 5 ] && ok || bad "file restore: fewer than 5 'cannot compare' warnings: $(cat "$T/file-warnings")"
# The markers differ only in their restore time (restored_at), where the archive came from (origin: the file, or
# the reference) and the archive file's record (archive_file: a file's only); every other byte of the folders is
# the same.
if diff -r --exclude=.ccpack-marker.json "$T/cache-file" "$T/cache" >"$T/tree.diff"; then ok; else bad "restored folders differ: $(head -5 "$T/tree.diff")"; fi
for m in "$T"/cache/*/.ccpack-marker.json; do
  python3 -c 'import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:]); assert "archive_file" not in a and "archive_file" in b; [d.pop(k,None) for d in (a,b) for k in ("restored_at","origin","archive_file")]; sys.exit(a!=b)' \
    "$m" "$T/cache-file/${m#"$T"/cache/}" && ok || bad "markers differ beyond restored_at: $m"
done
diff <(cd "$T/cache-file" && find . ! -name .ccpack-marker.json -printf '%p %y %m %s\n' | sort) \
     <(cd "$T/cache" && find . ! -name .ccpack-marker.json -printf '%p %y %m %s\n' | sort) >/dev/null \
  && ok || bad "restored trees differ in names, types, modes or sizes"
# Again: already there, after the header only.
expect 0 "inductor: already restored" -- nogpu "$CCPACK" restore --plain-http "oci://$R/model:v1" "${TGT[@]}"

# --- an index of two archives that differ only in gpu.arch, seen without a GPU ---------------------------
rm -rf "$T/cache"
expect 3 "the archives in $R/model:fleet differ only in gpu.arch, which this machine does not show \(gpu.arch absent \(nvml: .*give the container the GPU, or name the target with --select gpu.arch=VALUE" -- \
  nogpu "$CCPACK" restore --plain-http "oci://$R/model:fleet" "${TGT[@]}"
[ ! -e "$T/cache" ] && ok || bad "an undecided restore wrote something"  # refused when chosen, before the folder lock
expect 3 "differ only in gpu.arch" -- nogpu "$CCPACK" pull --plain-http "$R/model:fleet" -o "$T/p.ccpack"
absent "an undecided pull wrote a file" "$T/p.ccpack"
# --select names the target: the sm_90 archive, said on stderr with -v and recorded in --json.
expect 0 "--select gpu.arch=sm_90: the target machine's gpu.arch is taken as 'sm_90'; the probe had absent \(nvml:" -- \
  nogpu "$CCPACK" restore -v --plain-http --select gpu.arch=sm_90 "oci://$R/model:fleet" "${TGT[@]}"
expect 0 "" -- nogpu "$CCPACK" restore --plain-http --json --select gpu.arch=sm_90 "oci://$R/model:fleet" "${TGT[@]}"
json_is "$T/out" "j['registry']['layer_digest']=='sha256:$(sha "$T/h200.ccpack")' and j['noop']"
json_is "$T/out" "j['machine']['source']=='probe' and j['machine']['select']==[{'field':'gpu.arch','value':'sm_90','before':None,'before_source':j['machine']['select'][0]['before_source']}]"
json_is "$T/out" "[f['local'] for f in j['fingerprint']['fields'] if f['field']=='gpu.arch']==['sm_90']"
if diff -r --exclude=.ccpack-marker.json "$T/cache-file" "$T/cache" >/dev/null; then ok; else bad "--select gpu.arch=sm_90 restored something else than the sm_90 archive"; fi
expect 0 "" -- nogpu "$CCPACK" pull --plain-http --json --select gpu.arch=sm_90 "$R/model:fleet" -o "$T/p90.ccpack"
cmp -s "$T/p90.ccpack" "$T/h200.ccpack" && ok || bad "pull --select gpu.arch=sm_90 is not the sm_90 archive"
json_is "$T/out" "j['machine']['select'][0]['value']=='sm_90'"
# The B200 archive is chosen for sm_100, then the full policy judges it: its Triton kernels target sm_90.
rm -rf "$T/cache"
expect 3 "not restoring 'oci://$R/model:fleet': it does not fit this machine: .*cache.targets" -- \
  nogpu "$CCPACK" restore --plain-http --select gpu.arch=sm_100 "oci://$R/model:fleet" "${TGT[@]}"
[ -z "$(ls -A "$T/cache")" ] && ok || bad "a refused registry restore wrote something: $(ls -A "$T/cache")"
expect 3 "cache.targets" -- nogpu "$CCPACK" restore --select gpu.arch=sm_100 "$T/b200.ccpack" "${TGT[@]}"
# The target machine's own fingerprint file: no GPU field is absent, nothing to warn about the GPU.
expect 0 "inductor: restored" -- nogpu "$CCPACK" restore --plain-http --fingerprint "$T/h200-machine.json" "oci://$R/model:fleet" "${TGT[@]}"
[ "$(grep -c 'gpu\.' "$T/err")" -eq 0 ] && ok || bad "--fingerprint of the GPU machine still warns about the GPU: $(cat "$T/err")"
CCPACK_FINGERPRINT_FILE="$T/h200-machine.json" expect 0 "" -- nogpu "$CCPACK" restore --json --plain-http "oci://$R/model:fleet" "${TGT[@]}"
json_is "$T/out" "j['machine']['source'].startswith('file ') and j['registry']['layer_digest']=='sha256:$(sha "$T/h200.ccpack")'"
expect 0 "the archive fits this machine, with warnings: inductor warn \(paths.inductor\); triton warn \(paths.triton\)$" -- \
  nogpu "$CCPACK" check --fingerprint "$T/h200-machine.json" "$T/h200.ccpack" "${TGT[@]}"
expect 0 "fits this machine, with warnings" -- nogpu "$CCPACK" check "$T/h200.ccpack" "${TGT[@]}"
expect 3 "triton stale \(.*gpu.arch" -- nogpu "$CCPACK" check --select gpu.arch=sm_100 "$T/h200.ccpack" "${TGT[@]}"

# --- --on-mismatch=purge from a registry: what the same file restore does ----------------------------------
# A torch upgrade on the target makes Inductor's entries stale: purge restores Triton only, for file and registry.
for src in file oci; do
  rm -rf "$T/cache"
  what="$T/h200.ccpack"; [ "$src" = oci ] && what="oci://$R/model:v1"
  expect 0 "" -- nogpu "$CCPACK" restore --json --plain-http --on-mismatch=purge --select torch.version=2.8.0+cu126 "$what" "${TGT[@]}"
  "$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); print(json.dumps([[c["name"],c["status"],c["files"]] for c in j["components"]]), j["fingerprint"]["summary"])' \
    "$T/out" >"$T/purge-$src"
  (cd "$T/cache" 2>/dev/null && find . | sort) >"$T/purge-$src.tree"
done
check_same "$T/purge-file" "$T/purge-oci" "--on-mismatch=purge: the registry restore decides as the file restore"
check_same "$T/purge-file.tree" "$T/purge-oci.tree" "--on-mismatch=purge: the same folders"
grep -q '\["inductor", "purged", 18\], \["triton", "restored", 89\]\] inductor stale (torch.version)' "$T/purge-oci" && ok || bad "purge from the registry: inductor not stale: $(cat "$T/purge-oci")"

# --- a normal restore is quiet: a GPU-less pod that names its GPU, a signed archive relocated into its volume ---
# At most two lines and no warning, from a file and from the registry, the first time and on every restart;
# -v shows what needs no action (each --select, relocation, the GPU fields this machine does not show).
make_key "$T/ci.key"
signed_copy "$T/h200.ccpack" "$T/h200-signed.ccpack" "$T/ci.key"
"$CCPACK" push -q --plain-http "$T/h200-signed.ccpack" "$R/model:signed"
quiet_restore() {  # quiet_restore WHAT SOURCE: restore SOURCE into fresh folders, then again; each at most 2 lines
  local what=$1 src=$2 n
  rm -rf "$T/quiet"
  for run in first again; do
    CCPACK_ALLOW_UNSIGNED=0 CCPACK_TRUSTED_KEYS="$T/ci.key.pub" expect 0 "" -- \
      nogpu "$CCPACK" restore --plain-http --select gpu.arch=sm_90 "$src" --inductor-dir "$T/quiet/ind" --triton-dir "$T/quiet/tri"
    n=$(cat "$T/out" "$T/err" | wc -l)
    [ "$n" -le 2 ] && ! grep -q "warning" "$T/err" && ok || bad "$what, $run restore: $n lines: $(cat "$T/out" "$T/err")"
  done
  grep -Eqx "ccpack: inductor: already restored '$T/quiet/ind'; triton: already restored '$T/quiet/tri' \(from '$src', [0-9]+\.[0-9] s\)" "$T/err" &&
    ok || bad "$what: the no-op line: $(cat "$T/err")"
}
quiet_restore "file" "$T/h200-signed.ccpack"
quiet_restore "registry" "oci://$R/model:signed"
# status names where the folders came from, as the restore recorded it.
expect 0 "" -- nogpu "$CCPACK" status --json --inductor-dir "$T/quiet/ind" --triton-dir "$T/quiet/tri"
json_is "$T/out" "[f['archive']['origin'] for f in j['folders']]==['oci://$R/model:signed']*2"
rm -rf "$T/quiet"
CCPACK_ALLOW_UNSIGNED=0 CCPACK_TRUSTED_KEYS="$T/ci.key.pub" expect 0 "" -- \
  nogpu "$CCPACK" restore -v --select gpu.arch=sm_90 "$T/h200-signed.ccpack" --inductor-dir "$T/quiet/ind" --triton-dir "$T/quiet/tri"
grep -q "warning: --select gpu.arch=sm_90: the target machine's gpu.arch is taken as 'sm_90'" "$T/err" && ok || bad "-v: no --select line"
grep -q "^ccpack: triton: built in '$SAMPLE/triton_cache', restored into '$T/quiet/tri'" "$T/err" && ok || bad "-v: no relocation line"
grep -q "^ccpack: fingerprint field gpu.name differs (archive 'NVIDIA H200', here absent .*(no action needed)$" "$T/err" && ok || bad "-v: no line for the unseen gpu.name: $(cat "$T/err")"

# --- bad --select / --fingerprint: usage errors before anything is read -------------------------------------
expect 2 "--select: 'gpu.foo' is not a fingerprint field" -- "$CCPACK" restore --select gpu.foo=1 "oci://$R/model:v1" "${TGT[@]}"
expect 2 "--select takes FIELD=VALUE" -- "$CCPACK" check --select gpu.arch "$T/h200.ccpack"
expect 2 "--select gpu.arch: the value must be" -- "$CCPACK" pull --select gpu.arch= "$R/model:v1" -o "$T/x.ccpack"
expect 2 "--select gpu.arch is given twice" -- "$CCPACK" check --select gpu.arch=sm_90 --select gpu.arch=sm_80 "$T/h200.ccpack"
echo '{"schema":1,"fields":{"gpu.arch":{"value":5}}}' >"$T/badfp.json"
expect 1 "fingerprint file '$T/badfp.json'" -- "$CCPACK" check --fingerprint "$T/badfp.json" "$T/h200.ccpack"

finish
