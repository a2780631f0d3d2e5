#!/usr/bin/env bash
# The fleet loop across pods whose cache folders have other names: a settled base, two pods restoring it into
# differently named folders and compiling the same new kernel (a Triton group file and an FX-graph pickle that
# name each pod's own folders), their deltas merged.
#   - the same kernels are no conflict: the deltas are compared relocated to the base's build folders, and the
#     merged archive restored into a third pod's folders gives each file once, relocated for that pod, byte for
#     byte what the pod would have compiled there itself;
#   - real conflicts are one line on stderr (the count and the first path, escaped), each of them in --json;
#   - inspect, the card and check of the merged archive say the base was settled and the merged additions were not;
#   - `status --max-compiled` past its bound names the delta and merge on a settled archive's pod, `create
#     --settle` on an unsettled one's, and says it does not know on a pod whose marker predates the record.
# Usage: converge_folders_test.sh CCPACK DATA
set -u
SUITE=converge_folders
. "$(dirname "${BASH_SOURCE[0]}")/../helpers/harness.sh"
suite_paths "$@"
isolate
export SOURCE_DATE_EPOCH=1700000000  # signatures' signed_at: merged archives compared byte for byte
trust_ci_key

# compile IND TRI: what a pod compiles for a new shape, naming its own folders as torch and Triton do.
compile() {
  "$PY" - "$1" "$2" <<'EOF'
import json, os, pickle, sys
ind, tri = sys.argv[1], sys.argv[2]
k = os.path.join(tri, "NEWKERNEL")
os.makedirs(k, exist_ok=True)
for name, data in (("triton_new.cubin", b"\x7fELF cubin"), ("triton_new.json", b'{"name": "triton_new"}')):
    open(os.path.join(k, name), "wb").write(data)
group = {"child_paths": {n: os.path.join(k, n) for n in ("triton_new.cubin", "triton_new.json")}}
open(os.path.join(k, "__grp__triton_new.json"), "w").write(json.dumps(group, separators=(",", ":")))
os.makedirs(os.path.join(ind, "zq"), exist_ok=True)
open(os.path.join(ind, "zq", "cnew.py"), "w").write("# kernel\n")
os.makedirs(os.path.join(ind, "fxgraph", "zq", "fnew"), exist_ok=True)
entry = {"filename": os.path.join(ind, "zq", "cnew.py"), "best": os.path.join(ind, "zq", "cnew.best_config"), "n": 3}
open(os.path.join(ind, "fxgraph", "zq", "fnew", "entry"), "wb").write(pickle.dumps(entry, protocol=4))
EOF
}
# pod DIR IND TRI: fresh folders DIR/IND and DIR/TRI restored from the base, then the new shape compiled there.
pod() {
  expect 0 "" -- "$CCPACK" restore -q "$T/base.ccpack" --inductor-dir "$T/$1/$2" --triton-dir "$T/$1/$3"
  compile "$T/$1/$2" "$T/$1/$3"
}

# The base: the sample cache, settled (a warm-up that compiles nothing settles at once), signed.
mkdir -p "$T/build" && cp -a "$SAMPLE/inductor_cache" "$T/build/ind" && cp -a "$SAMPLE/triton_cache" "$T/build/tri"
expect 0 "settled after 1 settle run" -- "$CCPACK" create -o "$T/base.ccpack" "${SIGN[@]}" --inductor-dir "$T/build/ind" \
  --triton-dir "$T/build/tri" --settle=2 -- true
# Every pod runs with the settings the base was built with (as `ccpack run` gives them), its folders its own.
"$CCPACK" env "$T/base.ccpack" | grep -v "_CACHE_DIR=" >"$T/settings.env" && . "$T/settings.env" && ok || bad "ccpack env of the base"
pod a ind tri
pod second-pod inductor-cache triton-cache
expect 0 "" -- "$CCPACK" create -q -o "$T/da.ccpack" --since-restore --inductor-dir "$T/a/ind" --triton-dir "$T/a/tri"
expect 0 "" -- "$CCPACK" create -q -o "$T/db.ccpack" --since-restore --inductor-dir "$T/second-pod/inductor-cache" \
  --triton-dir "$T/second-pod/triton-cache"
