#!/usr/bin/env bash
# Paths as users write them and folders as they are found: cache folders given with a trailing slash, `.` or `..`
# (flags and variables) are the same folders, and create records them without the slash, so --at-build-paths
# restores the archive; a target folder whose path is not UTF-8 is refused by name (or restored as packed with
# --no-relocate, its --json report valid UTF-8); status on a FIFO, a non-UTF-8 name and a subfolder it cannot
# read; registries.conf given as a device, a folder, or with a scheme in a location; the checks before the
# payload: a non-root restore into a root-owned folder, and a volume too small (a 1 MiB tmpfs), each refused with
# one line saying what is needed, before anything is extracted.
# Usage: paths_test.sh PATH/TO/ccpack PATH/TO/tests/data
set -u
SUITE=paths  # the shared harness: $T, ok, bad, expect
. "$(dirname "${BASH_SOURCE[0]}")/../helpers/harness.sh"
suite_paths "$@"
export CCPACK_ALLOW_UNSIGNED=1
unset CCPACK_TRUSTED_KEYS CCPACK_SIGNING_KEY
isolate
# utf8_json FILE EXPR: FILE is valid UTF-8 (strict) and JSON, and EXPR holds of it (as j).
utf8_json() {
  if "$PY" -c "import json,sys; j=json.loads(open(sys.argv[1],'rb').read().decode('utf-8')); sys.exit(0 if ($2) else 1)" "$1"; then
    ok; else bad "$1: not valid UTF-8 JSON with ($2): $(head -c 2000 "$1")"; fi
}
BAD=$(printf 'caf\xe9')  # not UTF-8

# --- a trailing slash, `.` and `..`: the same folders, recorded without the slash ------------------------------
copy_sample "$T/b/src/inductor_cache" "$T/b/src/triton_cache"
expect 0 "" -- "$CCPACK" create -q -o "$T/b.ccpack" --inductor-dir "$T/b/src/inductor_cache/" --triton-dir "$T/b/src/./x/../triton_cache//"
expect 0 "" -- "$CCPACK" inspect --json "$T/b.ccpack"
json_is "$T/out" "[c['source'] for c in j['manifest']['components']]==['$T/b/src/inductor_cache','$T/b/src/triton_cache']"
mv "$T/b/src" "$T/b/orig"
expect 0 "" -- "$CCPACK" restore -q "$T/b.ccpack" --at-build-paths
diff -r --exclude=.ccpack-marker.json --exclude=.ccpack-entries "$T/b/src/inductor_cache" "$T/b/orig/inductor_cache" >/dev/null &&
  ok || bad "--at-build-paths of an archive made with trailing slashes"
expect 0 "" -- "$CCPACK" restore -q "$T/b.ccpack" --inductor-dir "$T/p1/ind/" --triton-dir "$T/p1/tri/."
[ -f "$T/p1/ind/.ccpack-marker.json" ] && [ -f "$T/p1/tri/.ccpack-marker.json" ] && ok || bad "restore with a trailing slash"
TORCHINDUCTOR_CACHE_DIR="$T/p2/ind/" TRITON_CACHE_DIR="$T/p2/x/../tri/" expect 0 "" -- "$CCPACK" restore --json "$T/b.ccpack"
json_is "$T/out" "[c['dir'] for c in j['components']]==['$T/p2/ind','$T/p2/tri']"
TORCHINDUCTOR_CACHE_DIR="$T/p2/ind/" TRITON_CACHE_DIR="$T/p2/tri//" expect 0 "" -- "$CCPACK" status --json
json_is "$T/out" "[f['state'] for f in j['folders']]==['restored','restored']"

# --- a target folder whose path is not UTF-8 -------------------------------------------------------------------
expect 1 "^ccpack: error: cannot restore inductor into '$T/caf\\\\xe9/ind': its path is not valid UTF-8" -- \
  "$CCPACK" restore "$T/b.ccpack" --inductor-dir "$T/$BAD/ind" --triton-dir "$T/$BAD/tri"
absent "a refused restore wrote into $T/$BAD" "$T/$BAD/ind/.ccpack-marker.json"
expect 0 "" -- "$CCPACK" restore --json --no-relocate "$T/b.ccpack" --inductor-dir "$T/$BAD/ind" --triton-dir "$T/$BAD/tri"
utf8_json "$T/out" "j['components'][0]['dir']=='$T/caf\\\\xe9/ind'"

