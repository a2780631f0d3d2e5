#!/usr/bin/env bash
# CLI suite for `ccpack import`: every foreign format gives the tar stream `create` gives for the same folders
# (cmp of the decompressed payloads), folders are mapped by name or --map, and hostile archives are refused with
# exit 4 naming the entry, escaped, leaving no output.
# With ccpack-oracle (tests/oracle), every archive made here is also read by libarchive and checked against its
# manifest.
# Usage: import_test.sh PATH/TO/ccpack PATH/TO/tests/data [PATH/TO/ccpack-oracle]
set -u
# Most archives imported here are unsigned: the signing section below unsets this for its own checks.
export CCPACK_ALLOW_UNSIGNED=1
SUITE=import  # the shared harness: $T, ok, bad, expect
. "$(dirname "${BASH_SOURCE[0]}")/../helpers/harness.sh"
suite_paths "$1" "$2"
ORACLE=${3:-}

# same_stream A B: the decompressed payloads (tar streams) are byte-identical, and so are the entry lists. Each
# archive must read (zstd and inspect succeed, a stream and entries come out): two missing archives are not equal.
same_stream() {
  local f
  for f in "$1" "$2"; do
    if ! zstd -q -dc "$f" >"$f.tar" 2>"$T/zstd.err" || [ ! -s "$f.tar" ]; then bad "no tar stream in $f: $(cat "$T/zstd.err")"; return; fi
    if ! "$CCPACK" inspect --files "$f" >"$f.inspect" || ! grep -q '^entries' "$f.inspect"; then bad "inspect --files $f lists no entries"; return; fi
  done
  if cmp -s "$1.tar" "$2.tar" && diff <(sed -n '/^entries/,$p' "$1.inspect") <(sed -n '/^entries/,$p' "$2.inspect") >/dev/null; then
    ok
  else
    bad "tar streams or entries differ: $1 vs $2"
  fi
}

# hostile NAME PYTHON-STATEMENTS: a tar made with Python's tarfile (t is the open TarFile; add(name, type, ...)).
hostile() {
  python3 - "$T/$1.tar" <<PY
import io, sys, tarfile
t = tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT)
def add(name, kind=tarfile.REGTYPE, data=b"x", mode=0o644, link=""):
    i = tarfile.TarInfo(name); i.type = kind; i.mode = mode; i.linkname = link
    i.size = len(data) if kind == tarfile.REGTYPE else 0
    t.addfile(i, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
add("inductor_cache", tarfile.DIRTYPE, mode=0o755)
add("inductor_cache/ok.py")
$2
t.close()
PY
}

isolate

# --- usage -------------------------------------------------------------------------------------------
expect 2 "" -- "$CCPACK" import
expect 2 "" -- "$CCPACK" import "$T/x.tar"
expect 1 "cannot read '$T/missing.tar'" -- "$CCPACK" import "$T/missing.tar" -o "$T/x.ccpack"
tar -C "$SAMPLE" -cf "$T/s.tar" inductor_cache triton_cache
expect 2 "--map expects PATH=COMPONENT" -- "$CCPACK" import "$T/s.tar" -o "$T/x.ccpack" --map inductor_cache
expect 2 "not a valid component name" -- "$CCPACK" import "$T/s.tar" -o "$T/x.ccpack" --map inductor_cache=no/slash

# --- every format gives create's tar stream ---------------------------------------------------------------
expect 0 "" -- "$CCPACK" create -q -o "$T/create.ccpack" "${DIRS[@]}"
gzip -kf "$T/s.tar"
xz -kf -T1 "$T/s.tar"
zstd -qf "$T/s.tar" -o "$T/s.tar.zst"
# A stream (unknown size) keeps zstd's 1 GiB window: libarchive 3.6.2 refuses it, ccpack's own decoder takes it.
zstd -q --long=30 -c <"$T/s.tar" >"$T/s.long30.tar.zst"
(cd "$SAMPLE" && zip -qr "$T/s.zip" inductor_cache triton_cache)
(cd "$SAMPLE" && zip -qrD "$T/s-nodirs.zip" inductor_cache triton_cache)  # no folder entries: they are added
for f in s.tar s.tar.gz s.tar.xz s.tar.zst s.long30.tar.zst s.zip s-nodirs.zip; do
  expect 0 "imported 107 files" -- "$CCPACK" import "$T/$f" -o "$T/$f.ccpack"
  same_stream "$T/create.ccpack" "$T/$f.ccpack"
  expect 0 "" -- "$CCPACK" verify "$T/$f.ccpack"
