#!/usr/bin/env bash
# A registry that misbehaves, and downloads that resume at a verified frame. A docker-registry on 127.0.0.1 holds a
# three-frame archive; tests/cli/helpers/fault_proxy.py in front of it answers 500s, stalls in the middle of a blob, cuts or
# truncates bodies, corrupts a byte, loops redirects, announces far more than the blob holds, or serves a manifest
# over the size bound. Each case: its exit code, one error line, bounded in time (timeout), nothing written and the
# old cache (or file) left as it was. Cuts at a random offset resume at a frame boundary, shown in --json.
# Usage: registry_faults_test.sh PATH/TO/ccpack PATH/TO/tests/data
set -u
export CCPACK_ALLOW_UNSIGNED=1 CCPACK_ON_MISMATCH=force  # archives made here; fleet_test.sh covers the policy
SUITE=faults
. "$(dirname "${BASH_SOURCE[0]}")/../helpers/harness.sh"
suite_paths "$@"
isolate_home
unset CCPACK_LOW_SPEED_TIME

start_plain_registry

# A cache that ccpack lays out in three frames (a kernel folder named by an FX-graph pickle, then the rest).
"$PY" - "$T/c" <<'EOF'
import os, random, sys
out, r = sys.argv[1], random.Random(11)
words = ["w%03x" % i for i in range(1024)]
def write(path, size, head=b""):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(head)
        n = len(head)
        while n < size:
            line = (" ".join(r.choices(words, k=16)) + "\n").encode()
            f.write(line)
            n += len(line)
name = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567ABCDEFGHIJKLMNOPQRST"
write(f"{out}/triton/{name}/k.cubin", 20_000_000)
write(f"{out}/inductor/fxgraph/ab/entry", 1_500_000, b"kernel " + name.encode() + b"\n")
for k in range(4):
    write(f"{out}/inductor/rest/r{k}.py", 13_000_000)
EOF
"$CCPACK" create -q -o "$T/a.ccpack" --inductor-dir "$T/c/inductor" --triton-dir "$T/c/triton"
"$CCPACK" create -q -o "$T/old.ccpack" "${DIRS[@]}"
# Frame boundaries, as blob offsets (the header frame's size plus each frame's offset).
"$CCPACK" inspect --json "$T/a.ccpack" | "$PY" -c '
import json, struct, sys
j = json.load(sys.stdin)
head = 8 + struct.unpack_from("<I", open(sys.argv[1], "rb").read(8), 4)[0]
print(head, " ".join(str(head + f["offset"]) for f in j["manifest"]["frames"]), head + sum(f["compressed_size"] for f in j["manifest"]["frames"]))' \
  "$T/a.ccpack" >"$T/frames"
read -r HEAD F0 F1 F2 SIZE <"$T/frames"
[ "$F0" = "$HEAD" ] && [ "$SIZE" = "$(stat -c %s "$T/a.ccpack")" ] && [ "$F2" -gt "$F1" ] && ok || bad "expected three frames: $(cat "$T/frames")"
"$CCPACK" push -q --plain-http "$T/a.ccpack" "127.0.0.1:$PORT/model:v1"

# proxy NAME FAULT...: a fault proxy in front of the registry; sets P to its address, its log in $T/NAME.log.
proxy() {
  local name=$1
  shift
  spawn "$PY" "$HERE/fault_proxy.py" "$T/$name.port" "$PORT" "$T/$name.log" "$@" 2>>"$T/proxy.err"
  wait_for "$T/$name.port"
  P="127.0.0.1:$(cat "$T/$name.port")"
}
# Trees equal (group files name their folder, so both sides restore into the same paths); a registry restore leaves
# nothing beside the folders.
same_tree() {
  if diff -r --exclude=.ccpack-marker.json "$1" "$2" >/dev/null &&
    diff <(cd "$1" && find . -printf '%p %y %m\n' | sort) <(cd "$2" && find . -printf '%p %y %m\n' | sort) >/dev/null; then ok
  else bad "$3: trees differ: $1 vs $2"; fi
}
TGT=(--inductor-dir "$T/cache/ind" --triton-dir "$T/cache/tri")
# The old cache in place; a restore that fails must leave it so (and no staging folder beside it).
old_cache() { rm -rf "$T/cache" && "$CCPACK" restore -q "$T/old.ccpack" "${TGT[@]}"; }
old_stays() {
  same_tree "$T/cache" "$T/want-old-at" "$1: the old cache stays"
  [ "$(ls -A "$T/cache" | grep -c -v -x -e ind -e tri)" -eq 0 ] && ok || bad "$1: debris beside the cache: $(ls -A "$T/cache")"
}
# The old cache restored at the target paths once, as the reference of "unchanged".
"$CCPACK" restore -q "$T/old.ccpack" "${TGT[@]}" && mv "$T/cache" "$T/want-old-at"
echo previous >"$T/keep.ccpack"
file_stays() {
  [ "$(cat "$T/keep.ccpack")" = previous ] && ok || bad "$1: the previous file changed"
  [ "$(ls "$T" | grep -c 'keep.ccpack.')" -eq 0 ] && ok || bad "$1: a temporary file is left: $(ls "$T")"
}