cmp -s "$T/a/tri/NEWKERNEL/__grp__triton_new.json" "$T/second-pod/triton-cache/NEWKERNEL/__grp__triton_new.json" &&
  bad "the pods' group files are the same bytes: nothing to relocate" || ok

# --- the same kernels in other folders: no conflict ----------------------------------------------------------------
expect 0 "" -- "$CCPACK" merge --json "$T/base.ccpack" "$T/da.ccpack" "$T/db.ccpack" -o "$T/m.ccpack" "${SIGN[@]}"
[ ! -s "$T/err" ] && ok || bad "merge of the same kernels warned: $(cat "$T/err")"
json_is "$T/out" 'j["conflicts"] == [] and j["added"] == 5 and sorted(len(d["added"]) for d in j["deltas"]) == [0, 5]'
# Each delta's group file (2 child paths) and pickle (2 strs) were moved from its pod's folders to the base's.
json_is "$T/out" '[d["relocated"] for d in j["deltas"]] == [4, 4]'
json_is "$T/out" 'sorted({s["reason"][:20] for d in j["deltas"] for s in d["skipped"]}) == ["the same bytes as de"] and sum(len(d["skipped"]) for d in j["deltas"]) == 5'
# Restored into a third pod's folders: each file once, relocated there, as that pod would have compiled it.
pod third i t
mv "$T/third" "$T/want"
expect 0 "" -- "$CCPACK" restore -q "$T/m.ccpack" --inductor-dir "$T/third/i" --triton-dir "$T/third/t"
diff -r --no-dereference -x '.ccpack-*' "$T/want" "$T/third" >"$T/diff" 2>&1 && ok || bad "merged restore differs: $(head -20 "$T/diff")"
grep -q "\"$T/third/t/NEWKERNEL/triton_new.cubin\"" "$T/third/t/NEWKERNEL/__grp__triton_new.json" && ok || bad "group file not relocated"

