#!/usr/bin/env bash
# cosign suite: push writes cosign signatures (sha256-<hex>.sig) with the archive's Ed25519 key and an ECDSA P-256
# key; sigstore's own verifier (npm @sigstore/verify, pinned) accepts their bytes with the public keys and refuses
# another key; skopeo's sigstoreSigned policy and --sign-by-sigstore-private-key run where skopeo has sigstore (on
# Debian 12 it is patched out, and that exact refusal is pinned); `restore oci:// --require-cosign` and `pull
# --require-cosign` accept a signature ccpack did not write by that key alone, and every refusal of the cosign
# check (no signature, another digest, another reference, a wrong key, a malformed payload or annotation, a trusted
# manifest signature that fails, an unpadded annotation, a mistyped optional.creator, a signature for another tag or
# for no tag unless --cosign-identity repository) is exit 4 with one line and nothing written. Fleets: another
# signer's keyless layer (a 5.6 KB bundle annotation) is kept by push and skipped by pull; 70 tags of one artifact by
# two keys push and verify, a push again adds nothing; a tag moved back onto an artifact signed for other tags is
# refused by default; the --as-image image is signed (checked by the helpers' own verifier); a push whose signature
# manifest is full (1,000 layers) exits 1 with the tag unmoved. Against Debian's docker-registry on 127.0.0.1.
# Usage: cosign_test.sh PATH/TO/ccpack PATH/TO/tests/data
set -u
SUITE=cosign
. "$(dirname "${BASH_SOURCE[0]}")/../helpers/harness.sh"
suite_paths "$@"
isolate
unset CCPACK_ALLOW_UNSIGNED CCPACK_TRUSTED_KEYS CCPACK_SIGNING_KEY SOURCE_DATE_EPOCH CCPACK_PLAIN_HTTP
HELPERS="$PY $HERE/cosign_helpers.py"
skip_without docker-registry skopeo openssl curl
"$PY" -c "import nacl.secret, cryptography" 2>/dev/null || { skip "cosign suite" "python3-nacl or python3-cryptography missing"; finish; }
start_plain_registry
R=127.0.0.1:$PORT
cd "$T"
push_bare() {  # push_bare TAG [ARCHIVE]: an unsigned archive under TAG, no cosign signature; prints its manifest digest
  "$CCPACK" push --plain-http --allow-unsigned --json "${2:-unsigned.ccpack}" "$R/cache:$1" 2>/dev/null |
    "$PY" -c "import json,sys; print(json.load(sys.stdin)['manifest_digest'])"
}

# --- keys and archives -------------------------------------------------------------------------------------
cosign_keys
expect 0 "" -- "$CCPACK" create -o signed.ccpack "${DIRS[@]}" --sign-key ci.key
expect 0 "" -- "$CCPACK" create -o unsigned.ccpack "${DIRS[@]}"
# Another unsigned archive (another manifest digest): the refusals below get a signature tag of their own.
expect 0 "" -- "$CCPACK" create -o lone.ccpack --inductor-dir "$SAMPLE/inductor_cache"

# --- push writes the signatures ----------------------------------------------------------------------------
if section push; then
expect 0 "cosign signature of sha256:[0-9a-f]{64} under $R/cache:sha256-[0-9a-f]{64}\.sig \(2 signatures\)" -- \
  "$CCPACK" push --plain-http --sign-key ci.key --cosign-key ec.key signed.ccpack "$R/cache:v1"
