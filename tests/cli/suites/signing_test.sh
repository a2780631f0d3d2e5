#!/usr/bin/env bash
# Signing suite: keygen, signed create, trust for verify/restore/inspect, every tampering the issue lists (each
# exit 4 with nothing written), two signers, the key rotation procedure exactly as the README gives it, exposed
# private keys, and no key bytes in any output. Byte surgery is in surgery.py.
# Usage: signing_test.sh PATH/TO/ccpack PATH/TO/tests/data
set -u
SUITE=signing
. "$(dirname "${BASH_SOURCE[0]}")/../helpers/harness.sh"
suite_paths "$@"
SURGERY="python3 $HERE/surgery.py"
# Every command's output is also appended to $T/all.log, which is searched for key bytes at the end.
EXPECT_LOG=$T/all.log

isolate
unset CCPACK_ALLOW_UNSIGNED CCPACK_TRUSTED_KEYS CCPACK_SIGNING_KEY XDG_CONFIG_HOME SOURCE_DATE_EPOCH
mkdir -p "$T/keys"
cd "$T/keys"

# --- keygen --------------------------------------------------------------------------------------------
expect 0 "wrote private key 'ci.key' \(mode 0600" -- "$CCPACK" keygen --out ci.key
CI_ID=$(cat "$T/out")
check '[[ "$CI_ID" =~ ^[0-9a-f]{16}$ ]]' "keygen printed '$CI_ID', not a key id"
check '[ "$(stat -c %a ci.key)" = 600 ] && grep -q "BEGIN PRIVATE KEY" ci.key && grep -q "BEGIN PUBLIC KEY" ci.key.pub' "key files"
cp ci.key ci.key.before
expect 1 "'ci.key' already exists; ccpack keygen never overwrites a key" -- "$CCPACK" keygen --out ci.key
check 'cmp -s ci.key ci.key.before' "keygen changed an existing key"
rm ci.key.before
echo "someone's public key" >lone.pub
expect 1 "'lone.pub' already exists" -- "$CCPACK" keygen --out lone
check '[ ! -e lone ] && [ "$(cat lone.pub)" = "someone'"'"'s public key" ]' "keygen wrote beside an existing NAME.pub"
expect 0 "" -- "$CCPACK" keygen --json --out other.key
OTHER_ID=$(field 'j["key_id"]')
make_key third.key

# --- signed create, verify, restore ------------------------------------------------------------------------
A="$T/a.ccpack"
expect 0 "signed with key $CI_ID" -- "$CCPACK" create -o "$A" "${DIRS[@]}" --sign-key ci.key --note "pipeline 42, commit 1a2b3c"
expect 0 "OK, 1 frames and 107 files .*signed by trusted key $CI_ID" -- "$CCPACK" verify "$A" --trust ci.key.pub
expect 0 "triton: restored" -- "$CCPACK" restore "$A" --trust ci.key.pub --inductor-dir "$T/r/ind" --triton-dir "$T/r/tri"
check 'diff -r --exclude=.ccpack-marker.json --exclude=.ccpack-entries --exclude="__grp__*.json" "$SAMPLE/triton_cache" "$T/r/tri" >/dev/null' "restored tree differs"
expect 0 "already restored" -- "$CCPACK" restore "$A" --trust ci.key.pub --inductor-dir "$T/r/ind" --triton-dir "$T/r/tri"
# The no-op reads the manifest's top level only: restore --json says which stage it reached.
manifest_read() { field 'j["manifest"] + " " + str(j["noop"])'; }
expect 0 "" -- "$CCPACK" restore --json "$A" --trust ci.key.pub --inductor-dir "$T/n/ind" --triton-dir "$T/n/tri"
check '[ "$(manifest_read)" = "full False" ]' "first restore: manifest read $(manifest_read), expected full False"
expect 0 "" -- "$CCPACK" restore --json "$A" --trust ci.key.pub --inductor-dir "$T/n/ind" --triton-dir "$T/n/tri"
check '[ "$(manifest_read)" = "markers True" ]' "no-op restore: manifest read $(manifest_read), expected markers True"
NOOP_MARKER=$(cat "$T/n/tri/.ccpack-marker.json")
# The markers name the archive file as it was restored: a no-op of that file, unchanged, reads no manifest byte
# ("markers"); a copy of it (another file) reads the top level ("top-level"); the file rewritten in place, same
# size and modification time put back, is not the file the markers name: read again, and its changed byte refused.
cp "$A" "$T/same.ccpack"
expect 0 "" -- "$CCPACK" restore --json "$T/same.ccpack" --trust ci.key.pub --inductor-dir "$T/n/ind" --triton-dir "$T/n/tri"
check '[ "$(manifest_read)" = "top-level True" ]' "no-op of a copy: manifest read $(manifest_read), expected top-level True"
expect 0 "" -- "$CCPACK" restore --json "$T/same.ccpack" --trust ci.key.pub --inductor-dir "$T/s/ind" --triton-dir "$T/s/tri"
expect 0 "" -- "$CCPACK" restore --json "$T/same.ccpack" --trust ci.key.pub --inductor-dir "$T/s/ind" --triton-dir "$T/s/tri"
check '[ "$(manifest_read)" = "markers True" ]' "no-op of the file restored: manifest read $(manifest_read), expected markers True"
python3 -c '
import os, sys
st = os.stat(sys.argv[1])
with open(sys.argv[1], "r+b") as f:
    b = f.read()
    at = b.index(b"\"source\":\"/") + len("\"source\":\"/")
    f.seek(at)
    f.write(bytes([b[at] ^ 1]))
