#!/usr/bin/env bash
# cosign 3 suite: push writes a key-based sigstore bundle (DSSE, in-toto statement, cosign's predicate type) as an
# OCI referrer of each pushed document, listed under the fallback tag sha256-<hex> on Debian's docker-registry (it
# has no referrers API, pinned here); sigstore's own verifier (npm @sigstore/verify, pinned) accepts the bundles read
# back from the registry with each public key and refuses another key; a push again adds no entry and keeps other
# writers' entries. `restore oci:// --require-cosign` and `pull --require-cosign` accept a bundle that @sigstore/sign
# made (tests/cli/helpers/sigstore_bundle.js pushes it as cosign 3 does) and one ccpack wrote with --cosign-format bundle
# alone, and refuse, exit 4 with one line naming the bundle and why, a tampered one (a payload byte, the payload
# type, an unpadded signature), another key, another tag, cosign's nameless form (accepted with --cosign-identity
# repository). Against Debian's docker-registry on 127.0.0.1.
# Usage: cosign3_test.sh PATH/TO/ccpack PATH/TO/tests/data
set -u
SUITE=cosign3
. "$(dirname "${BASH_SOURCE[0]}")/../helpers/harness.sh"
suite_paths "$@"
isolate
unset CCPACK_ALLOW_UNSIGNED CCPACK_TRUSTED_KEYS CCPACK_SIGNING_KEY SOURCE_DATE_EPOCH CCPACK_PLAIN_HTTP CCPACK_COSIGN_IDENTITY
skip_without docker-registry openssl curl node npm
start_plain_registry
R=127.0.0.1:$PORT
cd "$T"
# entries DIGEST: the bundle entries of DIGEST's fallback index (artifactType bundle v0.3), and all entries.
entries() {
  curl -s --max-time 10 -H "Accept: application/vnd.oci.image.index.v1+json" "http://$R/v2/cache/manifests/${1/:/-}" |
    "$PY" -c "import json,sys; m=json.load(sys.stdin)['manifests']; print(sum(e.get('artifactType')=='application/vnd.dev.sigstore.bundle.v0.3+json' for e in m), len(m))"
}

# --- keys, archives, and the npm packages (pinned: the versions cosign_test.sh verifies with, and their signer) --
cosign_keys
expect 0 "" -- "$CCPACK" create -o signed.ccpack "${DIRS[@]}" --sign-key ci.key
expect 0 "" -- "$CCPACK" create -o unsigned.ccpack --inductor-dir "$SAMPLE/inductor_cache"
if ! timeout 300 npm install --prefix "$T/npm" --no-audit --no-fund --silent @sigstore/verify@1.2.1 @sigstore/bundle@2.3.2 \
    @sigstore/sign@2.3.2 >"$T/npm.log" 2>&1; then
  bad "npm install @sigstore/verify@1.2.1 @sigstore/sign@2.3.2 failed: $(tail -3 "$T/npm.log")"
  finish
fi
JS() { timeout 60 node "$HERE/sigstore_bundle.js" "$1" "$T/npm/node_modules" "http://$R" cache "${@:2}"; }

# --- push writes both forms by default; the registry has no referrers API, so the fallback tag lists them ------
expect 0 "cosign bundle of sha256:[0-9a-f]{64} in $R/cache, listed by tag sha256-[0-9a-f]{64} \(2 keys, 2 written\)" -- \
  "$CCPACK" push --plain-http --sign-key ci.key --cosign-key ec.key signed.ccpack "$R/cache:v1"
