#!/usr/bin/env python3
"""Helpers for tests/cli/suites/cosign_test.sh (Debian's python3-cryptography and python3-nacl).

  cosign-key PRIVATE.pem PASSFILE OUT    the unencrypted PKCS#8 key in cosign's encrypted private-key format
                                         ("ENCRYPTED COSIGN PRIVATE KEY": scrypt N=32768 r=8 p=1, then NaCl
                                         secretbox, as go-tuf's encrypted package), which skopeo's
                                         --sign-by-sigstore-private-key reads
  forge PORT REPO DIGEST KEY.pem [--ref R] [--signed-digest D] [--payload TEXT] [--annotation TEXT]
                                         writes a signature manifest sha256-<hex>.sig for DIGEST in REPO of the plain
                                         registry on 127.0.0.1:PORT, with one layer: the payload for (R, D) (or TEXT
                                         verbatim) signed with KEY (Ed25519, or ECDSA P-256 over SHA-256, DER), or
                                         the annotation TEXT instead of the signature
  forge ... [--unpadded]                  the signature annotation without its '=' padding
  add-foreign PORT REPO DIGEST           puts another signer's layer first in DIGEST's signature manifest (made
                                         when missing): a cosign payload signed by a key of its own, with a
                                         certificate and a 5.6 KB dev.sigstore.cosign/bundle annotation, as a keyless
                                         signature carries
  fill PORT REPO DIGEST N                DIGEST's signature manifest with N layers of an attestation media type
  verify PORT REPO TAG PUBLIC.pem        an independent check of TAG's cosign signature: some layer of the signature
                                         manifest of TAG's digest verifies with the key (DER or raw, padded base64),
                                         its payload names that digest and exactly REG/REPO:TAG; prints "verified"
                                         or "refused"
  layers PORT REPO DIGEST                prints the number of layers of DIGEST's signature manifest
  bundles PORT REPO DIGEST               prints the number of its layers with a dev.sigstore.cosign/bundle annotation
  layer PORT REPO DIGEST I PAYLOAD       writes layer I's payload to PAYLOAD and prints its signature annotation
"""
import base64
import hashlib
import json
import os
import sys
import urllib.error
import urllib.request

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519


def cosign_key(private_pem, passfile, out):
    import nacl.secret
    key = serialization.load_pem_private_key(open(private_pem, "rb").read(), password=None)
    der = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    password = open(passfile, "rb").read()
    salt = os.urandom(32)
    nonce = os.urandom(24)
    box_key = hashlib.scrypt(password, salt=salt, n=32768, r=8, p=1, maxmem=64 << 20, dklen=32)
    ciphertext = nacl.secret.SecretBox(box_key).encrypt(der, nonce).ciphertext
    doc = {"kdf": {"name": "scrypt", "params": {"N": 32768, "r": 8, "p": 1}, "salt": base64.b64encode(salt).decode()},
           "cipher": {"name": "nacl/secretbox", "nonce": base64.b64encode(nonce).decode()},
           "ciphertext": base64.b64encode(ciphertext).decode()}
    body = base64.encodebytes(json.dumps(doc).encode()).decode()
    with open(out, "w") as f:
        f.write("-----BEGIN ENCRYPTED COSIGN PRIVATE KEY-----\n" + body + "-----END ENCRYPTED COSIGN PRIVATE KEY-----\n")
    os.chmod(out, 0o600)


def sign(key_pem, payload):
    key = serialization.load_pem_private_key(open(key_pem, "rb").read(), password=None)
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return key.sign(payload)
    return key.sign(payload, ec.ECDSA(hashes.SHA256()))


def request(method, url, body=None, content_type=None):
    req = urllib.request.Request(url, data=body, method=method)
    if content_type:
        req.add_header("Content-Type", content_type)
    req.add_header("Accept", "application/vnd.oci.image.manifest.v1+json")
    with urllib.request.urlopen(req, timeout=20) as r:
        return r.read(), r.headers


def put_blob(base, data):
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    _, headers = request("POST", base + "/blobs/uploads/", b"")
    location = headers["Location"]
    if location.startswith("/"):
        location = base.split("/v2/")[0] + location
    sep = "&" if "?" in location else "?"
    request("PUT", location + sep + "digest=" + digest, data, "application/octet-stream")
    return digest


def forge(port, repo, digest, key_pem, args):
    opts = dict(zip(args[::2], args[1::2]))
    base = "http://127.0.0.1:%s/v2/%s" % (port, repo)
    if "--payload" in opts:
        payload = opts["--payload"].encode()
    else:
        payload = json.dumps({"critical": {"identity": {"docker-reference": opts["--ref"]},
                                           "image": {"docker-manifest-digest": opts.get("--signed-digest", digest)},
                                           "type": "cosign container image signature"},
                              "optional": None}, separators=(",", ":")).encode()
    annotation = opts.get("--annotation", base64.b64encode(sign(key_pem, payload)).decode())
    if opts.get("--unpadded") == "1":
        annotation = annotation.rstrip("=")
    layer = put_blob(base, payload)
    config = json.dumps({"architecture": "", "os": "", "config": {}, "rootfs": {"type": "layers", "diff_ids": [layer]}}).encode()
    config_digest = put_blob(base, config)
    manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": config_digest, "size": len(config)},
                "layers": [{"mediaType": "application/vnd.dev.cosign.simplesigning.v1+json", "digest": layer, "size": len(payload),
                            "annotations": {"dev.cosignproject.cosign/signature": annotation}}]}
    tag = digest.replace(":", "-") + ".sig"
    request("PUT", base + "/manifests/" + tag, json.dumps(manifest).encode(), "application/vnd.oci.image.manifest.v1+json")


