#!/bin/bash
# Proof that the portable package runs on a machine it was not built on (the H200 machine: Ubuntu 24.04), with
# LD_LIBRARY_PATH unset and nothing carried but the unpacked .tar.gz:
#   1. ldd: every library is glibc's, libstdc++, libgcc_s, or one bundled in the package's lib/ccpack;
#   2. --version runs from another folder;
#   3. on a copy of a real cache, with a key made by keygen: signed create, verify, signed import of a tar of it
#      (same entries as create), wipe, restore (trusting only that key) into the same folders, compare every byte
#      and mode; a no-op restore;
#   4. push to a port where no registry listens: one clean error line, exit 1 (a connection error where libcurl.so.4
#      is installed, else the line that says to install it; libcurl is loaded at run time, never needed by 1-3),
#      and again with $CCPACK_LIBCURL naming a missing file (an image without libcurl): that install line.
# Usage: portable.sh [--libs-only] PKG_DIR [INDUCTOR_DIR TRITON_DIR]
#   PKG_DIR is the unpacked ccpack-*-linux-x86_64 folder. Without cache folders, a warm-up with step.py (beside
#   this script) makes one (about 4 minutes on an H200). Prints PASS/FAIL lines; exits 1 if any FAIL.
set -u
unset LD_LIBRARY_PATH
libs_only=0
[ "${1:-}" = --libs-only ] && { libs_only=1; shift; }
[ $# -ge 1 ] || { echo "usage: $0 [--libs-only] PKG_DIR [INDUCTOR_DIR TRITON_DIR]" >&2; exit 2; }
[ -x "$1/bin/ccpack" ] || { echo "$0: $1 is not an unpacked ccpack package (no bin/ccpack)" >&2; exit 2; }
PKG=$(cd "$1" && pwd)
BIN=$PKG/bin/ccpack
D=$(cd "$(dirname "$0")" && pwd)
fails=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

# 1. Libraries: glibc's own (libc, libm, ld-linux, and on older glibc libpthread/libdl/librt), the C++ runtime,
#    or a file inside the package.
libs=$(ldd "$BIN" 2>&1) || { echo "FAIL ldd $BIN: $libs"; exit 1; }
bad_libs=""
while read -r name arrow path _; do
  case $name in linux-vdso.so.*|*/ld-linux*|ld-linux*) continue ;; esac
  [ "$arrow" = "=>" ] || path=$name
  case $name in libc.so.6|libm.so.6|libpthread.so.0|libdl.so.2|librt.so.1|libstdc++.so.6|libgcc_s.so.1) continue ;; esac
  real=$(realpath -m "$path")
  [ "${real#"$PKG"/lib/ccpack/}" != "$real" ] && continue
  bad_libs="$bad_libs $name=>$path"
done <<<"$libs"
if [ -z "$bad_libs" ]; then pass "ldd: only glibc, libstdc++, libgcc_s and lib/ccpack"; else fail "ldd: unexpected libraries:$bad_libs"; fi
tbb=$(awk '$1 == "libtbb.so.12" {print $3}' <<<"$libs")
[ "$(realpath -m "$tbb")" = "$PKG/lib/ccpack/libtbb.so.12" ] && pass "libtbb.so.12 comes from the package" || fail "libtbb.so.12 is not the bundled one: $tbb"
grep -q "not found" <<<"$libs" && fail "ldd: missing libraries: $(grep 'not found' <<<"$libs")"
version=$(cd / && "$BIN" --version 2>&1) && pass "--version: $(echo "$version" | tr '\n' ' ')" || fail "--version: $version"
[ "$libs_only" -eq 1 ] && { [ "$fails" -eq 0 ] && exit 0 || exit 1; }