os.utime(sys.argv[1], ns=(st.st_atime_ns, st.st_mtime_ns))' "$T/same.ccpack"
expect 4 "manifest SHA-256 mismatch \(corrupt header\)" -- "$CCPACK" restore "$T/same.ccpack" --trust ci.key.pub \
  --inductor-dir "$T/s/ind" --triton-dir "$T/s/tri"
expect 0 "" -- "$CCPACK" inspect "$A" --trust ci.key.pub
check 'grep -Eq "^  $CI_ID  signed 20[0-9-]+T[0-9:]+Z  verified +note: pipeline 42, commit 1a2b3c$" "$T/out"' "inspect signer line: $(cat "$T/out")"
expect 0 "" -- "$CCPACK" inspect "$A"
check 'grep -Eq "^  $CI_ID .* untrusted key " "$T/out" && grep -q "none from a key trusted here" "$T/out"' "inspect untrusted: $(cat "$T/out")"
expect 0 "" -- "$CCPACK" inspect --json "$A" --trust ci.key.pub
python3 - "$T/out" "$CI_ID" <<'EOF' && ok || bad "inspect --json signatures: $(cat "$T/out")"
import json, sys
j = json.load(open(sys.argv[1]))
s = j["signatures"]
assert j["trusted"] is True and len(s) == 1, j
assert s[0]["key_id"] == sys.argv[2] and s[0]["algorithm"] == "ed25519" and s[0]["status"] == "verified"
assert s[0]["note"] == "pipeline 42, commit 1a2b3c" and s[0]["signed_at"].endswith("Z")
EOF
expect 2 "--note needs a signing key" -- "$CCPACK" create -o "$T/n.ccpack" "${DIRS[@]}" --note "no key"
# The key in CCPACK_SIGNING_KEY, as CI hands it out; SOURCE_DATE_EPOCH makes the signed archive reproducible.
CCPACK_SIGNING_KEY="$(cat ci.key)" SOURCE_DATE_EPOCH=1700000000 expect 0 "signed with key $CI_ID" -- \
  "$CCPACK" create -o "$T/env1.ccpack" "${DIRS[@]}"
CCPACK_SIGNING_KEY="$(cat ci.key)" SOURCE_DATE_EPOCH=1700000000 "$CCPACK" create -q -o "$T/env2.ccpack" "${DIRS[@]}"
check 'cmp -s "$T/env1.ccpack" "$T/env2.ccpack"' "signed create with SOURCE_DATE_EPOCH is not reproducible"
expect 0 "" -- "$CCPACK" verify -q "$T/env1.ccpack" --trust ci.key.pub
# The unsigned archive of the same folders is what it was before signing existed.
"$CCPACK" create -q -o "$T/u.ccpack" "${DIRS[@]}"
check '[ "$($SURGERY block "$T/u.ccpack")" = "[]" ]' "unsigned block is not []"