expect 0 "" -- "$CCPACK" push --plain-http --json --sign-key ci.key --cosign-key ec.key signed.ccpack "$R/cache:v1"
DIGEST=$(field 'j["manifest_digest"]')
check '[ "$(field "j[\"cosign\"][0][\"tag\"]")" = "${DIGEST/:/-}.sig" ]' "push --json cosign tag: $(cat "$T/out")"
check '[ "$(field "len(j[\"cosign\"][0][\"key_ids\"])")" = 2 ]' "push --json key ids: $(cat "$T/out")"
check '[ "$($HELPERS layers "$PORT" cache "$DIGEST")" = 2 ]' "a second push of the same artifact added signatures instead of replacing its own"
expect 1 "cannot open private key 'missing.key'" -- "$CCPACK" push --plain-http --cosign-key missing.key signed.ccpack "$R/cache:v1"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -out p384.key 2>/dev/null && chmod 600 p384.key
expect 1 "private key 'p384.key' is not an Ed25519 or ECDSA P-256 key" -- "$CCPACK" push --plain-http --cosign-key p384.key signed.ccpack "$R/cache:v1"
expect 1 "private key 'ec.key' is not an Ed25519 key" -- "$CCPACK" push --plain-http --sign-key ec.key signed.ccpack "$R/cache:v1"
fi

# --- skopeo -------------------------------------------------------------------------------------------------
# Debian 12's containers/image (skopeo 1.9.3) carries a Debian-local patch that turns sigstore off: a sigstoreSigned
# requirement and --sign-by-sigstore-private-key both fail with one message, whatever the signature. That exact
# behaviour is pinned here; where skopeo has sigstore (upstream builds), the real checks run instead.
if section skopeo; then
mkdir -p regd
printf 'docker:\n  %s:\n    use-sigstore-attachments: true\n' "$R" >regd/ccpack.yaml
policy() {  # policy FILE KEY: sigstoreSigned with KEY is the only requirement, for every transport and image
  printf '{"default":[{"type":"reject"}],"transports":{"docker":{"":[{"type":"sigstoreSigned","keyPath":"%s"}]}}}\n' "$T/$2" >"$1"
}
policy ci-policy.json ci.key.pub
policy ec-policy.json ec.pub
policy other-policy.json other.key.pub
copy() { skopeo --policy "$1" --registries.d "$T/regd" copy --src-tls-verify=false "docker://$R/cache:$2" "dir:$T/copy-$RANDOM"; }
printf 'secret passphrase' >pass
$HELPERS cosign-key ec.key pass ec.cosign.key
skopeo_sign() {  # skopeo_sign SRC DST: copy SRC to DST, signed with ec.cosign.key
  skopeo --insecure-policy --registries.d "$T/regd" copy --src-tls-verify=false --dest-tls-verify=false \
    --sign-by-sigstore-private-key ec.cosign.key --sign-passphrase-file pass "docker://$R/cache:$1" "docker://$R/cache:$2"
}
if copy ci-policy.json v1 2>&1 | grep -q "Debian-local change: sigstore disabled"; then
  SKOPEO_SIGSTORE=0
  # It does read the signature tag: one reason per layer of sha256-<hex>.sig (the Ed25519 and the ECDSA signature).
  tool_expect 1 "Source image rejected: None of the signatures were accepted, reasons: Debian-local change: sigstore disabled; Debian-local change: sigstore disabled\"" -- copy ci-policy.json v1
  tool_expect 1 "creating signature: Debian-local change: sigstore disabled" -- skopeo_sign v1 skopeo-signed
else
  SKOPEO_SIGSTORE=1
  tool_expect 0 "" -- copy ci-policy.json v1
  tool_expect 0 "" -- copy ec-policy.json v1
  tool_expect 1 "cryptographic signature verification failed|None of the signatures were accepted" -- copy other-policy.json v1
fi
fi

