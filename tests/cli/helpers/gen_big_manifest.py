#!/usr/bin/env python3
"""Writes an archive whose manifest lists N folder entries with paths of about L bytes, and no frames, to
measure what a hostile manifest costs a reader before any hash is checked (docs/SECURITY.md, "Resource
bounds"): the reader parses and checks every entry, then refuses the archive at the frames check (exit 4).

Usage: gen_big_manifest.py OUT N [L]   (measure: /usr/bin/time -f %M ccpack verify OUT)"""
import hashlib
import struct
import sys

out, n = sys.argv[1], int(sys.argv[2])
length = int(sys.argv[3]) if len(sys.argv) > 3 else 12
parts = ['{"format":1,"created_by":"gen_big_manifest","compression":{"codec":"zstd","level":1,"window_log":27},'
         '"fingerprint":{},"components":[{"name":"inductor","kind":"inductor","source":"/x","files":0,"bytes":0}],'
         '"tar_size":0,"frames":[],"entries":[{"path":"inductor","type":"dir","mode":"0755","frame":0}']
pad = "d" * max(0, length - len("inductor/") - 8)
for i in range(1, n):
    parts.append(',{"path":"inductor/%s%08x","type":"dir","mode":"0755","frame":0}' % (pad, i))
parts.append("]}")
manifest = "".join(parts).encode()
sigs = b"[]"
body = b"\x89CCPACK\n" + struct.pack("<IIQ", 1, 0, 0) + hashlib.sha256(manifest).digest()
body += struct.pack("<I", len(manifest)) + manifest + struct.pack("<I", len(sigs)) + sigs
with open(out, "wb") as f:
    f.write(struct.pack("<II", 0x184D2A5E, len(body)) + body)
print(f"{out}: {n} entries, manifest {len(manifest)} bytes")