# --- refusals: exit 4 and nothing written ----------------------------------------------------------------
mkdir -p "$T/d/ind" && echo precious >"$T/d/ind/keep.txt"
before=$(snap "$T/d")
refused() {  # refused PATTERN ARCHIVE [trust args]: verify and restore both exit 4, the target unchanged
  local pattern=$1 archive=$2
  shift 2
  expect 4 "$pattern" -- "$CCPACK" verify "$archive" "$@"
  expect 4 "$pattern" -- "$CCPACK" restore "$archive" "$@" --inductor-dir "$T/d/ind" --triton-dir "$T/d/tri"
  check '[ "$(snap "$T/d")" = "$before" ] && [ ! -e "$T/d/tri" ]' "refused restore of $archive changed the target"
  check '! ls -a "$T/d" | grep -q staging' "staging debris after $archive"
}
refused "is unsigned and unsigned archives are refused \(unsigned; trusted keys here: $CI_ID\)" "$T/u.ccpack" --trust ci.key.pub
refused "is unsigned and unsigned archives are refused \(unsigned; trusted keys here: none\)" "$T/u.ccpack"
refused "has no signature that verifies with a trusted key \(signed by $CI_ID \(untrusted key\); trusted keys here: $OTHER_ID\)" \
  "$A" --trust other.key.pub
refused "no signature that verifies with a trusted key \(signed by $CI_ID \(untrusted key\); trusted keys here: none\)" "$A"
# One byte of the manifest (the header's SHA-256 fixed up, so only the signature can catch it).
$SURGERY manifest-byte "$A" "$T/m.ccpack" '"source":"/'
refused "signed by $CI_ID \(bad signature\)" "$T/m.ccpack" --trust ci.key.pub
# ... also where every folder holds the untampered archive (the no-op path): the signature is checked first.
expect 4 "signed by $CI_ID \(bad signature\)" -- "$CCPACK" restore "$T/m.ccpack" --trust ci.key.pub \
  --inductor-dir "$T/n/ind" --triton-dir "$T/n/tri"
check '[ "$(cat "$T/n/tri/.ccpack-marker.json")" = "$NOOP_MARKER" ] && ! ls -a "$T/n" | grep -q staging' "refused no-op changed the target"
# ... and a changed manifest byte with the header's SHA-256 left as it was: refused before any parse.
python3 -c '
import sys
b = bytearray(open(sys.argv[1], "rb").read())
at = b.index(b"\"source\":\"/") + len("\"source\":\"/")
b[at] ^= 1
open(sys.argv[2], "wb").write(b)' "$A" "$T/h.ccpack"
expect 4 "manifest SHA-256 mismatch \(corrupt header\)" -- "$CCPACK" restore "$T/h.ccpack" --trust ci.key.pub \
  --inductor-dir "$T/n/ind" --triton-dir "$T/n/tri"