# --- sigstore's own verifier (npm @sigstore/verify, pinned) on the signatures push wrote ----------------------
if section sigverify; then
if command -v npm >/dev/null && command -v node >/dev/null; then
  if timeout 300 npm install --prefix "$T/npm" --no-audit --no-fund --silent @sigstore/verify@1.2.1 @sigstore/bundle@2.3.2 \
      >"$T/npm.log" 2>&1; then
    sigverify() {  # sigverify I KEY: layer I of DIGEST's signature manifest, by @sigstore/verify with KEY
      local sig
      sig=$($HELPERS layer "$PORT" cache "$DIGEST" "$1" "$T/payload-$1") &&
        node "$HERE/sigstore_verify.js" "$T/npm/node_modules" "$T/$2" "$T/payload-$1" "$sig"
    }
    check '[ "$(sigverify 0 ci.key.pub)" = verified ]' "@sigstore/verify refused ccpack's Ed25519 signature: $(sigverify 0 ci.key.pub)"
    check '[ "$(sigverify 1 ec.pub)" = verified ]' "@sigstore/verify refused ccpack's ECDSA P-256 signature: $(sigverify 1 ec.pub)"
    check '[ "$(sigverify 0 other.key.pub)" = "SIGNATURE_ERROR: signature verification failed" ]' \
      "@sigstore/verify accepted another key: $(sigverify 0 other.key.pub)"
    check '[ "$(sigverify 1 ci.key.pub)" = "SIGNATURE_ERROR: signature verification failed" ]' \
      "@sigstore/verify accepted the ECDSA signature with the Ed25519 key: $(sigverify 1 ci.key.pub)"
  else
    bad "npm install @sigstore/verify@1.2.1 failed: $(tail -3 "$T/npm.log")"
  fi
else
  skip "@sigstore/verify" "node or npm is not installed"
fi
# The tag moved to an unsigned artifact: no signature exists for its digest.
expect 0 "" -- "$CCPACK" push --plain-http --allow-unsigned unsigned.ccpack "$R/cache:v1"
# (Debian's skopeo too: with no signature to evaluate, the patched-out code is never reached.)
tool_expect 1 "Source image rejected: A signature was required, but no signature exists" -- copy ci-policy.json v1
# An index and its entry are both signed.
expect 0 "" -- "$CCPACK" push --plain-http --json --index --sign-key ci.key signed.ccpack "$R/cache:fleet"
check '[ "$(field "len(j[\"cosign\"])")" = 2 ]' "push --index signs the manifest and the index: $(cat "$T/out")"
fi

# --- restore oci:// and pull accept a cosign signature by a trusted key -------------------------------------
if section accept; then
expect 0 "" -- "$CCPACK" push --plain-http --sign-key ci.key --cosign-key ec.key signed.ccpack "$R/cache:v2"
expect 0 "triton: restored" -- "$CCPACK" restore "oci://$R/cache:v2" --plain-http --require-cosign --trust ec.pub \
  --inductor-dir "$T/r1/ind" --triton-dir "$T/r1/tri"
expect 0 "cosign signature by trusted key" -- "$CCPACK" pull "$R/cache:v2" -o pulled.ccpack --plain-http --require-cosign --trust ci.key.pub
check 'cmp -s signed.ccpack pulled.ccpack' "pull --require-cosign: the file differs"
expect 2 "--trust takes effect with --require-cosign only" -- "$CCPACK" pull "$R/cache:v2" -o p2.ccpack --plain-http --trust ci.key.pub
fi

# --- a signature ccpack did not write (skopeo's where it has sigstore, else the suite's own) ------------------------
if section foreign; then
expect 0 "" -- "$CCPACK" push --plain-http --allow-unsigned unsigned.ccpack "$R/cache:bare"
if [ "$SKOPEO_SIGSTORE" = 1 ]; then
  tool_expect 0 "" -- skopeo_sign bare skopeo
else
  $HELPERS forge "$PORT" cache "$(push_bare skopeo)" ec.key --ref "$R/cache:skopeo"
fi
expect 0 "triton: restored" -- "$CCPACK" restore "oci://$R/cache:skopeo" --plain-http --require-cosign --trust ec.pub \
  --inductor-dir "$T/r2/ind" --triton-dir "$T/r2/tri"
expect 4 "has no cosign signature by a trusted key \(sha256-[0-9a-f]{64}\.sig: layer 0: signed by no trusted key\)" -- \
  "$CCPACK" restore "oci://$R/cache:skopeo" --plain-http --require-cosign --trust ci.key.pub --inductor-dir "$T/r3/ind" --triton-dir "$T/r3/tri"
