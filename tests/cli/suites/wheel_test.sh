#!/usr/bin/env bash
# The wheel, built and installed as a user would: packaging/make-wheel.py builds it twice from the same
# package tree (byte-identical), its name carries the glibc floor scripts/ci/check-glibc-floor owns, its RECORD,
# METADATA and WHEEL are right, and the binary inside is the package's, byte for byte. Then `pip install
# --no-index` into a fresh venv puts `ccpack` on the venv's PATH, `python -m ccpack` runs the same binary, and the
# Python API suite (api_test.py) runs against the installed package, with nothing else on its path.
# Usage: wheel_test.sh PACKAGE SOURCE_DIR METADATA_JSON [WHEEL]
#   PACKAGE: the unpacked package folder (bin/ccpack, lib/ccpack/), or a ccpack binary to stage as one;
#   METADATA_JSON: wheel-metadata.json of the build; WHEEL: a wheel scripts/ci/package built, checked to be the one
#   make-wheel.py builds from PACKAGE.
set -u
SRC=$(realpath "$2")
META=$(realpath "$3")
WHEEL=${4:+$(realpath "$4")}
SUITE=wheel  # the shared harness: $T, ok, bad, expect
. "$(dirname "${BASH_SOURCE[0]}")/../helpers/harness.sh"
if [ -d "$1" ]; then
  PKG=$(realpath "$1")
else  # a development build's binary (shared system libraries): a package tree without lib/
  PKG="$T/pkg"
  mkdir -p "$PKG/bin" && strip -o "$PKG/bin/ccpack" "$1"  # stripped, as CPack strips the package
fi
# The real interpreter (not a pyenv shim), with venv and ensurepip.
real_python
build() {  # build OUT_DIR: prints the wheel's path
  "$PY" "$SRC/packaging/make-wheel.py" --package "$PKG" --metadata "$META" --python-src "$SRC/python/ccpack" \
    --readme "$SRC/README.md" --out "$1"
}

# --- the file ----------------------------------------------------------------------------------------------
W1=$(build "$T/one") && W2=$(build "$T/two") || { bad "make-wheel.py failed"; exit 1; }
cmp "$W1" "$W2" && ok || bad "two builds of the wheel differ"
[ -z "$WHEEL" ] || { cmp "$W1" "$WHEEL" && ok || bad "$WHEEL is not the wheel make-wheel.py builds from $PKG"; }
FLOOR=$(sed -n 's/^FLOOR=//p' "$SRC/scripts/ci/check-glibc-floor")
VERSION=$("$PKG/bin/ccpack" --version | sed -n '1s/^ccpack //p')
NAME="ccpack-$VERSION-py3-none-manylinux_${FLOOR//./_}_$(uname -m).whl"
[ "$(basename "$W1")" = "$NAME" ] && ok || bad "wheel named $(basename "$W1"), expected $NAME (glibc floor $FLOOR)"
if "$PY" - "$W1" "$PKG" "$META" "$VERSION" >"$T/zip.log" 2>&1 <<'PYEOF'
import base64, csv, hashlib, io, json, pathlib, stat, sys, zipfile
wheel, pkg, meta, version = sys.argv[1], pathlib.Path(sys.argv[2]), json.load(open(sys.argv[3])), sys.argv[4]
info = f"ccpack-{version}.dist-info"
z = zipfile.ZipFile(wheel)
names = z.namelist()
assert names[-1] == f"{info}/RECORD", names[-1]
assert len(names) == len(set(names)), "duplicate entries"
rows = list(csv.reader(io.StringIO(z.read(f"{info}/RECORD").decode())))
assert [r[0] for r in rows] == names, "RECORD does not list exactly the wheel's files, in order"
for name, digest, size in rows[:-1]:
    data = z.read(name)
    want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    assert digest == want and int(size) == len(data), f"RECORD row of {name} is wrong"
