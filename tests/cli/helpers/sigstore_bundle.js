// cosign 3's bundle form, from sigstore's own JavaScript libraries (pinned by tests/cli/suites/cosign3_test.sh), against a
// registry on 127.0.0.1 without the referrers API: the referrers of a manifest are read from the OCI 1.1 fallback
// tag sha256-<hex>, as cosign 3 reads them there.
//
//   verify MODULES BASE REPO DIGEST PUBLIC_KEY.pem
//     each bundle referrer of DIGEST (the fallback index's entries of artifactType bundle v0.3), checked by
//     @sigstore/verify with the key (no transparency log: thresholds 0), then its statement: in-toto v1, predicate
//     type cosign's, a subject with DIGEST. Prints one line per bundle, "verified" or the error.
//   push MODULES BASE REPO DIGEST PRIVATE_KEY.pem NAME [TAMPER]
//     a statement for DIGEST named NAME, signed by @sigstore/sign's DSSE bundler with the key (its Signer
//     interface, key-based), pushed as cosign 3 pushes it: the bundle blob, the referrer manifest (subject = the
//     manifest), then the fallback index with the entry added (entries there kept). TAMPER changes the bundle after
//     signing: "payload" (a statement byte), "payload-type", "unpadded" (the signature's base64). Prints the
//     referrer manifest's digest.
// Exits 1 with the error on anything unexpected.
'use strict';
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');

const BUNDLE_TYPE = 'application/vnd.dev.sigstore.bundle.v0.3+json';
const PREDICATE = 'https://sigstore.dev/cosign/sign/v1';
const INDEX_TYPE = 'application/vnd.oci.image.index.v1+json';
const MANIFEST_TYPE = 'application/vnd.oci.image.manifest.v1+json';
const EMPTY = '{}';

const [mode, modules, base, repo, digest, keyFile, name, tamper] = process.argv.slice(2);
const sha256 = (bytes) => 'sha256:' + crypto.createHash('sha256').update(bytes).digest('hex');
const fallbackTag = digest.replace(':', '-');

async function get(url, accept) {
  const r = await fetch(url, { headers: accept ? { Accept: accept } : {}, signal: AbortSignal.timeout(10000) });
  return { status: r.status, body: Buffer.from(await r.arrayBuffer()) };
}

async function put(url, body, type) {
  const r = await fetch(url, { method: 'PUT', body, headers: { 'Content-Type': type }, signal: AbortSignal.timeout(10000) });
  if (r.status !== 201) throw new Error(`PUT ${url}: HTTP ${r.status}`);
}

async function uploadBlob(bytes) {
  const d = sha256(bytes);
  const r = await fetch(`${base}/v2/${repo}/blobs/uploads/`, { method: 'POST', signal: AbortSignal.timeout(10000) });
  if (r.status !== 202) throw new Error(`POST upload: HTTP ${r.status}`);
  const location = new URL(r.headers.get('location'), base);
  location.searchParams.set('digest', d);
  await put(location.toString(), bytes, 'application/octet-stream');
  return d;
}

async function fallbackIndex() {
  const r = await get(`${base}/v2/${repo}/manifests/${fallbackTag}`, INDEX_TYPE);
  if (r.status === 404) return { schemaVersion: 2, mediaType: INDEX_TYPE, manifests: [] };
  if (r.status !== 200) throw new Error(`fallback tag: HTTP ${r.status}`);
  return JSON.parse(r.body);
}

async function verify() {
  const { bundleFromJSON } = require(path.join(modules, '@sigstore/bundle'));
  const { Verifier, toSignedEntity, toTrustMaterial } = require(path.join(modules, '@sigstore/verify'));
  const key = crypto.createPublicKey(fs.readFileSync(keyFile));
  const trust = toTrustMaterial(
    { mediaType: '', tlogs: [], ctlogs: [], certificateAuthorities: [], timestampAuthorities: [] },
    () => ({ publicKey: key, validFor: () => true }));
  const verifier = new Verifier(trust, { tlogThreshold: 0, ctlogThreshold: 0, tsaThreshold: 0 });
  const index = await fallbackIndex();
  for (const entry of index.manifests.filter((m) => m.artifactType === BUNDLE_TYPE)) {
    const manifest = JSON.parse((await get(`${base}/v2/${repo}/manifests/${entry.digest}`, MANIFEST_TYPE)).body);
    const layer = manifest.layers.find((l) => l.mediaType === BUNDLE_TYPE);
    const bytes = (await get(`${base}/v2/${repo}/blobs/${layer.digest}`)).body;
    try {
      if (manifest.subject.digest !== digest) throw new Error(`subject ${manifest.subject.digest}`);
      const bundle = bundleFromJSON(JSON.parse(bytes));
      verifier.verify(toSignedEntity(bundle));
      const statement = JSON.parse(bundle.content.dsseEnvelope.payload);
      if (statement._type !== 'https://in-toto.io/Statement/v1' || statement.predicateType !== PREDICATE) throw new Error('statement type');
      if (!statement.subject.some((s) => 'sha256:' + s.digest.sha256 === digest)) throw new Error('statement subject');
      console.log('verified');
    } catch (e) {
      console.log(`${e.code || 'error'}: ${e.message}`);
    }
  }
}