absent "a refused restore wrote something" "$T/r3/ind" "$T/r3/tri"
# Without --require-cosign the unsigned archive is refused as ever.
expect 4 "is unsigned and unsigned archives are refused" -- \
  "$CCPACK" restore "oci://$R/cache:skopeo" --plain-http --trust ec.pub --inductor-dir "$T/r3/ind" --triton-dir "$T/r3/tri"
fi

# --- refusals: each one line, exit 4, before any archive byte --------------------------------------------------
if section refusals; then
refuse() {  # refuse TAG PATTERN: restore and pull --require-cosign --trust ec.pub both refuse, nothing written
  expect 4 "$2" -- "$CCPACK" restore "oci://$R/cache:$1" --plain-http --require-cosign --trust ec.pub \
    --inductor-dir "$T/x/ind" --triton-dir "$T/x/tri"
  absent "refused restore of $1 wrote something" "$T/x/ind" "$T/x/tri"
  expect 4 "$2" -- "$CCPACK" pull "$R/cache:$1" -o "$T/x.ccpack" --plain-http --require-cosign --trust ec.pub
  absent "refused pull of $1 left a file" "$T/x.ccpack"
}
D=$(push_bare none lone.ccpack)
refuse none "\(${D/:/-}\.sig: no signature \(the tag is missing or holds no layer\)\)"
# defence: cosign-digest (a signature of another artifact copied under this one's tag)
$HELPERS forge "$PORT" cache "$D" ec.key --ref "$R/cache:none" --signed-digest "$DIGEST"
refuse none "layer 0: key [0-9a-f]{16} signed $DIGEST, another artifact\)"
# defence: cosign-identity (this digest, signed for another repository)
$HELPERS forge "$PORT" cache "$D" ec.key --ref "$R/elsewhere:none"
refuse none "layer 0: key [0-9a-f]{16} signed this digest for another reference: it names $R/elsewhere, not $R/cache\)"
# defence: cosign-key
$HELPERS forge "$PORT" cache "$D" other.key --ref "$R/cache:none"
refuse none "layer 0: signed by no trusted key\)"
# defence: cosign-payload
$HELPERS forge "$PORT" cache "$D" ec.key --payload '{"critical":{"type":"cosign container image signature"},"optional":null}'
refuse none "layer 0: key [0-9a-f]{16} signed a malformed payload: field 'critical.identity' is missing\)"
# defence: cosign-annotation
$HELPERS forge "$PORT" cache "$D" ec.key --ref "$R/cache:none" --annotation 'not base64!'
refuse none "layer 0: annotation dev.cosignproject.cosign/signature is missing or not padded standard base64\)"
# defence: cosign-base64-strict (Go's padded standard encoding: an unpadded signature is no signature)
$HELPERS forge "$PORT" cache "$D" ci.key --ref "$R/cache:none" --unpadded 1
expect 4 "layer 0: annotation dev.cosignproject.cosign/signature is missing or not padded standard base64\)" -- \
  "$CCPACK" pull "$R/cache:none" -o "$T/x.ccpack" --plain-http --require-cosign --trust ci.key.pub
# defence: cosign-optional-types
$HELPERS forge "$PORT" cache "$D" ec.key --payload '{"critical":{"identity":{"docker-reference":"'"$R/cache:none"'"},"image":{"docker-manifest-digest":"'"$D"'"},"type":"cosign container image signature"},"optional":{"creator":7}}'
refuse none "layer 0: key [0-9a-f]{16} signed a malformed payload: field 'optional.creator' is not a string\)"
# A cosign signature of this very digest by the trusted key without a tag (cosign's default form): it names the
# repository, not the tag, so only --cosign-identity repository (or $CCPACK_COSIGN_IDENTITY) accepts it.
$HELPERS forge "$PORT" cache "$D" ec.key --ref "$R/cache"
refuse none "layer 0: key [0-9a-f]{16} signed this digest for another reference: it names $R/cache \(no tag\), not $R/cache:none \(--cosign-identity repository accepts any tag of the repository\)\)"
expect 0 "inductor: restored" -- "$CCPACK" restore "oci://$R/cache:none" --plain-http --require-cosign --trust ec.pub \
  --cosign-identity repository --inductor-dir "$T/r4/ind" --triton-dir "$T/r4/tri"
