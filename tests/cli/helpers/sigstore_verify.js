// sigstore's own verifier (@sigstore/verify, pinned by tests/cli/suites/cosign_test.sh) on a cosign signature that ccpack
// wrote: the layer's payload and its dev.cosignproject.cosign/signature annotation, put into a key-based sigstore
// bundle (messageSignature, no transparency-log entry, the tlog threshold 0) and verified against the public key.
// It proves that the signature bytes are what sigstore's verifiers take for the key type (Ed25519 over the payload,
// ECDSA P-256 DER over its SHA-256), independently of ccpack's own check.
// Usage: node sigstore_verify.js NODE_MODULES PUBLIC_KEY.pem PAYLOAD_FILE SIGNATURE_BASE64
// Prints "verified" and exits 0, or prints the verifier's error and exits 1.
'use strict';
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');

const [modules, keyFile, payloadFile, signature] = process.argv.slice(2);
const { bundleFromJSON } = require(path.join(modules, '@sigstore/bundle'));
const { Verifier, toSignedEntity, toTrustMaterial } = require(path.join(modules, '@sigstore/verify'));

const payload = fs.readFileSync(payloadFile);
const bundle = bundleFromJSON({
  mediaType: 'application/vnd.dev.sigstore.bundle+json;version=0.2',
  verificationMaterial: { publicKey: { hint: 'ccpack' }, tlogEntries: [], timestampVerificationData: { rfc3161Timestamps: [] } },
  messageSignature: {
    messageDigest: { algorithm: 'SHA2_256', digest: crypto.createHash('sha256').update(payload).digest('base64') },
    signature,
  },
});
const key = crypto.createPublicKey(fs.readFileSync(keyFile));
const trust = toTrustMaterial(
  { mediaType: '', tlogs: [], ctlogs: [], certificateAuthorities: [], timestampAuthorities: [] },
  (hint) => ({ publicKey: key, validFor: () => true }));
try {
  new Verifier(trust, { tlogThreshold: 0, ctlogThreshold: 0, tsaThreshold: 0 }).verify(toSignedEntity(bundle, payload));
  console.log('verified');
} catch (e) {
  console.log(`${e.code || 'error'}: ${e.message}`);
  process.exit(1);
}
