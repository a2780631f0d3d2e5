#!/usr/bin/env bash
# Fleets that converge, without a GPU: `create --since-restore` packs what a pod's restored folders gained, and
# `merge` folds such deltas into the base's next archive.
#   - a delta holds exactly the added files (not the base's, not a base file changed in place), names its base
#     and carries the pod's fingerprint; a folder ccpack did not restore exits 5; restore refuses a delta (exit 2);
#   - merge is byte-identical for any order of its deltas; the merged archive restores to exactly base + deltas;
#     `inspect --json` and the card say which deltas it holds; it keeps the base's settle record;
#   - a conflicting file (two deltas, other bytes) is reported exactly, the lower SHA-256 kept in either order;
#   - hostile deltas (every crafted escape and payload mismatch of the hostile suite) are refused with exit 4 and
#     nothing written; a delta of another base and one of another fingerprint exit 3 naming the field;
#   - a 100k-file delta merges with a peak RSS under a generous bound (measured, not timed).
# Usage: converge_test.sh CCPACK CCPACK_CRAFT DATA
set -u
SUITE=converge
. "$(dirname "${BASH_SOURCE[0]}")/../helpers/harness.sh"
suite_paths "$1" "$3"
CRAFT=$2
isolate
export SOURCE_DATE_EPOCH=1700000000  # signatures' signed_at: merged archives compared byte for byte
trust_ci_key

# The base: the sample cache, signed; two pods restore it into their own folders.
"$CCPACK" create -q -o "$T/base.ccpack" "${SIGN[@]}" "${DIRS[@]}"
BASE_SHA=$(manifest_sha "$T/base.ccpack")
pod() {  # pod NAME: fresh folders restored from the base
  expect 0 "" -- "$CCPACK" restore -q "$T/base.ccpack" --inductor-dir "$T/$1/ind" --triton-dir "$T/$1/tri"
}
pod a
pod b
touch "$T/restored"  # what the pods write from here on is newer
# What each pod compiles: new kernel folders and FX graphs, a file both compile alike, one they compile differently,
# and a file of the base changed in place (not in a delta).
mkdir -p "$T/a/tri/NEWKERNELA" "$T/a/ind/fxgraph/zz/keya" "$T/b/tri/NEWKERNELB" "$T/b/ind/fxgraph/zz/keyb"
echo "kernel a" >"$T/a/tri/NEWKERNELA/k.json"
echo "graph a" >"$T/a/ind/fxgraph/zz/keya/entry"
echo "kernel b" >"$T/b/tri/NEWKERNELB/k.json"
echo "graph b" >"$T/b/ind/fxgraph/zz/keyb/entry"
for p in a b; do echo "same bytes" >"$T/$p/ind/shared.txt"; echo "made by pod $p" >"$T/$p/ind/clash.txt"; done
ln -s NEWKERNELA/k.json "$T/a/tri/alias"
CHANGED=$(cd "$T/a/ind" && find . -type f ! -name '.ccpack-*' | sort | head -1)
echo "changed in place" >>"$T/a/ind/$CHANGED"

# --- deltas: exactly what was added ------------------------------------------------------------------------------
if section deltas; then
expect 0 "delta of archive ${BASE_SHA:0:12}" -- "$CCPACK" create -o "$T/da.ccpack" --since-restore --inductor-dir "$T/a/ind" --triton-dir "$T/a/tri"
expect 0 "" -- "$CCPACK" create --json -o "$T/db.ccpack" --since-restore "${SIGN[@]}" --inductor-dir "$T/b/ind" --triton-dir "$T/b/tri"
json_is "$T/out" 'j["delta"]["base_manifest_sha256"] == "'"$BASE_SHA"'" and j["delta"]["base_entries_left_out"] > 0 and "changed in place" in j["delta"]["note"]'
expect 0 "" -- "$CCPACK" inspect --json --files "$T/da.ccpack"
json_is "$T/out" 'sorted(f["path"] for f in j["manifest"]["entries"] if f["type"] != "dir") == ["inductor/clash.txt", "inductor/fxgraph/zz/keya/entry", "inductor/shared.txt", "triton/NEWKERNELA/k.json", "triton/alias"]'
json_is "$T/out" 'j["manifest"]["delta"] == {"base_manifest_sha256": "'"$BASE_SHA"'"}'
# A delta is not a whole cache: restore refuses it.
expect 2 "is a delta \(only what a pod compiled since restoring archive ${BASE_SHA:0:12}\), not a whole cache" -- \
  "$CCPACK" restore "$T/db.ccpack" --inductor-dir "$T/nowhere/ind"