check '[ "$(cat "$T/n/tri/.ccpack-marker.json")" = "$NOOP_MARKER" ]' "refused corrupt header changed the target"
# ... and the signature is checked before the manifest is parsed: a manifest that is not even JSON any more.
$SURGERY manifest-byte "$A" "$T/m2.ccpack" '{'
refused "signed by $CI_ID \(bad signature\)" "$T/m2.ccpack" --trust ci.key.pub
expect 4 "manifest is not valid JSON" -- "$CCPACK" inspect "$T/m2.ccpack"
# One byte of the payload: the signature holds, the frame's SHA-256 in the signed manifest does not.
$SURGERY payload-byte "$A" "$T/p.ccpack"
refused "frame 0" "$T/p.ccpack" --trust ci.key.pub
# Header of A in front of the payload of B, both signed by the same trusted key; with and without P fixed up.
mkdir -p "$T/small" && echo tiny >"$T/small/x.py"
"$CCPACK" create -q -o "$T/b.ccpack" --inductor-dir "$T/small" --sign-key ci.key
expect 0 "" -- "$CCPACK" verify -q "$T/b.ccpack" --trust ci.key.pub
$SURGERY splice "$A" "$T/b.ccpack" "$T/ab.ccpack"
refused "is truncated" "$T/ab.ccpack" --trust ci.key.pub
$SURGERY splice "$A" "$T/b.ccpack" "$T/ab2.ccpack" --fix-size
refused "manifest frames cover [0-9]+ payload bytes, header says" "$T/ab2.ccpack" --trust ci.key.pub
$SURGERY splice "$T/b.ccpack" "$A" "$T/ba.ccpack" --fix-size
refused "manifest frames cover" "$T/ba.ccpack" --trust ci.key.pub
# The signature block removed (zero bytes) or emptied ([]), the header sizes fixed up.
$SURGERY set-block "$A" "$T/removed.ccpack" ""
refused "signature block: is not valid JSON" "$T/removed.ccpack" --trust ci.key.pub
$SURGERY set-block "$A" "$T/emptied.ccpack" "[]"
refused "is unsigned and unsigned archives are refused" "$T/emptied.ccpack" --trust ci.key.pub
# A signature copied from another archive (B, signed by the same trusted key).
$SURGERY set-block "$A" "$T/copied.ccpack" "$($SURGERY block "$T/b.ccpack")"
refused "signed by $CI_ID \(bad signature\)" "$T/copied.ccpack" --trust ci.key.pub
# A note edited after signing is caught like the manifest.
$SURGERY set-block "$A" "$T/renoted.ccpack" "$($SURGERY block "$A" | sed 's/pipeline 42/pipeline 43/')"
refused "signed by $CI_ID \(bad signature\)" "$T/renoted.ccpack" --trust ci.key.pub
# A malformed block: exit 4 naming the field, for every command, inspect --json included.
$SURGERY set-block "$A" "$T/junk.ccpack" "$($SURGERY block "$A" | sed "s/\"$CI_ID\"/7/")"
refused "signature block: signatures\[0\]\.key_id is not a string" "$T/junk.ccpack" --trust ci.key.pub
expect 4 "signature block: signatures\[0\]\.key_id is not a string" -- "$CCPACK" inspect --json "$T/junk.ccpack"
json_is "$T/out" "j['ok'] is False and j['exit_code']==4"
$SURGERY set-block "$A" "$T/dup.ccpack" "$($SURGERY block "$A" | sed 's/"algorithm"/"key_id":"0000000000000000","algorithm"/')"
expect 4 "signatures\[0\]\.key_id appears twice" -- "$CCPACK" inspect "$T/dup.ccpack"

# --- the opt-out: accepted, loudly (even with -q) ----------------------------------------------------------
expect 0 "warning: --allow-unsigned: accepting '$T/u.ccpack' with no signature from a trusted key \(unsigned;" -- \
  "$CCPACK" restore -q "$T/u.ccpack" --allow-unsigned --inductor-dir "$T/o/ind" --triton-dir "$T/o/tri"
CCPACK_ALLOW_UNSIGNED=1 expect 0 "warning: --allow-unsigned: accepting" -- "$CCPACK" verify -q "$T/u.ccpack"
CCPACK_ALLOW_UNSIGNED=1 expect 0 "warning: --allow-unsigned is set but not needed" -- "$CCPACK" verify -q "$A" --trust ci.key.pub
CCPACK_ALLOW_UNSIGNED=yes expect 2 "CCPACK_ALLOW_UNSIGNED must be 1" -- "$CCPACK" verify "$A"
# ... but never for damage: the opt-out is about signatures, not integrity.
expect 4 "frame 0" -- "$CCPACK" verify "$T/p.ccpack" --allow-unsigned

# --- push: an unsigned archive never reaches the registry (every pod would refuse it) -------------------------
# Port 9 has no registry: the refusal comes before any connection, and a signed archive gets past it to that.
expect 4 "^ccpack: error: '$T/u.ccpack' is unsigned and every pod would refuse it; sign it first \(\`ccpack sign '$T/u.ccpack' --sign-key KEY\`, or \`ccpack create --sign-key KEY\`\), or pass --allow-unsigned to push it anyway$" -- \
  "$CCPACK" push "$T/u.ccpack" 127.0.0.1:9/ccpack/cache:v1 --plain-http
check '[ "$(wc -l <"$T/err")" -eq 1 ]' "push of an unsigned archive: more than one line: $(cat "$T/err")"
expect 1 "127.0.0.1:9" -- "$CCPACK" push "$A" 127.0.0.1:9/ccpack/cache:v1 --plain-http
check '! grep -q unsigned "$T/err"' "push of a signed archive spoke of signatures: $(cat "$T/err")"
expect 1 "warning: --allow-unsigned: pushing '$T/u.ccpack' with no signature" -- \
  "$CCPACK" push -q "$T/u.ccpack" 127.0.0.1:9/ccpack/cache:v1 --plain-http --allow-unsigned