done
"$CCPACK" import --json "$T/s.long30.tar.zst" -o "$T/long.ccpack" | grep -q "ccpack's decoder" && ok || bad "--long=30 did not go through ccpack's decoder"
"$CCPACK" import --json "$T/s.tar.zst" -o "$T/short.ccpack" | grep -q '"foreign_format": "GNU tar format, zstd"' && ok || bad "plain zstd did not go through libarchive's filter"

# --- mapping -------------------------------------------------------------------------------------------
mkdir -p "$T/w/workspace"
cp -a "$SAMPLE/inductor_cache" "$SAMPLE/triton_cache" "$T/w/workspace/"
tar -C "$T/w" -cf "$T/wrapped.tar" workspace  # as `tar -C / -c workspace/...` stores /workspace/inductor_cache
expect 0 "inductor <- workspace/inductor_cache, triton <- workspace/triton_cache" -- "$CCPACK" import "$T/wrapped.tar" -o "$T/wrapped.ccpack"
same_stream "$T/create.ccpack" "$T/wrapped.ccpack"
mkdir -p "$T/m"
cp -a "$SAMPLE/inductor_cache" "$T/m/ind"
cp -a "$SAMPLE/triton_cache" "$T/m/tri"
tar -C "$T/m" -cf "$T/other-names.tar" ind tri
expect 2 "foreign (entry|folder) 'ind.*--map PATH=COMPONENT" -- "$CCPACK" import "$T/other-names.tar" -o "$T/x.ccpack"
expect 0 "" -- "$CCPACK" import "$T/other-names.tar" -o "$T/mapped.ccpack" --map ind=inductor --map tri=triton
same_stream "$T/create.ccpack" "$T/mapped.ccpack"
expect 2 "are both inductor" -- "$CCPACK" import "$T/other-names.tar" -o "$T/x.ccpack" --map ind=inductor --map tri=inductor
mkdir -p "$T/m/extra"; echo hi >"$T/m/extra/a.txt"
tar -C "$T/m" -cf "$T/extra.tar" ind extra
expect 0 "" -- "$CCPACK" import "$T/extra.tar" -o "$T/extra.ccpack" --map ind=inductor --map extra=ext
expect 0 "" -- "$CCPACK" create -q -o "$T/extra-create.ccpack" --inductor-dir "$T/m/ind" --add "ext=$T/m/extra"
same_stream "$T/extra-create.ccpack" "$T/extra.ccpack"

# --- what create skips, import skips; hard links become copies -----------------------------------------------
cp -a "$SAMPLE/inductor_cache" "$SAMPLE/triton_cache" "$T/m/"
mkdir -p "$T/m/inductor_cache/locks" "$T/m/triton_cache/tmp.pid_7_1"
echo x >"$T/m/inductor_cache/locks/k.lock"; echo y >"$T/m/triton_cache/tmp.pid_7_1/a"; echo z >"$T/m/inductor_cache/x.lock"
ln "$T/m/inductor_cache/23/"*.py "$T/m/inductor_cache/hard-copy"
tar -C "$T/m" -cf "$T/transient.tar" inductor_cache triton_cache
tar -tvf "$T/transient.tar" | grep -q '^h' && ok || bad "the test tar has no hard link"
expect 0 "skipped 3 transient entries" -- "$CCPACK" import "$T/transient.tar" -o "$T/transient.ccpack"
expect 0 "" -- "$CCPACK" create -q -o "$T/transient-create.ccpack" --inductor-dir "$T/m/inductor_cache" --triton-dir "$T/m/triton_cache"
same_stream "$T/transient-create.ccpack" "$T/transient.ccpack"