def get_json(url):
    body, _ = request("GET", url)
    return json.loads(body)


def put_signature_manifest(base, digest, layers):
    config = json.dumps({"architecture": "", "os": "", "config": {},
                         "rootfs": {"type": "layers", "diff_ids": [l["digest"] for l in layers]}}).encode()
    config_digest = put_blob(base, config)
    manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": config_digest, "size": len(config)},
                "layers": layers}
    request("PUT", base + "/manifests/" + digest.replace(":", "-") + ".sig", json.dumps(manifest).encode(),
            "application/vnd.oci.image.manifest.v1+json")


def existing_layers(base, digest):
    try:
        return get_json(base + "/manifests/" + digest.replace(":", "-") + ".sig")["layers"]
    except urllib.error.HTTPError:
        return []


def add_foreign(port, repo, digest):
    base = "http://127.0.0.1:%s/v2/%s" % (port, repo)
    payload = json.dumps({"critical": {"identity": {"docker-reference": "127.0.0.1:%s/%s" % (port, repo)},
                                       "image": {"docker-manifest-digest": digest}, "type": "cosign container image signature"},
                          "optional": None}, separators=(",", ":")).encode()
    key = ec.generate_private_key(ec.SECP256R1())
    layer = {"mediaType": "application/vnd.dev.cosign.simplesigning.v1+json", "digest": put_blob(base, payload), "size": len(payload),
             "annotations": {"dev.cosignproject.cosign/signature": base64.b64encode(key.sign(payload, ec.ECDSA(hashes.SHA256()))).decode(),
                             "dev.sigstore.cosign/certificate": "-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----\n",
                             "dev.sigstore.cosign/bundle": json.dumps({"SignedEntryTimestamp": "A" * 5600, "Payload": {}})}}
    put_signature_manifest(base, digest, [layer] + existing_layers(base, digest))


def fill(port, repo, digest, n):
    base = "http://127.0.0.1:%s/v2/%s" % (port, repo)
    blob = b'{"predicate":{}}'
    layer = {"mediaType": "application/vnd.dsse.envelope.v1+json", "digest": put_blob(base, blob), "size": len(blob)}
    put_signature_manifest(base, digest, [layer] * int(n))


def verify(port, repo, tag, public_pem):
    base = "http://127.0.0.1:%s/v2/%s" % (port, repo)
    _, headers = request("GET", base + "/manifests/" + tag)
    digest = headers["Docker-Content-Digest"]
    key = serialization.load_pem_public_key(open(public_pem, "rb").read())
    for layer in existing_layers(base, digest):
        sig = layer.get("annotations", {}).get("dev.cosignproject.cosign/signature", "")
        try:
            raw = base64.b64decode(sig, validate=True)
        except ValueError:
            continue
        payload, _ = request("GET", base + "/blobs/" + layer["digest"])
        try:
            if isinstance(key, ed25519.Ed25519PublicKey):
                key.verify(raw, payload)
            else:
                key.verify(raw, payload, ec.ECDSA(hashes.SHA256()))
        except Exception:
            continue
        critical = json.loads(payload)["critical"]
        if (critical["image"]["docker-manifest-digest"] == digest and
                critical["identity"]["docker-reference"] == "127.0.0.1:%s/%s:%s" % (port, repo, tag)):
            print("verified")
            return
    print("refused")


def bundles(port, repo, digest):
    base = "http://127.0.0.1:%s/v2/%s" % (port, repo)
    print(sum(1 for l in existing_layers(base, digest) if "dev.sigstore.cosign/bundle" in l.get("annotations", {})))


def layers(port, repo, digest):
    body, _ = request("GET", "http://127.0.0.1:%s/v2/%s/manifests/%s" % (port, repo, digest.replace(":", "-") + ".sig"))
    print(len(json.loads(body)["layers"]))


def layer(port, repo, digest, index, out):
    base = "http://127.0.0.1:%s/v2/%s" % (port, repo)
    body, _ = request("GET", base + "/manifests/" + digest.replace(":", "-") + ".sig")
    desc = json.loads(body)["layers"][int(index)]
    payload, _ = request("GET", base + "/blobs/" + desc["digest"])
    open(out, "wb").write(payload)
    print(desc["annotations"]["dev.cosignproject.cosign/signature"])


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "cosign-key":
        cosign_key(*sys.argv[2:5])
    elif cmd == "forge":
        forge(*sys.argv[2:6], sys.argv[6:])
    elif cmd == "layer":
        layer(*sys.argv[2:7])
    elif cmd == "add-foreign":
        add_foreign(*sys.argv[2:5])
    elif cmd == "fill":
        fill(*sys.argv[2:6])
    elif cmd == "verify":
        verify(*sys.argv[2:6])
    elif cmd == "bundles":
        bundles(*sys.argv[2:5])
    elif cmd == "layers":
        layers(*sys.argv[2:5])
    else:
        sys.exit("unknown command " + cmd)