expect 2 "--cosign-identity is 'tag': expected exact or repository" -- \
  "$CCPACK" pull "$R/cache:none" -o "$T/x.ccpack" --plain-http --require-cosign --trust ec.pub --cosign-identity tag
absent "a pull with a bad --cosign-identity left a file" "$T/x.ccpack"
# defence: cosign-manifest-signature (accepted by cosign, but a trusted key's own signature of the archive fails)
python3 - signed.ccpack broken.ccpack <<'PYEOF'
import struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
m = struct.unpack_from("<I", data, 64)[0]
at = data.index(b'"signature":"', 72 + m) + len('"signature":"') + 10
data[at] = ord("A") if data[at] != ord("A") else ord("B")
open(sys.argv[2], "wb").write(data)
PYEOF
expect 0 "" -- "$CCPACK" push --plain-http --cosign-key ec.key broken.ccpack "$R/cache:broken"
expect 4 "is accepted by the cosign signature of key [0-9a-f]{16}, but its own signature by trusted key [0-9a-f]{16} does not verify" -- \
  "$CCPACK" restore "oci://$R/cache:broken" --plain-http --require-cosign --trust ec.pub --trust ci.key.pub \
  --inductor-dir "$T/r5/ind" --triton-dir "$T/r5/tri"
absent "the broken archive was restored" "$T/r5/tri/.ccpack-marker.json"
fi
# --- fleets: another signer beside ours, many tags, a tag moved back, the image, signing before the tag moves ---
if section fleets; then
expect 0 "" -- "$CCPACK" create -o fleet.ccpack --triton-dir "$SAMPLE/triton_cache" --sign-key ci.key
F=$(push_bare fleet-0 fleet.ccpack)
# Another signer's layer (a keyless signature with a 5.6 KB bundle annotation) first: push keeps it, pull skips it.
$HELPERS add-foreign "$PORT" cache "$F"
expect 0 "cosign signature of $F under $R/cache:${F/:/-}\.sig \(2 signatures\)" -- \
  "$CCPACK" push --plain-http --cosign-key ec.key fleet.ccpack "$R/cache:f1"
check '[ "$($HELPERS bundles "$PORT" cache "$F")" = 1 ]' "push dropped another signer's layer"
expect 0 "cosign signature by trusted key" -- "$CCPACK" pull "$R/cache:f1" -o f1.ccpack --plain-http --require-cosign --trust ec.pub
# 70 tags of the artifact, each signed by two keys: 140 signatures and the other signer's, more than 128.
for i in $(seq 1 70); do
  expect 0 "" -- "$CCPACK" push --plain-http -q --sign-key ci.key --cosign-key ec.key fleet.ccpack "$R/cache:f$i"
done
check '[ "$($HELPERS layers "$PORT" cache "$F")" = 141 ]' "70 tags by two keys: $($HELPERS layers "$PORT" cache "$F") layers, expected 141"
expect 0 "cosign signature of $F under $R/cache:${F/:/-}\.sig \(141 signatures, already signed\)" -- \
  "$CCPACK" push --plain-http --sign-key ci.key --cosign-key ec.key fleet.ccpack "$R/cache:f70"
check '[ "$($HELPERS layers "$PORT" cache "$F")" = 141 ]' "a push of a signed tag again added a layer"
expect 0 "cosign signature by trusted key" -- "$CCPACK" pull "$R/cache:f70" -o f70.ccpack --plain-http --require-cosign --trust ci.key.pub
expect 0 "cosign signature by trusted key" -- "$CCPACK" pull "$R/cache:f35" -o f35.ccpack --plain-http --require-cosign --trust ec.pub
# defence: cosign-identity-exact (a tag moved back onto an artifact signed for other tags only)
expect 0 "" -- "$CCPACK" push --plain-http fleet.ccpack "$R/cache:prod"
expect 4 "layer 1: key [0-9a-f]{16} signed this digest for another reference: it names $R/cache:f1, not $R/cache:prod \(--cosign-identity repository accepts any tag of the repository\)" -- \
  "$CCPACK" restore "oci://$R/cache:prod" --plain-http --require-cosign --trust ec.pub --inductor-dir "$T/r6/ind" --triton-dir "$T/r6/tri"