# --- fingerprint ----------------------------------------------------------------------------------------
"$CCPACK" inspect --json "$T/s.tar.ccpack" | python3 -c '
import json, sys
fp = json.load(sys.stdin)["manifest"]["fingerprint"]
assert fp["triton_targets"] == [{"backend": "cuda", "arch": "90", "warp_size": 32, "triton_version": "3.6.0", "kernels": 11}], fp
assert fp["fields"]["gpu.arch"] == {"value": "sm_90", "source": "derived:triton-json (ccpack import)"}, fp
assert "torch.version" not in fp["fields"], fp' && ok || bad "derived fingerprint"
"$CCPACK" fingerprint --json >"$T/fp.json"
expect 0 "" -- "$CCPACK" import -q "$T/s.tar" -o "$T/fp.ccpack" --fingerprint "$T/fp.json"
"$CCPACK" inspect --json "$T/fp.ccpack" | python3 -c '
import json, sys
fp = json.load(sys.stdin)["manifest"]["fingerprint"]
assert fp["fields"]["cpu.arch"]["source"] == "uname", fp' && ok || bad "--fingerprint not recorded"
echo '{"gpu": {"arch": "sm_90"}}' >"$T/foreign-fp.json"
expect 1 "fingerprint file '$T/foreign-fp.json': fingerprint field" -- "$CCPACK" import "$T/s.tar" -o "$T/x.ccpack" --fingerprint "$T/foreign-fp.json"
echo '[1, 2]' >"$T/bad-fp.json"
expect 1 "fingerprint file '$T/bad-fp.json' is not a JSON object" -- "$CCPACK" import "$T/s.tar" -o "$T/x.ccpack" --fingerprint "$T/bad-fp.json"

# --- signing: --sign-key or $CCPACK_SIGNING_KEY, through create's code path ---------------------------------
expect 0 "" -- "$CCPACK" keygen --out "$T/imp.key"
KEY_ID=$(cat "$T/out")
[[ "$KEY_ID" =~ ^[0-9a-f]{16}$ ]] && ok || bad "keygen printed '$KEY_ID', not a key id"
make_key "$T/other.key"
expect 0 "signed with key $KEY_ID" -- "$CCPACK" import "$T/s.tar" -o "$T/signed.ccpack" --sign-key "$T/imp.key" --note "import 7" \
  --fingerprint "$T/fp.json"  # this machine's, so that the restore below is not refused for the fingerprint
unsigned_env=(env -u CCPACK_ALLOW_UNSIGNED)
expect 0 "OK, 1 frames and [0-9]+ files .*signed by trusted key $KEY_ID" -- "${unsigned_env[@]}" "$CCPACK" verify "$T/signed.ccpack" --trust "$T/imp.key.pub"
expect 0 "triton: restored" -- "${unsigned_env[@]}" "$CCPACK" restore "$T/signed.ccpack" --trust "$T/imp.key.pub" \
  --inductor-dir "$T/rs/ind" --triton-dir "$T/rs/tri"
diff -r --exclude=.ccpack-marker.json --exclude=.ccpack-entries --exclude='__grp__*.json' "$SAMPLE/triton_cache" "$T/rs/tri" >/dev/null && ok || bad "restored signed import differs"
expect 4 "has no signature that verifies with a trusted key \\(.*untrusted key" -- "${unsigned_env[@]}" "$CCPACK" verify "$T/signed.ccpack" --trust "$T/other.key.pub"
# The same key from the environment: the same signer; --json names it.
expect 0 "" -- env CCPACK_SIGNING_KEY="$(cat "$T/imp.key")" "$CCPACK" import --json "$T/s.tar" -o "$T/signed-env.ccpack"
json_is "$T/out" "j['signed_by']=='$KEY_ID'"
expect 0 "signed by trusted key $KEY_ID" -- "${unsigned_env[@]}" "$CCPACK" verify "$T/signed-env.ccpack" --trust "$T/imp.key.pub"
# Without a key: unsigned, and restore refuses it unless the opt-out is given (exit 4, as the table says).
expect 0 ", unsigned$" -- "$CCPACK" import "$T/s.tar" -o "$T/unsigned.ccpack" --fingerprint "$T/fp.json"
expect 4 "is unsigned and unsigned archives are refused" -- "${unsigned_env[@]}" "$CCPACK" restore "$T/unsigned.ccpack" \
  --trust "$T/imp.key.pub" --inductor-dir "$T/ru/ind" --triton-dir "$T/ru/tri"
absent "a refused restore wrote $T/ru/tri" "$T/ru/tri"
expect 0 "warning: --allow-unsigned: accepting" -- "${unsigned_env[@]}" "$CCPACK" restore -q "$T/unsigned.ccpack" --allow-unsigned \
  --inductor-dir "$T/ru/ind" --triton-dir "$T/ru/tri"
expect 2 "--note needs a signing key" -- "$CCPACK" import "$T/s.tar" -o "$T/x.ccpack" --note "no key"