# --- what inspect, the card and check say of it -------------------------------------------------------------------
SETTLED="base settled after 1 settle run (fixed point: the last compiled 0 Triton kernels, 0 FX graphs, 0 autotune results); merged 2 deltas (their additions not settle-tested)"
BASE_SHA=$(manifest_sha "$T/base.ccpack" | cut -c1-12)
expect 0 "" -- "$CCPACK" inspect "$T/m.ccpack"
[ "$(grep -E '^(settle|merged) ' "$T/out")" = "settle       $SETTLED
merged       2 deltas into base $BASE_SHA (5 files and symlinks added)" ] && ok || bad "inspect: $(grep -E '^(settle|merged)' "$T/out")"
expect 0 "" -- "$CCPACK" inspect --json "$T/m.ccpack"
json_is "$T/out" 'j["settled"] is False and j["settle"]["settled"] is True and len(j["merge"]["deltas"]) == 2'
expect 0 "" -- "$CCPACK" inspect --card "$T/m.ccpack"
[ "$(grep -E '^- (settled|merged):' "$T/out")" = "- settled: $SETTLED
- merged: 2 deltas into base $BASE_SHA (5 files and symlinks added)" ] && ok || bad "card: $(grep -E '^- (settled|merged)' "$T/out")"
expect 0 "" -- "$CCPACK" check "$T/m.ccpack" --inductor-dir "$T/third/i" --triton-dir "$T/third/t"
[ "$(grep -E '^(settled|merged):' "$T/out")" = "settled: $SETTLED
merged: 2 deltas into base $BASE_SHA (5 files and symlinks added)" ] && ok || bad "check: $(grep -E '^(settled|merged)' "$T/out")"
grep -q "^settle       settled after\|^- settled: settled\|^settled: settled" "$T/out" && bad "the merged archive is said settled" || ok

# --- real conflicts: one line, every one in --json -------------------------------------------------------------------
printf 'a\n' >"$T/a/ind/clash	tab.txt"
printf 'b\n' >"$T/second-pod/inductor-cache/clash	tab.txt"
mkdir -p "$T/a/tri/OTHER" "$T/second-pod/triton-cache/OTHER"
printf 'one\n' >"$T/a/tri/OTHER/k.json"
printf 'two\n' >"$T/second-pod/triton-cache/OTHER/k.json"
expect 0 "" -- "$CCPACK" create -q -o "$T/da2.ccpack" --since-restore --inductor-dir "$T/a/ind" --triton-dir "$T/a/tri"
expect 0 "" -- "$CCPACK" create -q -o "$T/db2.ccpack" --since-restore --inductor-dir "$T/second-pod/inductor-cache" \
  --triton-dir "$T/second-pod/triton-cache"
expect 0 "" -- "$CCPACK" merge --json "$T/base.ccpack" "$T/da2.ccpack" "$T/db2.ccpack" -o "$T/m3.ccpack" "${SIGN[@]}"
D=$("$PY" -c "import json,sys; c=json.load(sys.stdin)['conflicts'][0]; print(c['kept']['delta'][:12] + ' and ' + c['dropped']['delta'][:12])" <"$T/out")
[ "$(grep conflict "$T/err")" = "ccpack: warning: 2 conflicts (the same path with other bytes in two deltas, their pods' folders left out), the first 'inductor/clash\\ttab.txt' in deltas $D; the lower SHA-256 kept each time (\`merge --json\` lists them all)" ] &&
  ok || bad "conflict line: $(cat "$T/err")"
json_is "$T/out" 'sorted(c["path"] for c in j["conflicts"]) == ["inductor/clash\ttab.txt", "triton/OTHER/k.json"] and all({c["kept"]["delta"], c["dropped"]["delta"]} == {d["manifest_sha256"] for d in j["deltas"]} for c in j["conflicts"])'
expect 0 "" -- "$CCPACK" merge "$T/base.ccpack" "$T/db2.ccpack" "$T/da2.ccpack" -o "$T/m4.ccpack" "${SIGN[@]}"
[ "$(grep -c conflict "$T/err")" -eq 1 ] && ok || bad "not one conflict line: $(cat "$T/err")"
cmp -s "$T/m3.ccpack" "$T/m4.ccpack" && ok || bad "merge with conflicts differs with the deltas' order"

# --- status --max-compiled: the remedy that fits the archive ---------------------------------------------------------
GATE="ccpack: error: 1 Triton kernel compiled since the restore, more than --max-compiled 0"
expect_exact 7 "$GATE (the archive was settled, and this pod met work its warm-up did not: bring it into the next archive with \`ccpack create --since-restore\` on this pod and \`ccpack merge\` of its delta in the pipeline)" -- \
  "$CCPACK" status --max-compiled 0 --inductor-dir "$T/want/i" --triton-dir "$T/want/t"
expect 0 "" -- "$CCPACK" create -q -o "$T/plain.ccpack" "${SIGN[@]}" --inductor-dir "$T/build/ind" --triton-dir "$T/build/tri"
expect 0 "" -- "$CCPACK" restore -q "$T/plain.ccpack" --inductor-dir "$T/u/i" --triton-dir "$T/u/t"
compile "$T/u/i" "$T/u/t"
expect_exact 7 "$GATE (the archive was not settled for this workload: see \`create --settle\`)" -- \
  "$CCPACK" status --max-compiled 0 --inductor-dir "$T/u/i" --triton-dir "$T/u/t"
# A marker written before it recorded the settle record: status does not guess.
for m in "$T/want/i/.ccpack-marker.json" "$T/want/t/.ccpack-marker.json"; do
  "$PY" -c "import json,sys; j=json.load(open(sys.argv[1])); del j['settle']; open(sys.argv[1], 'w').write(json.dumps(j))" "$m"
done
expect_exact 7 "$GATE (the restore markers do not say whether the archive was settled (restored by an older ccpack): if it was, \`ccpack create --since-restore\` on this pod and \`ccpack merge\` of its delta in the pipeline; if not, see \`create --settle\`)" -- \
  "$CCPACK" status --max-compiled 0 --inductor-dir "$T/want/i" --triton-dir "$T/want/t"

finish