absent "a restore refused for its identity wrote something" "$T/r6/ind" "$T/r6/tri"
expect 0 "triton: restored" -- "$CCPACK" restore "oci://$R/cache:prod" --plain-http --require-cosign --trust ec.pub \
  --cosign-identity repository --inductor-dir "$T/r6/ind" --triton-dir "$T/r6/tri"
expect 0 "cosign signature by trusted key" -- env CCPACK_COSIGN_IDENTITY=repository \
  "$CCPACK" pull "$R/cache:prod" -o prod.ccpack --plain-http --require-cosign --trust ec.pub
expect 2 "\\\$CCPACK_COSIGN_IDENTITY is 'any': expected exact or repository" -- env CCPACK_COSIGN_IDENTITY=any \
  "$CCPACK" pull "$R/cache:prod" -o prod2.ccpack --plain-http --require-cosign --trust ec.pub
# --as-image: the image is signed with the same keys, for its own tag.
expect 0 "pushed image $R/cache:img-image" -- "$CCPACK" push --plain-http --as-image --sign-key ci.key --cosign-key ec.key signed.ccpack "$R/cache:img"
check '[ "$($HELPERS verify "$PORT" cache img-image ec.pub)" = verified ]' "the image's ECDSA signature does not verify"
check '[ "$($HELPERS verify "$PORT" cache img-image ci.key.pub)" = verified ]' "the image's Ed25519 signature does not verify"
check '[ "$($HELPERS verify "$PORT" cache img-image other.key.pub)" = refused ]' "the image verified with another key"
# ... and by sigstore's own verifier, with each public key (the push again adds nothing and reports the digest).
expect 0 "" -- "$CCPACK" push --plain-http --json --as-image --sign-key ci.key --cosign-key ec.key signed.ccpack "$R/cache:img"
IMG=$(field 'j["image_digest"]')
if [ -d "$T/npm/node_modules/@sigstore/verify" ]; then
  imgverify() {  # imgverify I KEY: layer I of the image's signature manifest, by @sigstore/verify with KEY
    local sig
    sig=$($HELPERS layer "$PORT" cache "$IMG" "$1" "$T/ipayload-$1") &&
      node "$HERE/sigstore_verify.js" "$T/npm/node_modules" "$T/$2" "$T/ipayload-$1" "$sig"
  }
  check '[ "$(imgverify 0 ci.key.pub)" = verified ]' "@sigstore/verify refused the image's Ed25519 signature: $(imgverify 0 ci.key.pub)"
  check '[ "$(imgverify 1 ec.pub)" = verified ]' "@sigstore/verify refused the image's ECDSA signature: $(imgverify 1 ec.pub)"
elif section sigverify; then  # (a run of other parts only has no npm folder: nothing to skip)
  skip "@sigstore/verify of the image" "node or npm is not installed"
fi
fi
# defence: push-sign-first (the signature cannot be written: the tag does not move)
if section full; then
expect 0 "" -- "$CCPACK" create -o full.ccpack --triton-dir "$SAMPLE/triton_cache"
G=$(push_bare full-0 full.ccpack)
$HELPERS fill "$PORT" cache "$G" 1000
expect 1 "signature manifest ${G/:/-}\.sig is full \(1000 signatures\)" -- \
  "$CCPACK" push --plain-http --allow-unsigned --cosign-key ec.key full.ccpack "$R/cache:full-1"
check '[ "$(curl -s -o /dev/null -w "%{http_code}" --max-time 10 -H "Accept: application/vnd.oci.image.manifest.v1+json" "http://$R/v2/cache/manifests/full-1")" = 404 ]' \
  "a push whose signature failed moved the tag"
fi
finish