assert rows[-1] == [f"{info}/RECORD", "", ""], rows[-1]
for zi in z.infolist():
    assert zi.date_time == (1980, 1, 1, 0, 0, 0), f"{zi.filename}: timestamp {zi.date_time}"
    mode = zi.external_attr >> 16
    want = 0o100755 if zi.filename == "ccpack/_bin/bin/ccpack" else 0o100644
    assert mode == want, f"{zi.filename}: mode {oct(mode)}"
assert z.read("ccpack/_bin/bin/ccpack") == (pkg / "bin/ccpack").read_bytes(), "the binary differs from the package's"
libs = sorted(p.name for p in (pkg / "lib/ccpack").glob("*")) if (pkg / "lib/ccpack").is_dir() else []
assert sorted(n.rsplit("/", 1)[1] for n in names if n.startswith("ccpack/_bin/lib/ccpack/")) == libs, "bundled libraries"
for lib in libs:
    assert z.read(f"ccpack/_bin/lib/ccpack/{lib}") == (pkg / "lib/ccpack" / lib).read_bytes(), lib
assert not [n for n in names if n.endswith(".so") or ".cpython-" in n], "a C extension in the wheel"
md = z.read(f"{info}/METADATA").decode().split("\n\n", 1)[0].splitlines()
for line in ["Metadata-Version: 2.1", "Name: ccpack", f"Version: {version}", f"Summary: {meta['summary']}",
             f"Home-page: {meta['homepage']}", f"License: {meta['license']}", f"Project-URL: Homepage, {meta['homepage']}"]:
    assert line in md, f"METADATA lacks '{line}'"
tag = wheel.rsplit("-", 3)[-3:]
wh = z.read(f"{info}/WHEEL").decode().splitlines()
assert "Root-Is-Purelib: false" in wh and f"Tag: {'-'.join(tag)[:-len('.whl')]}" in wh, wh
assert "ccpack = ccpack.__main__:main" in z.read(f"{info}/entry_points.txt").decode()
PYEOF
then ok; else bad "wheel contents: $(cat "$T/zip.log")"; fi

# --- installed -----------------------------------------------------------------------------------------------
if ! "$PY" -m venv "$T/v" >"$T/venv.log" 2>&1; then bad "python3 -m venv failed: $(tail -3 "$T/venv.log")"; exit 1; fi
if "$T/v/bin/pip" install --no-index --no-cache-dir --disable-pip-version-check -q "$W1" >"$T/pip.log" 2>&1; then ok
else bad "pip install --no-index failed: $(cat "$T/pip.log")"; exit 1; fi
unset CCPACK_BINARY PYTHONPATH
want=$("$PKG/bin/ccpack" --version)
[ "$(PATH="$T/v/bin:$PATH" command -v ccpack)" = "$T/v/bin/ccpack" ] && ok || bad "ccpack is not on the venv's PATH"
[ "$(cd / && "$T/v/bin/ccpack" --version)" = "$want" ] && ok || bad "v/bin/ccpack --version: $("$T/v/bin/ccpack" --version 2>&1)"
[ "$(cd / && "$T/v/bin/python" -m ccpack --version)" = "$want" ] && ok || bad "python -m ccpack --version: $("$T/v/bin/python" -m ccpack --version 2>&1)"
expect 2 "^ccpack: error: unknown command 'creat'; did you mean 'create'\?$" -- "$T/v/bin/ccpack" creat
expect 2 "unknown command 'creat'" -- "$T/v/bin/python" -m ccpack creat
# The API runs the wheel's own binary, from anywhere.
where=$(cd / && "$T/v/bin/python" -c 'import ccpack; print(ccpack.binary())')
case "$where" in "$T/v/lib/"*/site-packages/ccpack/_bin/bin/ccpack) ok ;; *) bad "ccpack.binary() is $where" ;; esac
if (cd "$T" && "$T/v/bin/python" "$SRC/tests/cli/suites/api_test.py" "$SRC/tests/data") >"$T/api.log" 2>&1; then ok
else bad "the API suite against the installed wheel: $(tail -20 "$T/api.log")"; fi

echo "wheel: $(basename "$W1"), $(stat -c %s "$W1") bytes"
finish