expect 0 "" -- "$CCPACK" push --plain-http --json --sign-key ci.key --cosign-key ec.key signed.ccpack "$R/cache:v1"
DIGEST=$(field 'j["manifest_digest"]')
check '[ "$(field "j[\"cosign\"][0][\"bundle\"][\"referrers\"]")" = "[]" ]' "a push again wrote another bundle: $(cat "$T/out")"
check '[ "$(field "j[\"cosign\"][0][\"bundle\"][\"index\"]")" = "tag ${DIGEST/:/-}" ]' "push --json bundle index: $(cat "$T/out")"
check '[ "$(field "j[\"cosign\"][0][\"tag\"]")" = "${DIGEST/:/-}.sig" ]' "the .sig form is written too: $(cat "$T/out")"
check '[ "$(entries "$DIGEST")" = "2 2" ]' "fallback index of the pushed manifest: $(entries "$DIGEST"), expected 2 bundles of 2 entries"
check '[ "$(curl -s -o /dev/null -w "%{http_code}" --max-time 10 "http://$R/v2/cache/referrers/$DIGEST")" = 404 ]' \
  "docker-registry answered the referrers API: the fallback tag is no longer what is tested here"

# --- sigstore's own verifier accepts the bundles read back from the registry, with each key only --------------
# Index order: the Ed25519 key's bundle (--sign-key), then the ECDSA key's (--cosign-key).
check '[ "$(JS verify "$DIGEST" ci.key.pub | tr "\n" "|")" = "verified|SIGNATURE_ERROR: signature verification failed|" ]' \
  "@sigstore/verify with the Ed25519 key: $(JS verify "$DIGEST" ci.key.pub | tr "\n" "|")"
check '[ "$(JS verify "$DIGEST" ec.pub | tr "\n" "|")" = "SIGNATURE_ERROR: signature verification failed|verified|" ]' \
  "@sigstore/verify with the ECDSA key: $(JS verify "$DIGEST" ec.pub | tr "\n" "|")"
check '[ "$(JS verify "$DIGEST" other.key.pub | tr "\n" "|")" = "SIGNATURE_ERROR: signature verification failed|SIGNATURE_ERROR: signature verification failed|" ]' \
  "@sigstore/verify accepted another key: $(JS verify "$DIGEST" other.key.pub | tr "\n" "|")"

# --- --cosign-format: bundle alone, accepted by restore and pull through the bundle --------------------------------
expect 2 "--cosign-format is 'v3': expected legacy, bundle or both" -- \
  "$CCPACK" push --plain-http --cosign-key ec.key --cosign-format v3 signed.ccpack "$R/cache:b1"
expect 0 "" -- "$CCPACK" push --plain-http --allow-unsigned --json --cosign-key ec.key --cosign-format bundle unsigned.ccpack "$R/cache:b1"
B=$(field 'j["manifest_digest"]')
check '[ "$(field "j[\"cosign\"][0][\"tag\"]")" = None ]' "--cosign-format bundle wrote the .sig form: $(cat "$T/out")"
check '[ "$(curl -s -o /dev/null -w "%{http_code}" --max-time 10 "http://$R/v2/cache/manifests/${B/:/-}.sig")" = 404 ]' "--cosign-format bundle wrote a .sig tag"
expect 0 "inductor: restored" -- "$CCPACK" restore "oci://$R/cache:b1" --plain-http --require-cosign --trust ec.pub \
  --inductor-dir "$T/r1/ind" --triton-dir "$T/r1/tri"
expect 0 "cosign signature by trusted key" -- "$CCPACK" pull "$R/cache:b1" -o b1.ccpack --plain-http --require-cosign --trust ec.pub
# The tag moved back onto it from another tag: signed for b1 only, so refused by default, accepted by repository.
expect 0 "" -- "$CCPACK" push --plain-http --allow-unsigned --cosign-format legacy unsigned.ccpack "$R/cache:b2"
expect 4 "\(${B/:/-}\.sig: no signature \(the tag is missing or holds no layer\); bundle sha256:[0-9a-f]{64}: key [0-9a-f]{16} signed this digest for another reference: it names $R/cache:b1, not $R/cache:b2 \(--cosign-identity repository accepts any tag of the repository\)\)" -- \
  "$CCPACK" pull "$R/cache:b2" -o b2.ccpack --plain-http --require-cosign --trust ec.pub
absent "a refused pull left a file" b2.ccpack
expect 0 "cosign signature by trusted key" -- "$CCPACK" pull "$R/cache:b2" -o b2.ccpack --plain-http --require-cosign --trust ec.pub --cosign-identity repository