CCPACK_ALLOW_UNSIGNED=1 expect 1 "warning: --allow-unsigned: pushing" -- "$CCPACK" push -q "$T/u.ccpack" 127.0.0.1:9/ccpack/cache:v1 --plain-http

# --- where trusted keys come from ---------------------------------------------------------------------------
mkdir -p "$HOME/.config/ccpack/trusted.d" && cp ci.key.pub "$HOME/.config/ccpack/trusted.d/ci.pub"
echo "not a key, and not *.pub" >"$HOME/.config/ccpack/trusted.d/README"
expect 0 "signed by trusted key $CI_ID" -- "$CCPACK" verify "$A"
XDG_CONFIG_HOME="$T/xdg" expect 4 "trusted keys here: none" -- "$CCPACK" verify "$A"
mkdir -p "$T/xdg/ccpack/trusted.d" && cp ci.key.pub "$T/xdg/ccpack/trusted.d/"
XDG_CONFIG_HOME="$T/xdg" expect 0 "" -- "$CCPACK" verify -q "$A"
# Naming keys replaces the default folders: a key only in ~/.config is not trusted then.
expect 4 "trusted keys here: $OTHER_ID\)" -- "$CCPACK" verify "$A" --trust other.key.pub
CCPACK_TRUSTED_KEYS="$T/keys/other.key.pub:$T/xdg/ccpack/trusted.d" expect 0 "" -- "$CCPACK" verify -q "$A"
expect 1 "cannot read trusted keys at 'nope.pub': No such file or directory" -- "$CCPACK" verify "$A" --trust nope.pub
expect 1 "public key 'ci.key' is not a PEM public key" -- "$CCPACK" verify "$A" --trust ci.key
rm -r "$HOME/.config/ccpack"

# --- two signers, only the second trusted --------------------------------------------------------------------
cp "$A" "$T/two.ccpack"
expect 4 "is unsigned" -- "$CCPACK" sign "$T/u.ccpack" --sign-key other.key
expect 0 "signed '$T/two.ccpack' with key $OTHER_ID \(2 signatures; was signed by $CI_ID \(verified\)" -- \
  "$CCPACK" sign "$T/two.ccpack" --sign-key other.key --trust ci.key.pub --note "QA approved"
expect 0 "signed by trusted key $OTHER_ID" -- "$CCPACK" verify "$T/two.ccpack" --trust other.key.pub
expect 0 "triton: restored" -- "$CCPACK" restore "$T/two.ccpack" --trust other.key.pub --inductor-dir "$T/t/ind" --triton-dir "$T/t/tri"
expect 0 "" -- "$CCPACK" inspect "$T/two.ccpack" --trust other.key.pub
check 'grep -Eq "^  $CI_ID .* untrusted key " "$T/out" && grep -Eq "^  $OTHER_ID .* verified +note: QA approved$" "$T/out"' \
  "inspect of two signers: $(cat "$T/out")"
# The card names each signer with its time and note, as recorded.
expect 0 "" -- "$CCPACK" inspect --card "$T/two.ccpack"
check 'grep -Eqx -- "- signed: by key $CI_ID \(ed25519\) at 20[0-9-]+T[0-9:]+Z, note: pipeline 42, commit 1a2b3c" "$T/out" &&
       grep -Eqx -- "- signed: by key $OTHER_ID \(ed25519\) at 20[0-9-]+T[0-9:]+Z, note: QA approved" "$T/out"' \
  "card of two signers: $(head -12 "$T/out")"
# The payload is copied, not repacked: everything after the header is the same bytes.
check 'cmp -s <($SURGERY payload "$A") <($SURGERY payload "$T/two.ccpack")' "sign changed the payload"
# Signing again with the same key replaces its signature.
expect 0 "re-signed .* \(2 signatures" -- "$CCPACK" sign "$T/two.ccpack" --sign-key other.key --trust other.key.pub
# A failed rewrite leaves the archive as it was: a file-size limit below the archive size makes the write fail.
cp "$T/two.ccpack" "$T/two.before"
expect 1 "" -- bash -c "ulimit -f 64; exec \"$CCPACK\" sign \"$T/two.ccpack\" --sign-key third.key --trust ci.key.pub"
check 'cmp -s "$T/two.ccpack" "$T/two.before" && [ -z "$(ls -A "$T" | grep -E "\.tmp\.")" ]' "failed sign changed the archive"
expect 2 "--note holds a control character" -- "$CCPACK" sign "$T/two.ccpack" --sign-key third.key --trust ci.key.pub --note $'x\e[31m'
expect 2 "no signing key: pass --sign-key FILE or set \\\$CCPACK_SIGNING_KEY" -- "$CCPACK" sign "$T/two.ccpack" --trust ci.key.pub