# --- status: FIFOs, a name that is not UTF-8, a subfolder it cannot read ----------------------------------------
S="$T/p1"
mkfifo "$S/ind/fifo-$BAD"
expect 0 "" -- "$CCPACK" status --json --inductor-dir "$S/ind" --triton-dir "$S/tri"
utf8_json "$T/out" "'fifo-caf\\\\xe9' in j['folders'][0]['added']['other']"
rm "$S/ind/fifo-$BAD"
victim=$(cd "$S/tri" && find . -type f ! -name '.ccpack-*' ! -name '__grp__*' | head -1 | cut -c3-)
rm "$S/tri/$victim" && mkfifo "$S/tri/$victim"
expect 0 "" -- timeout 20 "$CCPACK" status --json --verify --inductor-dir "$S/ind" --triton-dir "$S/tri"
json_is "$T/out" "j['folders'][1]['modified']==['$victim']"
rm "$S/ind/.ccpack-entries" && mkfifo "$S/ind/.ccpack-entries"
expect 0 "" -- timeout 20 "$CCPACK" status --json --inductor-dir "$S/ind" --triton-dir "$S/tri"
json_is "$T/out" "j['folders'][0]['state']=='no_entry_list'"
if unprivileged "a subfolder status cannot read"; then
  chmod 755 "$T" "$T/p2" && mkdir -p "$T/p2/tri/zz" && chmod 0 "$T/p2/tri/zz"
  expect 1 "^ccpack: error: cannot read cache folder '$T/p2/tri' \(at '$T/p2/tri/zz'\): Permission denied$" -- \
    "${RUNNER[@]}" "$CCPACK" status --inductor-dir "$T/p2/ind" --triton-dir "$T/p2/tri"
  chmod 755 "$T/p2/tri/zz"
fi

# --- registries.conf: a device, a folder, a scheme --------------------------------------------------------------
expect 1 "^ccpack: error: registries configuration '/dev/zero' is larger than 1 MiB$" -- \
  "$CCPACK" pull --registries-conf /dev/zero 127.0.0.1:9/m:v1 -o "$T/x.ccpack"
CONTAINERS_REGISTRIES_CONF="$T" expect 1 "^ccpack: error: registries configuration '$T' is a folder, not a file$" -- \
  "$CCPACK" pull 127.0.0.1:9/m:v1 -o "$T/x.ccpack"
printf '[[registry]]\nprefix = "127.0.0.1:9"\nlocation = "http://127.0.0.1:9"\n' >"$T/scheme.conf"
expect 2 "the \[\[registry\]\] '127.0.0.1:9' has location 'http://127.0.0.1:9': write host\[:port\]\[/path\] without http:// or https://" -- \
  "$CCPACK" pull --registries-conf "$T/scheme.conf" 127.0.0.1:9/m:v1 -o "$T/x.ccpack"
# --- before the payload: permissions and free space -------------------------------------------------------------
mkdir -p "$T/big/src" && head -c 3000000 /dev/urandom >"$T/big/src/blob.bin"
expect 0 "" -- "$CCPACK" create -q -o "$T/big.ccpack" --inductor-dir "$T/big/src"
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
  mkdir -p "$T/rootowned" && chmod 755 "$T" "$T/rootowned" && chmod 644 "$T/big.ccpack"
  mkdir -p "$T/h1000" && chown 1000:1000 "$T/h1000"
  HOME="$T/h1000" TMPDIR="$T/h1000" XDG_CACHE_HOME="$T/h1000" expect 1 \
    "^ccpack: error: cannot restore inductor into '$T/rootowned/ind': its folder '$T/rootowned' is owned by uid 0 \(mode 0755\) and uid 1000 cannot write to it; run as uid 0 \(securityContext runAsUser\), or set fsGroup so that the volume is group-writable$" -- \
    setpriv --reuid=1000 --regid=1000 --clear-groups "$CCPACK" restore "$T/big.ccpack" --inductor-dir "$T/rootowned/ind"
  [ -z "$(ls -A "$T/rootowned")" ] && ok || bad "the refused restore left $(ls -A "$T/rootowned")"
else
  skip "a non-root restore into a root-owned folder" "not root, or no setpriv (util-linux)"
fi
mkdir -p "$T/small"
if [ "$(id -u)" -eq 0 ] && mount -t tmpfs -o size=1m tmpfs "$T/small" 2>/dev/null; then
  expect 1 "^ccpack: error: cannot restore inductor: needs 3 MB, 1 MB free on '$T/small' \(3000000 bytes needed, [0-9]+ free\); free space there or restore into a larger volume$" -- \
    "$CCPACK" restore "$T/big.ccpack" --inductor-dir "$T/small/ind"
  [ -z "$(ls -A "$T/small")" ] && ok || bad "the refused restore left $(ls -A "$T/small")"
  umount "$T/small"
else
  skip "a restore onto a full volume" "a tmpfs cannot be mounted here (not root, or no permission)"
fi

finish