# --- a bundle made by @sigstore/sign, pushed as cosign 3 pushes it, accepted by that key alone ------------------
expect 0 "" -- "$CCPACK" create -o lone.ccpack --triton-dir "$SAMPLE/triton_cache"
expect 0 "" -- "$CCPACK" push --plain-http --allow-unsigned --json lone.ccpack "$R/cache:js"
L=$(field 'j["manifest_digest"]')
check 'JS push "$L" ec.key "$R/cache:js" >"$T/js.out"' "sigstore_bundle.js push failed (its output: $T/js.out)"
check '[ "$(JS verify "$L" ec.pub)" = verified ]' "@sigstore/verify refused @sigstore/sign's own bundle: $(JS verify "$L" ec.pub)"
expect 0 "triton: restored" -- "$CCPACK" restore "oci://$R/cache:js" --plain-http --require-cosign --trust ec.pub \
  --inductor-dir "$T/r2/ind" --triton-dir "$T/r2/tri"
expect 4 "has no cosign signature by a trusted key \(${L/:/-}\.sig: no signature \(the tag is missing or holds no layer\); bundle sha256:[0-9a-f]{64}: signed by no trusted key\)" -- \
  "$CCPACK" restore "oci://$R/cache:js" --plain-http --require-cosign --trust ci.key.pub --inductor-dir "$T/r3/ind" --triton-dir "$T/r3/tri"
absent "a refused restore wrote something" "$T/r3/ind" "$T/r3/tri"
# A push of the same artifact by ccpack with that key and another: @sigstore/sign's bundle holds ccpack's very
# statement (the same bytes) signed by the ECDSA key, so only the Ed25519 key adds an entry; the other is kept.
expect 0 "cosign bundle of $L in $R/cache, listed by tag ${L/:/-} \(2 keys, 1 written\)" -- \
  "$CCPACK" push --plain-http --allow-unsigned --cosign-key ec.key --sign-key ci.key lone.ccpack "$R/cache:js"
check '[ "$(entries "$L")" = "2 2" ]' "ccpack's push: $(entries "$L") bundles and entries, expected 2 2"

# --- tampered bundles, each refused by name, nothing written -------------------------------------------------------
# refuse TAMPER PATTERN: an artifact of its own (the archive signed with a note of its own), its bundle by the Ed25519
# key (a 64-byte signature: always padded base64) tampered so, refused by restore (exit 4, one line)
refuse() {
  expect 0 "" -- "$CCPACK" create -o "t-$1.ccpack" --triton-dir "$SAMPLE/triton_cache" --sign-key ci.key --note "$1"
  expect 0 "" -- "$CCPACK" push --plain-http --json "t-$1.ccpack" "$R/cache:t-$1"
  local d tamper=$1
  d=$(field 'j["manifest_digest"]')
  check 'JS push "$d" ci.key "$R/cache:t-$tamper" "$tamper" >"$T/js.out"' "sigstore_bundle.js push $1 failed (its output: $T/js.out)"
  expect 4 "\(${d/:/-}\.sig: no signature \(the tag is missing or holds no layer\); bundle sha256:[0-9a-f]{64}: $2\)" -- \
    "$CCPACK" restore "oci://$R/cache:t-$1" --plain-http --require-cosign --trust ci.key.pub --inductor-dir "$T/x/ind" --triton-dir "$T/x/tri"
  absent "the restore of a bundle tampered ($1) wrote something" "$T/x/ind" "$T/x/tri"
}
# defence: bundle-key (a statement byte changed after signing: no trusted key's signature covers it)
refuse payload "signed by no trusted key"
# defence: bundle-payload-type
refuse payload-type "malformed bundle: field 'dsseEnvelope\.payloadType' is not 'application/vnd\.in-toto\+json'"
# defence: bundle-base64-strict
refuse unpadded "malformed bundle: field 'dsseEnvelope.signatures\[0\].sig' is not padded standard base64"
finish