absent "restore of a delta wrote $T/nowhere" "$T/nowhere"
# A folder ccpack did not restore: exit 5, nothing written.
mkdir -p "$T/plain/ind"
expect 5 "inductor cache folder '$T/plain/ind' holds no restore marker ccpack can read" -- \
  "$CCPACK" create -o "$T/dplain.ccpack" --since-restore --inductor-dir "$T/plain/ind"
absent "refused delta was written" "$T/dplain.ccpack"
expect 2 "" -- "$CCPACK" create -o "$T/x.ccpack" --since-restore --settle -- true
fi

# --- merge: same bytes in any order, restores to base + deltas ---------------------------------------------------
if section merge; then
expect 0 "^ccpack: warning: 1 conflict \(the same path with other bytes in two deltas, their pods' folders left out\), the first 'inductor/clash.txt' in deltas [0-9a-f]{12} and [0-9a-f]{12}; " -- \
  "$CCPACK" merge "$T/base.ccpack" "$T/da.ccpack" "$T/db.ccpack" -o "$T/m1.ccpack" "${SIGN[@]}"
expect 0 "" -- "$CCPACK" merge --json "$T/base.ccpack" "$T/db.ccpack" "$T/da.ccpack" -o "$T/m2.ccpack" "${SIGN[@]}"
cmp -s "$T/m1.ccpack" "$T/m2.ccpack" && ok || bad "merge differs with the deltas' order"
LOW=$(printf 'made by pod a\n' | sha256sum | cut -c1-64)
HIGH=$(printf 'made by pod b\n' | sha256sum | cut -c1-64)
if [[ "$HIGH" < "$LOW" ]]; then W=b; KEEP=$HIGH; DROP=$LOW; else W=a; KEEP=$LOW; DROP=$HIGH; fi
json_is "$T/out" 'len(j["conflicts"]) == 1 and j["conflicts"][0]["path"] == "inductor/clash.txt" and j["conflicts"][0]["kept"]["sha256"] == "'"$KEEP"'" and j["conflicts"][0]["dropped"]["sha256"] == "'"$DROP"'"'
json_is "$T/out" 'j["base_manifest_sha256"] == "'"$BASE_SHA"'" and [d["manifest_sha256"] for d in j["deltas"]] == sorted(d["manifest_sha256"] for d in j["deltas"]) and j["added"] == 7'
json_is "$T/out" 'sorted(s["reason"] for d in j["deltas"] for s in d["skipped"] if s["path"] == "inductor/shared.txt") == ["the same bytes as delta " + min(d["manifest_sha256"] for d in j["deltas"])[:12]]'
expect 0 "" -- "$CCPACK" inspect --json "$T/m1.ccpack"
json_is "$T/out" 'j["manifest"]["merge"]["base_manifest_sha256"] == "'"$BASE_SHA"'" and len(j["manifest"]["merge"]["deltas"]) == 2 and sum(d["added"] for d in j["manifest"]["merge"]["deltas"]) == 7 and "delta" not in j["manifest"]'
expect 0 "" -- "$CCPACK" inspect --card "$T/m1.ccpack"
grep -q "^- merged: 2 deltas into base ${BASE_SHA:0:12} (7 files and symlinks added)" "$T/out" && ok || bad "card: $(grep -i merge "$T/out")"
expect 0 "" -- "$CCPACK" verify -q "$T/m1.ccpack"
# Restored, the merged archive is the base's files plus what the deltas added, byte for byte.
expect 0 "" -- "$CCPACK" restore -q --no-relocate "$T/m1.ccpack" --inductor-dir "$T/merged/ind" --triton-dir "$T/merged/tri"
mkdir -p "$T/want" && cp -a "$SAMPLE/inductor_cache" "$T/want/ind" && cp -a "$SAMPLE/triton_cache" "$T/want/tri"
for p in a b; do
  (cd "$T/$p" && find ind tri -newer "$T/restored" ! -name '.ccpack-*' \( -type f -o -type l \) -print0 | tar --null -T - -cf -) | tar -xf - -C "$T/want"