# The reference of a good restore at the target paths.
rm -rf "$T/cache" && "$CCPACK" restore -q "$T/a.ccpack" "${TGT[@]}" && mv "$T/cache" "$T/want-at"

# --- 500, then success ------------------------------------------------------------------------------------
proxy e500 --fail-first 2:500
old_cache
expect 0 "inductor: restored" -- timeout 60 "$CCPACK" restore --plain-http "oci://$P/model:v1" "${TGT[@]}"
[ "$(grep -c ' 500 ' "$T/e500.log")" -eq 2 ] && ok || bad "two 500s were not answered: $(cat "$T/e500.log")"
same_tree "$T/cache" "$T/want-at" "500 then success"

# --- a cut at a random offset resumes at the frame boundary before it --------------------------------------
CUT=$((F1 + 1 + RANDOM * 32768 % (SIZE - F1 - 2)))
[ $((RANDOM % 2)) -eq 0 ] && CUT=$((F0 + 1 + RANDOM * 32768 % (F1 - F0 - 1)))
CUT=${FAULTS_CUT:-$CUT}  # FAULTS_CUT=N reruns a failed run's cut
echo "faults: cut at $CUT (frames start at $F0 $F1 $F2, size $SIZE)"
BOUNDARY=$F0; [ "$CUT" -ge "$F1" ] && BOUNDARY=$F1; [ "$CUT" -ge "$F2" ] && BOUNDARY=$F2
proxy cut --cut-at "$CUT"
rm -rf "$T/cache"
expect 0 "cut at byte $CUT in frame [0-9]+ .*resumed at byte $BOUNDARY, the end of the last verified frame \($((CUT - BOUNDARY)) staged bytes dropped\)" -- \
  timeout 60 "$CCPACK" restore --plain-http "oci://$P/model:v1" "${TGT[@]}"
same_tree "$T/cache" "$T/want-at" "restore through a cut"
grep -Eq "^GET /v2/model/blobs/sha256:[0-9a-f]+ 206 [0-9]+ bytes=$BOUNDARY-$((SIZE - 1))\$" "$T/cut.log" && ok || bad "no Range request from the frame boundary $BOUNDARY: $(cat "$T/cut.log")"
proxy cut2 --cut-at "$CUT"
expect 0 "" -- timeout 60 "$CCPACK" pull --json --plain-http "$P/model:v1" -o "$T/pulled.ccpack"
cmp -s "$T/pulled.ccpack" "$T/a.ccpack" && ok || bad "pull through a cut is not byte-identical"
json_is "$T/out" "[(r['cut_at'], r['resumed_from'], r['dropped']) for r in j['resumes']]==[($CUT, $BOUNDARY, $((CUT - BOUNDARY)))] and j['resumes'][0]['resumed_from'] in ($F0, $F1, $F2)"

# --- a registry that ignores Range: the resumed answer starts at byte 0 and is skipped into --------------------
proxy norange --ignore-range --cut-at "$CUT"
rm -rf "$T/cache"
expect 0 "" -- timeout 60 "$CCPACK" restore --json --plain-http "oci://$P/model:v1" "${TGT[@]}"
json_is "$T/out" "[(r['cut_at'], r['resumed_from'], r['range_ignored']) for r in j['registry']['resumes']]==[($CUT, $BOUNDARY, True)]"
same_tree "$T/cache" "$T/want-at" "restore from a registry that ignores Range"
[ "$(grep -c ' 206 ' "$T/norange.log")" -eq 0 ] && [ "$(grep -c '/blobs/sha256:[0-9a-f]* 200 ' "$T/norange.log")" -ge 2 ] && ok ||
  bad "the Range-ignoring proxy did not answer 200s: $(cat "$T/norange.log")"

