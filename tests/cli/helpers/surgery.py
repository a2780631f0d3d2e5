#!/usr/bin/env python3
"""Byte surgery on .ccpack archives for signing_test.sh: edits the header the way an attacker could, then fixes
up the sizes (and, where asked, the manifest SHA-256) so that only the check under test can catch the change.

Layout (docs/FORMAT.md): u32 skippable magic, u32 N, 8 magic, u32 version, u32 flags, u64 P, 32 SHA-256(manifest),
u32 M, manifest, u32 S, signature block, payload (P bytes).

  surgery.py block ARCHIVE                    print the signature block
  surgery.py payload ARCHIVE                  print the payload
  surgery.py set-block ARCHIVE OUT BYTES      replace the signature block (N fixed up)
  surgery.py manifest-byte ARCHIVE OUT TEXT   change the byte after TEXT in the manifest (SHA-256 fixed up)
  surgery.py payload-byte ARCHIVE OUT         flip one byte in the middle of the payload
  surgery.py splice A B OUT [--fix-size]      header of A, payload of B (--fix-size: P set to B's payload)
"""
import hashlib
import struct
import sys


def split(path):
    data = open(path, "rb").read()
    n = struct.unpack_from("<I", data, 4)[0]
    m = struct.unpack_from("<I", data, 64)[0]
    manifest = data[68:68 + m]
    s = struct.unpack_from("<I", data, 68 + m)[0]
    block = data[72 + m:72 + m + s]
    assert 8 + n == 72 + m + s, "header sizes do not add up"
    return data[8:32], manifest, block, data[8 + n:]


def write(out, fixed, sha, manifest, block, payload):
    body = bytes(fixed) + sha + struct.pack("<I", len(manifest)) + manifest + struct.pack("<I", len(block)) + block
    open(out, "wb").write(struct.pack("<II", 0x184D2A5E, len(body)) + body + payload)


def old_sha(path):
    return open(path, "rb").read()[32:64]


def main(argv):
    cmd = argv[1]
    if cmd == "block":
        sys.stdout.buffer.write(split(argv[2])[2])
    elif cmd == "payload":
        sys.stdout.buffer.write(split(argv[2])[3])
    elif cmd == "set-block":
        fixed, manifest, _, payload = split(argv[2])
        write(argv[3], fixed, old_sha(argv[2]), manifest, argv[4].encode(), payload)
    elif cmd == "manifest-byte":
        fixed, manifest, block, payload = split(argv[2])
        at = manifest.index(argv[4].encode()) + len(argv[4])
        changed = manifest[:at] + bytes([manifest[at] ^ 1]) + manifest[at + 1:]
        write(argv[3], fixed, hashlib.sha256(changed).digest(), changed, block, payload)
    elif cmd == "payload-byte":
        fixed, manifest, block, payload = split(argv[2])
        at = len(payload) // 2
        payload = payload[:at] + bytes([payload[at] ^ 0x55]) + payload[at + 1:]
        write(argv[3], fixed, old_sha(argv[2]), manifest, block, payload)
    elif cmd == "splice":
        fixed, manifest, block, _ = split(argv[2])
        payload = split(argv[3])[3]
        if len(argv) > 5 and argv[5] == "--fix-size":
            fixed = bytearray(fixed)
            struct.pack_into("<Q", fixed, 16, len(payload))
        write(argv[4], fixed, old_sha(argv[2]), manifest, block, payload)
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main(sys.argv)