done
cp -a "$SAMPLE/inductor_cache/${CHANGED#./}" "$T/want/ind/${CHANGED#./}"  # the base's bytes, not the pod's change
printf 'made by pod %s\n' "$W" >"$T/want/ind/clash.txt"
diff -r --no-dereference -x '.ccpack-*' "$T/want" "$T/merged" >"$T/diff" 2>&1 && ok || bad "merged restore differs: $(head -20 "$T/diff")"
fi

# --- the base's gate and the deltas' ---------------------------------------------------------------------------
if section gates; then
make_key "$T/other.key"
expect 4 "" -- env CCPACK_TRUSTED_KEYS="$T/other.key.pub" "$CCPACK" merge "$T/base.ccpack" "$T/da.ccpack" -o "$T/x.ccpack" "${SIGN[@]}"
expect 2 "is a delta, not a whole cache" -- "$CCPACK" merge "$T/db.ccpack" "$T/da.ccpack" -o "$T/x.ccpack" "${SIGN[@]}"
expect 2 "has no 'delta' field" -- "$CCPACK" merge "$T/base.ccpack" "$T/base.ccpack" -o "$T/x.ccpack" "${SIGN[@]}"
# A delta of another base: exit 3, the field named.
"$CCPACK" create -q -o "$T/other.ccpack" "${SIGN[@]}" --inductor-dir "$SAMPLE/inductor_cache"
expect 0 "" -- "$CCPACK" restore -q "$T/other.ccpack" --inductor-dir "$T/c/ind"
echo new >"$T/c/ind/new.txt"
"$CCPACK" create -q -o "$T/dc.ccpack" --since-restore --inductor-dir "$T/c/ind"
expect 3 "refusing delta '$T/dc.ccpack': delta.base_manifest_sha256 is [0-9a-f]{12}\.\.\., the base's manifest is ${BASE_SHA:0:12}\.\.\. \(a delta of another archive\)" -- \
  "$CCPACK" merge "$T/base.ccpack" "$T/da.ccpack" "$T/dc.ccpack" -o "$T/x.ccpack" "${SIGN[@]}"
# A delta of another environment: exit 3, the fingerprint field named.
printf '{"schema":1,"fields":{"gpu.vendor":{"value":"amd","source":"test"},"gpu.arch":{"value":"gfx942","source":"test"},"torch.version":{"value":"2.11.0+rocm6.4","source":"test"},"cpu.arch":{"value":"x86_64","source":"test"}}}\n' >"$T/mi300.json"
"$PY" "$HERE/registry_helpers.py" set-fingerprint "$T/db.ccpack" "$T/dmi.ccpack" "$T/mi300.json"
expect 3 "refusing delta '$T/dmi.ccpack': fingerprint\.[a-z.]+ differs from the base's" -- \
  "$CCPACK" merge "$T/base.ccpack" "$T/dmi.ccpack" -o "$T/x.ccpack" "${SIGN[@]}"
# Hostile deltas: each crafted archive made a delta of this base for its fingerprint, refused with exit 4.
"$PY" -c "import json,sys; print(json.dumps(json.load(sys.stdin)['manifest']['fingerprint']))" < <("$CCPACK" inspect --json "$T/base.ccpack") >"$T/base-fp.json"
"$CRAFT" valid "$T/hvalid.ccpack" "$BASE_SHA" "$T/base-fp.json"
expect 0 "" -- "$CCPACK" merge "$T/base.ccpack" "$T/hvalid.ccpack" -o "$T/hvalid-m.ccpack" "${SIGN[@]}"
for s in link-chain link-chain-deep link-loop link-nul dup-entries dup-key-entry reserved-marker reserved-staging newline-path \
  payload-max frame-overflow file-sha frame-sha tar-name tar-size tar-type; do
  "$CRAFT" "$s" "$T/h-$s.ccpack" "$BASE_SHA" "$T/base-fp.json" || { bad "ccpack_craft $s failed"; continue; }
  expect 4 "" -- "$CCPACK" merge "$T/base.ccpack" "$T/da.ccpack" "$T/h-$s.ccpack" -o "$T/x.ccpack" "${SIGN[@]}"