# --- a stall in the middle of a blob: the low-speed limit ($CCPACK_LOW_SPEED_TIME) abandons it, the resume completes
proxy stall --stall-at "$((F1 + 1000))":30
rm -rf "$T/cache"
START=$(date +%s)
CCPACK_LOW_SPEED_TIME=1 expect 0 "cut at byte $((F1 + 1000)) in frame 1 \(.*slower than 1024 bytes/s for 1 s \(the low-speed limit\)\); resumed at byte $F1" -- \
  timeout 60 "$CCPACK" restore --plain-http "oci://$P/model:v1" "${TGT[@]}"
[ $(( $(date +%s) - START )) -lt 20 ] && ok || bad "the stall was not abandoned within the low-speed time"
same_tree "$T/cache" "$T/want-at" "restore through a stall"
# ... and a registry that stalls every time: exit 1, bounded, the old cache stays.
proxy stall2 --stall-at "$((F1 + 1000))":30 --stall-always
old_cache
CCPACK_LOW_SPEED_TIME=1 expect 1 "the transfer was cut 5 times in frame 1 .*slower than 1024 bytes/s for 1 s" -- \
  timeout 60 "$CCPACK" restore --plain-http "oci://$P/model:v1" "${TGT[@]}"
old_stays "stall"
CCPACK_LOW_SPEED_TIME=x expect 2 "CCPACK_LOW_SPEED_TIME must be a whole number from 1 to 3600" -- "$CCPACK" pull "$P/model:v1" -o "$T/keep.ccpack"

# --- a truncated body, every time, at the same byte: exit 1, nothing written ---------------------------------
proxy trunc --truncate-at "$((F2 + 5000))"
old_cache
expect 1 "the transfer was cut 5 times in frame 2 \(last at byte $((F2 + 5000))" -- timeout 60 "$CCPACK" restore --plain-http "oci://$P/model:v1" "${TGT[@]}"
old_stays "truncated body"
expect 1 "cut 5 times in frame 2" -- timeout 60 "$CCPACK" pull --plain-http "$P/model:v1" -o "$T/keep.ccpack"
file_stays "truncated body"

# --- a blob whose bytes differ from its digest: exit 4 at the first bad frame --------------------------------
proxy corrupt --corrupt-at "$((F1 + 777))"
old_cache
expect 4 "frame 1 does not match the SHA-256 its manifest gives \(corrupt or tampered blob\)" -- \
  timeout 60 "$CCPACK" restore --plain-http "oci://$P/model:v1" "${TGT[@]}"
old_stays "corrupt blob"
expect 4 "frame 1 does not match" -- timeout 60 "$CCPACK" pull --plain-http "$P/model:v1" -o "$T/keep.ccpack"
file_stays "corrupt blob"

# --- a redirect loop: exit 1 ------------------------------------------------------------------------------
proxy loop --redirect-loop
old_cache
expect 1 "too many redirects" -- timeout 60 "$CCPACK" restore --plain-http "oci://$P/model:v1" "${TGT[@]}"
old_stays "redirect loop"

# --- a Content-Length far above the archive: refused before a body byte is used, exit 4 ----------------------
proxy inflate --inflate-length 100000000000
old_cache
expect 4 "the server announced Content-Range 'bytes 0-[0-9]+/100027[0-9]+' for a resource of $SIZE bytes" -- timeout 60 "$CCPACK" restore --plain-http "oci://$P/model:v1" "${TGT[@]}"
old_stays "inflated Content-Length"
expect 4 "the server announced Content-Range" -- timeout 60 "$CCPACK" pull --plain-http "$P/model:v1" -o "$T/keep.ccpack"
file_stays "inflated Content-Length"

# --- a manifest over the size bound: exit 1, once, nothing written -----------------------------------------
proxy huge --huge-manifests
old_cache
expect 1 "exceeds 4194304 bytes" -- timeout 60 "$CCPACK" restore --plain-http "oci://$P/model:v1" "${TGT[@]}"
old_stays "huge manifest"
[ "$(grep -c manifests "$T/huge.log")" -eq 1 ] && ok || bad "the huge manifest was fetched more than once"

finish
