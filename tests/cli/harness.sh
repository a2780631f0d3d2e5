# The CLI suites' shared harness, sourced after setting SUITE: a scratch folder $T (removed when every check
# passed, kept and named when one failed), the pass/fail counters, ok/bad, and expect, which pins a command to its
# exact exit code and a stderr pattern, with exactly one "ccpack: error:" line on failure.
T=$(mktemp -d "${TMPDIR:-/tmp}/ccpack-$SUITE.XXXXXX")
pass=0
fail=0
trap 'if [ "$fail" -eq 0 ]; then rm -rf "$T"; else echo "kept $T"; fi' EXIT

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# expect CODE PATTERN -- command...: exit code must be CODE and stderr must match PATTERN (grep -E), on one line.
expect() {
  local code=$1 pattern=$2
  shift 3
  "$@" >"$T/out" 2>"$T/err"
  local rc=$?
  if [ "$rc" -ne "$code" ]; then bad "$* -> exit $rc, expected $code; stderr: $(cat "$T/err")"; return; fi
  if [ -n "$pattern" ] && ! grep -Eq -- "$pattern" "$T/err"; then bad "$* -> stderr '$(cat "$T/err")' lacks /$pattern/"; return; fi
  if [ "$code" -ne 0 ] && [ "$(grep -c 'ccpack: error:' "$T/err")" -ne 1 ]; then bad "$* -> not exactly one error line"; return; fi
  ok
}