done
absent "a refused merge wrote its output" "$T/x.ccpack"
[ -z "$(find "$T" -maxdepth 1 -name '.ccpack-merge-*')" ] && ok || bad "a refused merge left its scratch folder"
fi

# --- links across deltas: each delta passes alone; merged, a link through another delta's link is refused -------
# Exit 4 naming the delta after which it fails and the link, before anything is extracted.
if section links; then
for p in la lb lc; do pod "$p"; mkdir -p "$T/$p/tri/d1/d2"; done
ln -s ../.. "$T/la/tri/d1/d2/y"
ln -s y/../../.. "$T/lb/tri/d1/d2/x"
ln -s x "$T/lc/tri/d1/d2/y"
for p in la lb lc; do expect 0 "" -- "$CCPACK" create -q -o "$T/d$p.ccpack" --since-restore --inductor-dir "$T/$p/ind" --triton-dir "$T/$p/tri"; done
for p in la lb lc; do expect 0 "" -- "$CCPACK" merge -q "$T/base.ccpack" "$T/d$p.ccpack" -o "$T/m$p.ccpack" "${SIGN[@]}"; done
expect 4 "ccpack: error: refusing delta '$T/dl[ab].ccpack': merged, (its own|delta '$T/dl[ab].ccpack''s) symlink 'triton/d1/d2/x' leaves its component through the other links of the base and the deltas$" -- \
  "$CCPACK" merge "$T/base.ccpack" "$T/dla.ccpack" "$T/dlb.ccpack" -o "$T/x.ccpack" "${SIGN[@]}"
expect 4 "ccpack: error: refusing delta '$T/dl[bc].ccpack': merged, .* symlink 'triton/d1/d2/[xy]' loops through the other links of the base and the deltas$" -- \
  "$CCPACK" merge "$T/base.ccpack" "$T/dlb.ccpack" "$T/dlc.ccpack" -o "$T/x.ccpack" "${SIGN[@]}"
[ ! -e "$T/x.ccpack" ] && [ -z "$(find "$T" -maxdepth 1 -name '.ccpack-merge-*')" ] && ok || bad "a merge refused for its links left files"
fi

