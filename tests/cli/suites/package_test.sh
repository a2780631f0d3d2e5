#!/usr/bin/env bash
# The conventions a packaged tool owes its users, checked against the binary itself: the bash completion names
# every subcommand and option that --help prints, --version names the libraries, the man page (when help2man
# built one) documents every subcommand, and the glibc floor check accepts the binary.
# Usage: package_test.sh PATH/TO/ccpack SOURCE_DIR [PATH/TO/ccpack.1.gz]
set -u
SUITE=package  # the shared harness: $T, ok, bad, skip, finish
. "$(dirname "${BASH_SOURCE[0]}")/../helpers/harness.sh"
CCPACK=$(realpath "$1")
SRC=$(realpath "$2")
MAN=${3:-}
COMPLETION="$SRC/packaging/completion/ccpack.bash"

# completion_words CMD...: what the completion offers after `ccpack CMD... -`, or after `ccpack ` when no CMD.
completion_words() {
  bash -c 'source "$1"; shift; COMP_WORDS=(ccpack "$@"); COMP_CWORD=$(($# + 0)); _ccpack; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$COMPLETION" "$@"
}

commands=$("$CCPACK" --help | sed -n '/^Subcommands:/,/^$/p' | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p')
[ -n "$commands" ] && ok || bad "no subcommands in --help"
offered=$(completion_words "")
for c in $commands; do
  grep -qx "$c" <<<"$offered" && ok || bad "completion does not offer subcommand $c"
  opts=$("$CCPACK" "$c" --help | sed -n '/^Options:/,$p' | grep -oE '^ +(-[a-zA-Z],)?--?[a-z][a-z-]*' | tr ',' '\n' | tr -d ' ')
  offered_opts=$(completion_words "$c" -)
  for o in $opts; do
    grep -qx -- "$o" <<<"$offered_opts" && ok || bad "completion of '$c' does not offer $o"
  done
done
for c in $(printf '%s\n' "$offered" | grep -v '^-'); do
  grep -qx "$c" <<<"$commands" && ok || bad "completion offers $c, which --help does not list"
done

version=$("$CCPACK" --version)
for lib in "ccpack [0-9]" "zstd [0-9]" "OpenSSL [0-9]" "oneTBB [0-9]" "libarchive [0-9]"; do
  grep -Eq "$lib" <<<"$version" && ok || bad "--version lacks $lib: $version"
done

if [ -n "$MAN" ]; then
  page=$(zcat "$MAN")
  for c in $commands; do grep -q "^\.SS \"ccpack $c\"" <<<"$page" && ok || bad "man page lacks ccpack $c"; done
  grep -q "Exit codes" <<<"$page" && ok || bad "man page lacks the exit codes"
else
  skip "the man page documents every subcommand" "no man page was built (help2man is missing)"
fi

"$SRC/scripts/ci/check-glibc-floor" "$CCPACK" >/dev/null && ok || bad "check-glibc-floor refuses $CCPACK"
# ... and refuses a binary that needs glibc 2.36 (arc4random), naming the symbol.
printf '#include <stdio.h>\n#include <stdlib.h>\nint main(void) { printf("%%u\\n", arc4random()); return 0; }\n' >"$T/new.c"
if cc "$T/new.c" -o "$T/new" 2>/dev/null; then
  "$SRC/scripts/ci/check-glibc-floor" "$T/new" >/dev/null 2>"$T/err"
  [ $? -eq 1 ] && grep -q "arc4random (GLIBC_2.36)" "$T/err" && ok || bad "check-glibc-floor accepts a binary needing glibc 2.36: $(cat "$T/err")"
else
  skip "check-glibc-floor refuses a binary needing glibc 2.36" "cc cannot build one here"
fi

finish