# 2. A real cache: the given folders, or one made by a warm-up.
W=${PORTABLE_WORK:-/tmp/ccpack-portable}
rm -rf "$W"; mkdir -p "$W"
if [ $# -ge 3 ]; then
  IND=$(cd "$2" && pwd); TRI=$(cd "$3" && pwd)
else
  echo "== warm-up (step.py cold)"
  IND=$W/warm/ind TRI=$W/warm/tri
  TORCHINDUCTOR_CACHE_DIR=$IND TRITON_CACHE_DIR=$TRI timeout 600 python3 "$D/step.py" cold 2>&1 | tail -1
fi
echo "cache: $(find "$IND" "$TRI" -type f | wc -l) files, $(du -sh "$IND" "$TRI" | awk '{print $1}' | tr '\n' ' ')"
mkdir -p "$W/build"; cp -a "$IND" "$W/build/ind"; cp -a "$TRI" "$W/build/tri"
export TORCHINDUCTOR_CACHE_DIR=$W/build/ind TRITON_CACHE_DIR=$W/build/tri
TIMEFORMAT="%R"
"$BIN" keygen -q --out "$W/k.key" >/dev/null && pass "keygen" || fail "keygen rc=$?"
unset CCPACK_ALLOW_UNSIGNED CCPACK_SIGNING_KEY CCPACK_TRUSTED_KEYS
t=$( { time "$BIN" create -q -o "$W/cache.ccpack" --sign-key "$W/k.key" 2>"$W/create.err"; } 2>&1 ); rc=$?
[ $rc -eq 0 ] && pass "create: ${t}s, $(stat -c %s "$W/cache.ccpack") bytes" || fail "create rc=$rc: $(cat "$W/create.err")"
"$BIN" verify -q "$W/cache.ccpack" --trust "$W/k.key.pub" && pass "verify" || fail "verify rc=$?"
# import: a plain tar of the same folders gives the same entries (and, where zstd is installed, the same tar stream).
tar -C "$W/build" -cf "$W/cache.tar" ind tri
t=$( { time "$BIN" import -q "$W/cache.tar" -o "$W/imported.ccpack" --map ind=inductor --map tri=triton --sign-key "$W/k.key" 2>"$W/import.err"; } 2>&1 ); rc=$?
[ $rc -eq 0 ] && pass "import: ${t}s" || fail "import rc=$rc: $(cat "$W/import.err")"
"$BIN" verify -q "$W/imported.ccpack" --trust "$W/k.key.pub" && pass "verify of the signed import" || fail "verify of the import rc=$?"
if diff <("$BIN" inspect --files "$W/cache.ccpack" | sed -n '/^entries/,$p') <("$BIN" inspect --files "$W/imported.ccpack" | sed -n '/^entries/,$p') >/dev/null; then
  pass "import: same entries as create"
else
  fail "import: entries differ from create's"
fi
if command -v zstd >/dev/null; then
  cmp -s <(zstd -q -dc "$W/cache.ccpack") <(zstd -q -dc "$W/imported.ccpack") && pass "import: same tar stream as create" || fail "import: tar stream differs from create's"
fi
rm -rf "$W/build" && pass "wipe"
t=$( { time "$BIN" restore -q "$W/cache.ccpack" --trust "$W/k.key.pub" 2>"$W/restore.err"; } 2>&1 ); rc=$?
[ $rc -eq 0 ] && pass "restore: ${t}s" || fail "restore rc=$rc: $(cat "$W/restore.err")"
t=$( { time "$BIN" restore -q "$W/cache.ccpack" --trust "$W/k.key.pub" 2>"$W/noop.err"; } 2>&1 ); rc=$?
[ $rc -eq 0 ] && pass "no-op restore: ${t}s" || fail "no-op restore rc=$rc: $(cat "$W/noop.err")"
# 3. Every file, folder, mode and byte as it was (the restore marker aside; Triton's __grp__ files name their
#    kernels by absolute path, and restore rewrites them for the folder restored into: checked below).
for pair in "$IND:$W/build/ind" "$TRI:$W/build/tri"; do
  a=${pair%%:*} b=${pair#*:}
  if diff <(cd "$a" && find . \( -path ./.ccpack-marker.json -o -path ./.ccpack-entries \) -prune -o -printf '%p %y %m\n' | sort) \
          <(cd "$b" && find . \( -path ./.ccpack-marker.json -o -path ./.ccpack-entries \) -prune -o -printf '%p %y %m\n' | sort) >/dev/null &&
     diff -r --exclude=.ccpack-marker.json --exclude=.ccpack-entries --exclude='__grp__*.json' "$a" "$b" >/dev/null &&
     python3 -c "import json,os,sys,glob
g=glob.glob(sys.argv[1]+'/**/__grp__*.json', recursive=True)
assert all(os.path.isfile(p) and p.startswith(sys.argv[1]+'/') for f in g for p in json.load(open(f))['child_paths'].values())" "$b"; then
    pass "compare $a = $b (group files point into $b)"
  else
    fail "compare: $a and $b differ"
  fi
done
# 4. push where no registry listens (port 9, discard): exit 1 and exactly one error line, whichever it is.
"$BIN" push "$W/cache.ccpack" 127.0.0.1:9/ccpack/portable:t --plain-http >/dev/null 2>"$W/push.err"; rc=$?
if [ $rc -eq 1 ] && [ "$(wc -l <"$W/push.err")" -eq 1 ] && grep -q "^ccpack: error: " "$W/push.err"; then
  pass "push without a registry: $(cat "$W/push.err")"
else
  fail "push without a registry: rc=$rc, stderr: $(cat "$W/push.err")"
fi
# ... and as in an image without libcurl ($CCPACK_LIBCURL naming a missing file): the line that says what to install.
CCPACK_LIBCURL=/nonexistent/libcurl.so.4 "$BIN" push "$W/cache.ccpack" 127.0.0.1:9/ccpack/portable:t --plain-http >/dev/null 2>"$W/push.err"; rc=$?
if [ $rc -eq 1 ] && [ "$(wc -l <"$W/push.err")" -eq 1 ] && grep -q "^ccpack: error: push, pull and restore oci:// need libcurl.so.4" "$W/push.err"; then
  pass "push without libcurl: $(cat "$W/push.err")"
else
  fail "push without libcurl: rc=$rc, stderr: $(cat "$W/push.err")"
fi
[ "$fails" -eq 0 ] && { echo "PASS portable: all checks"; exit 0; }
echo "FAIL portable: $fails checks failed"; exit 1