# --- exposed private keys are refused --------------------------------------------------------------------------
cp ci.key exposed.key && chmod 644 exposed.key
expect 1 "private key 'exposed.key' is readable or writable by group or others \(mode 0644\); run: chmod 600 'exposed.key'" -- \
  "$CCPACK" create -o "$T/x.ccpack" "${DIRS[@]}" --sign-key exposed.key
absent "create with an exposed key wrote an archive" "$T/x.ccpack"
expect 1 "run: chmod 600" -- "$CCPACK" sign "$A" --sign-key exposed.key --trust ci.key.pub
chmod 600 exposed.key
expect 0 "" -- "$CCPACK" create -q -o "$T/x.ccpack" "${DIRS[@]}" --sign-key exposed.key
CCPACK_SIGNING_KEY="not a key" expect 1 "the private key in \\\$CCPACK_SIGNING_KEY is not an unencrypted PEM private key" -- \
  "$CCPACK" create -o "$T/y.ccpack" "${DIRS[@]}"

# --- key rotation, exactly as the README gives it ----------------------------------------------------------------
# (archives signed by the old key ci.key are in use; pods trust /etc/ccpack/trusted.d, here $POD/trusted.d)
POD="$T/pod" && mkdir -p "$POD/trusted.d" && cp ci.key.pub "$POD/trusted.d/ci-2026.pub"
cp "$A" "$T/in-use.ccpack" && cp "$A" "$T/forgotten.ccpack"
export CCPACK_TRUSTED_KEYS="$POD/trusted.d"
# 1. Make the new key.
expect 0 "" -- "$CCPACK" keygen --out ci-2027.key
NEW_ID=$(cat "$T/out")
# 2. Pods trust both keys.
cp ci-2027.key.pub "$POD/trusted.d/ci-2027.pub"
# 3. Add the new signature to the archives in use (verified with the old key first).
expect 0 "" -- "$CCPACK" sign "$T/in-use.ccpack" --sign-key ci-2027.key --trust ci.key.pub --note "rotation 2027"
# 4. The pipeline signs with the new key from now on.
expect 0 "" -- "$CCPACK" create -q -o "$T/new.ccpack" "${DIRS[@]}" --sign-key ci-2027.key
expect 0 "signed by trusted key" -- "$CCPACK" verify "$T/forgotten.ccpack"
# 5. Once every archive in use carries the new signature, pods stop trusting the old key.
rm "$POD/trusted.d/ci-2026.pub"
expect 0 "signed by trusted key $NEW_ID" -- "$CCPACK" verify "$T/in-use.ccpack"
expect 0 "signed by trusted key $NEW_ID" -- "$CCPACK" verify "$T/new.ccpack"
expect 4 "signed by $CI_ID \(untrusted key\); trusted keys here: $NEW_ID\)" -- "$CCPACK" verify "$T/forgotten.ccpack"
unset CCPACK_TRUSTED_KEYS

# --- no key bytes in any output ---------------------------------------------------------------------------------
"$CCPACK" --help >>"$T/all.log" 2>&1
for cmd in create restore verify inspect keygen sign; do "$CCPACK" "$cmd" --help >>"$T/all.log" 2>&1; done
for key in ci.key other.key third.key ci-2027.key; do
  body=$(grep -v -- ----- "$key" | tr -d '\n')
  seed=$(python3 -c "import base64,sys; d=base64.b64decode(sys.argv[1]); print(base64.b64encode(d[16:48]).decode())" "$body")
  check '[ ${#body} -ge 64 ] && ! grep -qF -- "$body" "$T/all.log" && ! grep -qF -- "$seed" "$T/all.log"' "key bytes of $key in the output"
  check '! grep -qF -- "${seed:0:20}" "$T/all.log"' "part of the seed of $key in the output"
done
check '[ "$(wc -l <"$T/all.log")" -gt 100 ]' "the output log is suspiciously short"

finish