# --- interrupted: SIGINT, SIGTERM and SIGHUP remove the scratch folder, whatever it holds -------------------------
# A FIFO given as a delta holds merge in open() with its scratch folder made; the test fills that folder (a tree, a
# link out of it that must not be followed), then sends the signal. A watchdog child kills a merge that hangs.
if section interrupted; then
mkfifo "$T/stall.ccpack"
mkdir -p "$T/keep" && echo kept >"$T/keep/file"
for sig in INT:130 TERM:143 HUP:129; do
  name=${sig%%:*} code=${sig#*:}
  mkdir -p "$T/int-$name"
  "$CCPACK" merge "$T/base.ccpack" "$T/stall.ccpack" -o "$T/int-$name/x.ccpack" "${SIGN[@]}" 2>"$T/int.err" &
  pid=$!
  # Its sleep ends with it: a sleep left running would hold CTest's output pipe, and CTest waits for that to close.
  (trap 'kill "$nap" 2>/dev/null; exit 0' TERM; sleep 120 & nap=$!; wait "$nap"; kill -9 "$pid" 2>/dev/null) &
  guard=$!
  scratch=""
  for _ in $(seq 600); do
    scratch=$(find "$T/int-$name" -maxdepth 1 -name '.ccpack-merge-*')
    [ -n "$scratch" ] && break
    sleep 0.05
  done
  mkdir -p "$scratch/tree/inductor/a/b" && echo x >"$scratch/tree/inductor/a/b/f" && ln -s "$T/keep" "$scratch/tree/out"
  kill -s "$name" "$pid"
  wait "$pid"
  rc=$?
  kill "$guard" 2>/dev/null
  wait "$guard" 2>/dev/null
  [ "$rc" -eq "$code" ] && ok || bad "merge on SIG$name exited $rc, expected $code: $(cat "$T/int.err")"
  grep -qx "ccpack: error: interrupted, nothing changed (SIG$name)" "$T/int.err" && ok || bad "merge on SIG$name said: $(cat "$T/int.err")"
  [ -n "$scratch" ] && [ -z "$(ls -A "$T/int-$name")" ] && ok || bad "merge on SIG$name left: $(ls -A "$T/int-$name")"
done
[ "$(cat "$T/keep/file")" = kept ] && ok || bad "the scratch folder's removal followed a link out of it"
fi

# --- through a registry: deltas pushed next to the base, merged from there -----------------------------------------
if section registry; then
if command -v docker-registry >/dev/null; then
  start_plain_registry
  R="127.0.0.1:$PORT"
  expect 0 "" -- "$CCPACK" push -q --plain-http "$T/base.ccpack" "oci://$R/model:v1"
  expect 2 "is not a delta" -- "$CCPACK" push --plain-http "$T/base.ccpack" "oci://$R/model:v1" --delta
  expect 0 "" -- "$CCPACK" push --json --plain-http "$T/da.ccpack" "oci://$R/model:v1" --delta
  json_is "$T/out" 'j["reference"].endswith("/model:v1.delta-" + j["reference"][-12:]) and j["delta"] is True'
  expect 0 "" -- "$CCPACK" push -q --plain-http "$T/db.ccpack" "oci://$R/model:v1" --delta
  expect 0 "" -- "$CCPACK" push -q --plain-http "$T/dc.ccpack" "oci://$R/model:other" --delta  # another tag's: not taken
  expect 0 "" -- "$CCPACK" merge --json --plain-http "oci://$R/model:v1" --deltas-from-registry -o "$T/mreg.ccpack" "${SIGN[@]}"
  json_is "$T/out" 'len(j["delta_tags"]) == 2 and all(t.startswith("v1.delta-") for t in j["delta_tags"]) and len(j["conflicts"]) == 1'
  cmp -s "$T/m1.ccpack" "$T/mreg.ccpack" && ok || bad "the merge from the registry differs from the merge of the files"
  [ -z "$(find "$T" -maxdepth 1 -name '.ccpack-merge-*')" ] && ok || bad "merge from the registry left its scratch folder"
  expect 2 "takes --deltas-from-registry" -- "$CCPACK" merge --plain-http "oci://$R/model:v1" -o "$T/x.ccpack" "${SIGN[@]}"
else
  skip "registry merge" "docker-registry is not installed"
fi
fi

# --- 100k files: memory bounded as create's ----------------------------------------------------------------------
if section big; then
pod big
"$PY" -c "
import os, sys
root = sys.argv[1]
for d in range(100):
    os.makedirs(f'{root}/k{d:03d}', exist_ok=True)
    for f in range(1000):
        with open(f'{root}/k{d:03d}/f{f:04d}.py', 'w') as out: out.write(f'# {d} {f}\n')
" "$T/big/ind/added"
/usr/bin/time -f '%M' -o "$T/rss-create" "$CCPACK" create -q -o "$T/dbig.ccpack" --since-restore --inductor-dir "$T/big/ind" --triton-dir "$T/big/tri" && ok || bad "100k delta create failed"
/usr/bin/time -f '%M' -o "$T/rss-merge" "$CCPACK" merge -q "$T/base.ccpack" "$T/dbig.ccpack" -o "$T/mbig.ccpack" "${SIGN[@]}" && ok || bad "100k merge failed"
CREATE_KB=$(tail -1 "$T/rss-create")
MERGE_KB=$(tail -1 "$T/rss-merge")
echo "peak RSS: create --since-restore ${CREATE_KB} KiB, merge ${MERGE_KB} KiB (100k files)"
# The bounds hold for the real binary; under AddressSanitizer (ASAN_OPTIONS set by scripts/ci/test-sanitizers)
# shadow memory and quarantine multiply every allocation, so they are not checked there.
if [ -z "${ASAN_OPTIONS:-}" ]; then
  [ "$MERGE_KB" -lt 524288 ] && ok || bad "100k merge peaked at $MERGE_KB KiB, over 512 MiB"
  [ "$MERGE_KB" -lt $((CREATE_KB * 3 + 65536)) ] && ok || bad "100k merge peaked at $MERGE_KB KiB, over 3x create's $CREATE_KB KiB + 64 MiB"
fi
expect 0 "" -- "$CCPACK" inspect --json "$T/mbig.ccpack"
json_is "$T/out" 'j["manifest"]["merge"]["deltas"][0]["added"] == 100000'
fi

finish