// A @sigstore/sign Signer over a PEM private key: Ed25519 signs the PAE itself, ECDSA its SHA-256 (DER).
function keySigner(pem) {
  const key = crypto.createPrivateKey(pem);
  const publicKey = crypto.createPublicKey(key).export({ type: 'spki', format: 'pem' });
  const hint = crypto.createHash('sha256').update(crypto.createPublicKey(key).export({ type: 'spki', format: 'der' })).digest('base64');
  const algorithm = key.asymmetricKeyType === 'ed25519' ? null : 'sha256';
  return { sign: async (data) => ({ signature: crypto.sign(algorithm, data, key), key: { $case: 'publicKey', publicKey, hint } }) };
}

function tampered(json) {
  const env = json.dsseEnvelope;
  if (tamper === 'payload') {
    const p = Buffer.from(env.payload, 'base64');
    p[p.length - 3] ^= 1;
    env.payload = p.toString('base64');
  } else if (tamper === 'payload-type') {
    env.payloadType = 'application/json';
  } else if (tamper === 'unpadded') {
    env.signatures[0].sig = env.signatures[0].sig.replace(/=+$/, '');
  } else if (tamper) {
    throw new Error(`unknown tamper ${tamper}`);
  }
  return json;
}

async function push() {
  const { DSSEBundleBuilder } = require(path.join(modules, '@sigstore/sign'));
  const { bundleToJSON } = require(path.join(modules, '@sigstore/bundle'));
  const statement = {
    _type: 'https://in-toto.io/Statement/v1',
    subject: [{ name, digest: { sha256: digest.slice(7) } }],
    predicateType: PREDICATE,
    predicate: {},
  };
  const builder = new DSSEBundleBuilder({ signer: keySigner(fs.readFileSync(keyFile)), witnesses: [], singleCertificate: true });
  const bundle = await builder.create({ data: Buffer.from(JSON.stringify(statement)), type: 'application/vnd.in-toto+json' });
  const bytes = Buffer.from(JSON.stringify(tampered(bundleToJSON(bundle))));
  const subject = await get(`${base}/v2/${repo}/manifests/${digest}`, MANIFEST_TYPE);
  if (subject.status !== 200) throw new Error(`subject: HTTP ${subject.status}`);
  const manifest = Buffer.from(JSON.stringify({
    schemaVersion: 2, mediaType: MANIFEST_TYPE, artifactType: BUNDLE_TYPE,
    config: { mediaType: 'application/vnd.oci.empty.v1+json', digest: await uploadBlob(Buffer.from(EMPTY)), size: EMPTY.length },
    layers: [{ mediaType: BUNDLE_TYPE, digest: await uploadBlob(bytes), size: bytes.length }],
    subject: { mediaType: MANIFEST_TYPE, digest, size: subject.body.length },
    annotations: { 'dev.sigstore.bundle.content': 'dsse-envelope', 'dev.sigstore.bundle.predicateType': PREDICATE },
  }));
  const manifestDigest = sha256(manifest);
  await put(`${base}/v2/${repo}/manifests/${manifestDigest}`, manifest, MANIFEST_TYPE);
  const index = await fallbackIndex();
  index.manifests.push({ mediaType: MANIFEST_TYPE, digest: manifestDigest, size: manifest.length, artifactType: BUNDLE_TYPE });
  await put(`${base}/v2/${repo}/manifests/${fallbackTag}`, Buffer.from(JSON.stringify(index)), INDEX_TYPE);
  console.log(manifestDigest);
}

(mode === 'verify' ? verify() : mode === 'push' ? push() : Promise.reject(new Error(`unknown mode ${mode}`))).catch((e) => {
  console.log(`error: ${e.message}`);
  process.exit(1);
});