# --- hostile archives: exit 4, the entry named and escaped, nothing written ---------------------------------
hostile dotdot 'add("inductor_cache/../../evil")'
expect 4 "refusing foreign entry 'inductor_cache/../../evil': unsafe path" -- "$CCPACK" import "$T/dotdot.tar" -o "$T/h.ccpack"
hostile absolute 'add("/etc/inductor_cache/x")'
expect 4 "refusing foreign entry '/etc/inductor_cache/x': absolute path" -- "$CCPACK" import "$T/absolute.tar" -o "$T/h.ccpack"
hostile link-out 'add("inductor_cache/l", tarfile.SYMTYPE, link="../../etc/passwd")'
expect 4 "'inductor_cache/l': symlink to '../../etc/passwd' leads outside" -- "$CCPACK" import "$T/link-out.tar" -o "$T/h.ccpack"
hostile link-abs 'add("inductor_cache/l", tarfile.SYMTYPE, link="/etc/passwd")'
expect 4 "'inductor_cache/l': symlink to '/etc/passwd' leads outside" -- "$CCPACK" import "$T/link-abs.tar" -o "$T/h.ccpack"
hostile through-link 'add("inductor_cache/sub", tarfile.DIRTYPE, mode=0o755); add("inductor_cache/l", tarfile.SYMTYPE, link="sub"); add("inductor_cache/l/x")'
expect 4 "'inductor/l/x': it is inside 'inductor/l', which is not a folder" -- "$CCPACK" import "$T/through-link.tar" -o "$T/h.ccpack"
hostile chardev 'add("inductor_cache/null", tarfile.CHRTYPE)'
expect 4 "'inductor_cache/null': a character device" -- "$CCPACK" import "$T/chardev.tar" -o "$T/h.ccpack"
hostile fifo 'add("inductor_cache/p", tarfile.FIFOTYPE)'
expect 4 "'inductor_cache/p': a FIFO" -- "$CCPACK" import "$T/fifo.tar" -o "$T/h.ccpack"
hostile setuid 'add("inductor_cache/run", mode=0o4755)'
expect 4 "'inductor_cache/run': setuid" -- "$CCPACK" import "$T/setuid.tar" -o "$T/h.ccpack"
hostile duplicate 'add("inductor_cache/ok.py", data=b"other")'
expect 4 "'inductor_cache/ok.py': a second entry" -- "$CCPACK" import "$T/duplicate.tar" -o "$T/h.ccpack"
hostile hardlink-out 'add("inductor_cache/h", tarfile.LNKTYPE, link="etc/shadow")'
expect 4 "'inductor_cache/h': hard link to 'etc/shadow'" -- "$CCPACK" import "$T/hardlink-out.tar" -o "$T/h.ccpack"
hostile escape-name 'add("inductor_cache/\x1b]0;owned\x07\n/../x")'
expect 4 "refusing foreign entry 'inductor_cache/\\\\x1b\]0;owned\\\\x07\\\\n/\.\./x'" -- "$CCPACK" import "$T/escape-name.tar" -o "$T/h.ccpack"
if LC_ALL=C grep -q "$(printf '\033')" "$T/err"; then bad "a raw escape byte reached stderr"; else ok; fi
head -c 4000 "$T/s.tar.gz" >"$T/truncated.tar.gz"
expect 4 "foreign archive '$T/truncated.tar.gz'" -- "$CCPACK" import "$T/truncated.tar.gz" -o "$T/h.ccpack"
head -c $(($(stat -c %s "$T/s.long30.tar.zst") / 2)) "$T/s.long30.tar.zst" >"$T/truncated.tar.zst"
expect 4 "foreign archive '$T/truncated.tar.zst'" -- "$CCPACK" import "$T/truncated.tar.zst" -o "$T/h.ccpack"
head -c 3000 /dev/urandom >"$T/noise.bin"
expect 4 "'$T/noise.bin': cannot be opened as tar or zip" -- "$CCPACK" import "$T/noise.bin" -o "$T/h.ccpack"
python3 -c 'import sys; open(sys.argv[1], "wb").write(b"\xd2\x29\x71\x19" + bytes(20))' "$T/cpio.bin"  # a cpio-like magic: format not enabled
expect 4 "'$T/cpio.bin': cannot be opened as tar or zip" -- "$CCPACK" import "$T/cpio.bin" -o "$T/h.ccpack"
absent "a refused import left $T/h.ccpack" "$T/h.ccpack"

# --- libarchive, an independent reader, agrees with every archive made above ------------------------------
if [ -n "$ORACLE" ]; then
  for a in "$T"/*.ccpack; do
    "$ORACLE" "$a" >"$T/oracle.out" && ok || bad "oracle: $(cat "$T/oracle.out")"
  done
fi

finish
