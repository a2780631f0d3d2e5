#!/usr/bin/env python3
"""Builds ccpack's wheel from the portable package tree (the unpacked .tar.gz: bin/ccpack, lib/ccpack/*.so*) and
the Python front end (python/ccpack), with the standard library only, offline.

The wheel holds no C extension, so one wheel serves every Python 3; its platform tag is manylinux_<glibc floor>_<arch>
(the floor scripts/ci/check-glibc-floor proves, read by CMake into wheel-metadata.json with the name, version,
summary, homepage and license). Inside it:
  ccpack/*.py, ccpack/py.typed          the API and `python -m ccpack` (python/ccpack)
  ccpack/_bin/bin/ccpack                the binary, byte for byte the package's (RUNPATH $ORIGIN/../lib/ccpack)
  ccpack/_bin/lib/ccpack/*              its bundled libraries
  ccpack-VERSION.dist-info/             METADATA, WHEEL, entry_points.txt (console script `ccpack`), RECORD
The same input gives the same bytes: entries sorted (dist-info last, RECORD last of all), every timestamp
1980-01-01 00:00:00, modes fixed (0755 for the binary, 0644 for the rest), deflate at level 9. RECORD lists every
other file with its SHA-256 (urlsafe base64, no padding) and size. The wheel is written to a temporary name and
renamed, so a failed build leaves no half-written wheel.
Usage: make-wheel.py --package DIR --metadata wheel-metadata.json --python-src python/ccpack --out DIST
       [--readme FILE]; prints the wheel's path.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import re
import stat
import sys
import zipfile
from pathlib import Path
from typing import Dict, List, Tuple

EPOCH = (1980, 1, 1, 0, 0, 0)  # the earliest time a zip entry can hold
Entry = Tuple[bytes, int]  # contents, mode


def fail(message: str) -> None:
    print(f"make-wheel: error: {message}", file=sys.stderr)
    sys.exit(1)


def platform_tag(meta: Dict[str, str]) -> str:
    floor, arch = meta["glibc_floor"], meta["arch"]
    if not re.fullmatch(r"[0-9]+\.[0-9]+", floor):
        fail(f"glibc_floor '{floor}' in the metadata is not MAJOR.MINOR")
    if not re.fullmatch(r"[a-z0-9_]+", arch):
        fail(f"arch '{arch}' in the metadata is not a machine name")
    return f"manylinux_{floor.replace('.', '_')}_{arch}"


def read_tree(root: Path, prefix: str, executable: bool = False) -> Dict[str, Entry]:
    """Every regular file under root, named prefix/relative-path; a link or special file is an error."""
    entries: Dict[str, Entry] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if "__pycache__" in path.parts or path.suffix == ".pyc":
            continue
        st = path.lstat()
        if stat.S_ISDIR(st.st_mode):
            continue
        if not stat.S_ISREG(st.st_mode):
            fail(f"'{path}' is not a regular file (a wheel holds files only)")
        entries[f"{prefix}/{rel}"] = (path.read_bytes(), 0o755 if executable else 0o644)
    return entries


def payload(package: Path, python_src: Path) -> Dict[str, Entry]:
    binary = package / "bin" / "ccpack"
    if not binary.is_file():
        fail(f"no binary at '{binary}' (pass the unpacked package folder)")
    if not (python_src / "__init__.py").is_file():
        fail(f"no __init__.py in '{python_src}'")
    entries = read_tree(python_src, "ccpack")
    entries["ccpack/_bin/bin/ccpack"] = (binary.read_bytes(), 0o755)
    if (package / "lib" / "ccpack").is_dir():
        entries.update(read_tree(package / "lib" / "ccpack", "ccpack/_bin/lib/ccpack"))
    return entries


def metadata_text(meta: Dict[str, str], readme: str) -> str:
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {meta['name']}",
        f"Version: {meta['version']}",
        f"Summary: {meta['summary']}",
        f"Home-page: {meta['homepage']}",
        f"License: {meta['license']}",
        f"Project-URL: Homepage, {meta['homepage']}",
        "Classifier: Environment :: Console",
        "Classifier: Operating System :: POSIX :: Linux",
        "Classifier: Programming Language :: Python :: 3",
        "Classifier: Topic :: Scientific/Engineering :: Artificial Intelligence",
        "Requires-Python: >=3.8",
    ]
    if readme:
        lines.append("Description-Content-Type: text/markdown")
    return "\n".join(lines) + "\n\n" + readme


def dist_info(meta: Dict[str, str], tag: str, readme: str) -> Dict[str, Entry]:
    info = f"{meta['name']}-{meta['version']}.dist-info"
    wheel = f"Wheel-Version: 1.0\nGenerator: ccpack make-wheel.py\nRoot-Is-Purelib: false\nTag: py3-none-{tag}\n"
    return {
        f"{info}/METADATA": (metadata_text(meta, readme).encode(), 0o644),
        f"{info}/WHEEL": (wheel.encode(), 0o644),
        f"{info}/entry_points.txt": (b"[console_scripts]\nccpack = ccpack.__main__:main\n", 0o644),
        f"{info}/top_level.txt": (b"ccpack\n", 0o644),
    }


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}\n"


def write_wheel(path: Path, files: Dict[str, Entry], record_name: str) -> None:
    # Package files sorted, then the dist-info files sorted, then RECORD (listing all of them and itself unhashed).
    names = sorted(files, key=lambda n: (".dist-info/" in n, n))
    for name in names:
        if "," in name or "\n" in name:
            fail(f"file name {name!r} cannot be written in RECORD")
    record = "".join(record_line(n, files[n][0]) for n in names) + f"{record_name},,\n"
    ordered: List[Tuple[str, Entry]] = [(n, files[n]) for n in names] + [(record_name, (record.encode(), 0o644))]
    tmp = path.with_name(path.name + ".tmp")
    with zipfile.ZipFile(tmp, "w") as zf:
        for name, (data, mode) in ordered:
            zi = zipfile.ZipInfo(name, date_time=EPOCH)
            zi.create_system = 3  # Unix, so the mode below is read
            zi.external_attr = (stat.S_IFREG | mode) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(zi, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
    os.replace(tmp, path)


def main() -> None:
    ap = argparse.ArgumentParser(description="Build ccpack's wheel from the portable package tree.")
    ap.add_argument("--package", type=Path, required=True, help="the unpacked package: bin/ccpack, lib/ccpack/")
    ap.add_argument("--metadata", type=Path, required=True, help="wheel-metadata.json from the CMake build folder")
    ap.add_argument("--python-src", type=Path, required=True, help="the Python package folder (python/ccpack)")
    ap.add_argument("--readme", type=Path, help="the long description (Markdown)")
    ap.add_argument("--out", type=Path, required=True, help="folder to write the wheel into")
    args = ap.parse_args()
    meta = json.loads(args.metadata.read_text())
    for key in ("name", "version", "summary", "homepage", "license", "glibc_floor", "arch"):
        if not isinstance(meta.get(key), str) or not meta[key]:
            fail(f"'{args.metadata}': field '{key}' is missing or empty")
    tag = platform_tag(meta)
    readme = args.readme.read_text() if args.readme else ""
    files = payload(args.package, args.python_src)
    files.update(dist_info(meta, tag, readme))
    args.out.mkdir(parents=True, exist_ok=True)
    wheel = args.out / f"{meta['name']}-{meta['version']}-py3-none-{tag}.whl"
    write_wheel(wheel, files, f"{meta['name']}-{meta['version']}.dist-info/RECORD")
    print(wheel)


if __name__ == "__main__":
    main()
