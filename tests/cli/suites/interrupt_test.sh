#!/usr/bin/env bash
# Interrupt suite: a restore stopped by SIGTERM (Kubernetes stopping a pod) or SIGINT (Ctrl-C) while it extracts
# leaves the cache folder exactly as it was, removes its staging folder, says "interrupted, nothing changed" on one
# line and exits 143 or 130. The archive is large enough (384 MB of incompressible files, one thread) that the
# signal lands while the staging folder exists; the process is stopped (SIGSTOP) the moment that folder appears,
# signalled, then continued, so the signal cannot come after the swap.
# Usage: interrupt_test.sh PATH/TO/ccpack PATH/TO/tests/data
set -u
SUITE=interrupt
. "$(dirname "${BASH_SOURCE[0]}")/../helpers/harness.sh"
suite_paths "$@"
isolate
unset CCPACK_ALLOW_UNSIGNED CCPACK_SIGNING_KEY

trust_ci_key
mkdir -p "$T/big/x"
for i in $(seq 96); do head -c 4000000 /dev/urandom >"$T/big/x/f$i.bin"; done
"$CCPACK" create -q -o "$T/big.ccpack" --inductor-dir "$T/big" --sign-key "$T/ci.key"
rm -rf "$T/big"
"$CCPACK" create -q -o "$T/small.ccpack" --inductor-dir "$SAMPLE/inductor_cache" --sign-key "$T/ci.key"

# The folder as a pod finds it: the previous archive restored.
D="$T/cache"
"$CCPACK" restore -q "$T/small.ccpack" --inductor-dir "$D/ind"
snap "$D/ind" >"$T/before"

# interrupt SIGNAL CODE: restore the big archive over $D/ind, signalled once its staging folder exists.
interrupt() {
  local sig=$1 code=$2 pid rc seen=0 until=$((SECONDS + 120))
  "$CCPACK" restore -j 1 "$T/big.ccpack" --inductor-dir "$D/ind" >"$T/out" 2>"$T/err" &
  pid=$!
  while [ "$SECONDS" -lt "$until" ]; do
    compgen -G "$D/.ind.ccpack-staging.*" >/dev/null && { seen=1; break; }
    kill -0 "$pid" 2>/dev/null || break
  done
  kill -STOP "$pid" 2>/dev/null
  [ "$seen" = 1 ] && ok || bad "$sig: the staging folder never appeared before the restore ended"
  kill "-$sig" "$pid" 2>/dev/null
  kill -CONT "$pid" 2>/dev/null
  wait "$pid"
  rc=$?
  [ "$rc" -eq "$code" ] && ok || bad "$sig mid-restore: exit $rc, expected $code; stderr: $(cat "$T/err")"
  [ "$(cat "$T/err")" = "ccpack: error: interrupted, nothing changed ($sig)" ] && ok || bad "$sig mid-restore said: $(cat "$T/err")"
  [ -z "$(ls -A "$D" | grep -v '^ind$')" ] && ok || bad "$sig mid-restore left: $(ls -A "$D")"
  snap "$D/ind" | cmp -s - "$T/before" && ok || bad "$sig mid-restore changed the folder"
}
interrupt SIGTERM 143
interrupt SIGINT 130

# Not interrupted, the same restore completes (the archive is sound; the signals above made the difference).
expect 0 "inductor: restored" -- "$CCPACK" restore "$T/big.ccpack" --inductor-dir "$D/ind"
[ "$(find "$D/ind" -name 'f*.bin' | wc -l)" -eq 96 ] && ok || bad "the uninterrupted restore did not restore the files"

finish
