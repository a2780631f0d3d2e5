#!/usr/bin/env bash
# libcurl is loaded at run time (http/curl_loader.hpp), never linked: the binary's ldd lists no libcurl; where no
# libcurl loads ($CCPACK_LIBCURL naming a missing file stands in for a system without libcurl.so.4), push, pull and
# restore oci:// fail with exit 1 and the one line that says what to install, and create, verify, inspect,
# import, restore and --version work as before.
# Usage: libcurl_test.sh PATH/TO/ccpack PATH/TO/tests/data
set -u
SUITE=libcurl  # the shared harness: $T, ok, bad, expect
. "$(dirname "${BASH_SOURCE[0]}")/../helpers/harness.sh"
suite_paths "$@"
export CCPACK_ALLOW_UNSIGNED=1

if ldd "$CCPACK" | grep -q libcurl; then bad "ccpack links libcurl: $(ldd "$CCPACK" | grep libcurl)"; else ok; fi

MISSING="$T/nowhere/libcurl.so.4"
# The exact line: what needs libcurl, the loader's reason (naming the file), how to install it.
LINE="ccpack: error: push, pull and restore oci:// need libcurl.so.4, which cannot be loaded ($MISSING: cannot open shared object file: No such file or directory); install it (Debian/Ubuntu: apt-get install libcurl4; RHEL/Fedora: dnf install libcurl) or set \$CCPACK_LIBCURL to its path"
without() { env CCPACK_LIBCURL="$MISSING" "$@"; }

# --- everything but the registry commands runs without libcurl -------------------------------------------
expect 0 "" -- without "$CCPACK" create -q -o "$T/a.ccpack" "${DIRS[@]}"
expect 0 "" -- without "$CCPACK" verify -q "$T/a.ccpack"
expect 0 "" -- without "$CCPACK" inspect "$T/a.ccpack"
tar -C "$SAMPLE" -cf "$T/s.tar" inductor_cache triton_cache
expect 0 "" -- without "$CCPACK" import -q "$T/s.tar" -o "$T/i.ccpack"
expect 0 "" -- without "$CCPACK" restore -q "$T/a.ccpack" --inductor-dir "$T/r/ind" --triton-dir "$T/r/tri"
expect 0 "" -- without "$CCPACK" --version
grep -q "^  libcurl [0-9.]* (none found at run time: push, pull and restore oci:// need libcurl.so.4)$" "$T/out" && ok ||
  bad "--version without libcurl: $(cat "$T/out")"
expect 0 "" -- "$CCPACK" --version
grep -Eq "^  libcurl [0-9]+\.[0-9]+" "$T/out" && ! grep -q "none found" "$T/out" && ok || bad "--version with libcurl: $(cat "$T/out")"

# --- push, pull, restore oci://: exit 1, that one line, nothing else on stderr -------------------------------
exact() { expect_exact 1 "$LINE" -- without "$@"; }  # exact COMMAND...: exit 1 and stderr is exactly $LINE
# push refuses an unsigned archive before it needs libcurl: a signed one reaches the registry side.
make_key "$T/ci.key"
signed_copy "$T/a.ccpack" "$T/signed.ccpack" "$T/ci.key"
exact "$CCPACK" push "$T/signed.ccpack" 127.0.0.1:9/ccpack/cache:v1 --plain-http
exact "$CCPACK" pull 127.0.0.1:9/ccpack/cache:v1 -o "$T/p.ccpack" --plain-http
exact "$CCPACK" restore oci://127.0.0.1:9/ccpack/cache:v1 --plain-http --inductor-dir "$T/o/ind" --triton-dir "$T/o/tri"
absent "a command that could not load libcurl wrote something" "$T/p.ccpack" "$T/o"

# --- a library that is not libcurl: named, with what it lacks --------------------------------------------
NOT_CURL=$(ldd "$CCPACK" | awk '$1 == "libm.so.6" {print $3}')
if [ -n "$NOT_CURL" ]; then
  CCPACK_LIBCURL="$NOT_CURL" expect 1 "^ccpack: error: libcurl '$NOT_CURL' lacks curl_global_init \(libcurl 7\.62 or later is needed\)$" -- \
    "$CCPACK" pull 127.0.0.1:9/ccpack/cache:v1 -o "$T/p.ccpack" --plain-http
fi

finish
