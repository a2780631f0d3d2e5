# The CLI suites' shared harness, sourced after setting SUITE: a scratch folder $T (removed when every check
# passed, kept and named when one failed), the pass/fail counters, ok/bad, and expect, which pins a command to its
# exact exit code and a stderr pattern, with exactly one "ccpack: error:" line on failure.
T=$(mktemp -d "${TMPDIR:-/tmp}/ccpack-$SUITE.XXXXXX")
pass=0
fail=0
skipped=0
trap 'if [ "$fail" -eq 0 ]; then rm -rf "$T"; else echo "kept $T"; fi' EXIT

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
# skip WHAT WHY: checks that cannot run here (a tool or a file system this machine lacks). With
# CCPACK_REQUIRE_FIXTURES=1 (CI, which has them all) that is a failure; elsewhere it is counted, and finish exits
# 77, which CTest reports as skipped (SKIP_RETURN_CODE): a suite that ran only in part never reports passed.
skip() {
  if [ "${CCPACK_REQUIRE_FIXTURES:-}" = 1 ]; then bad "$1: cannot run: $2 (CCPACK_REQUIRE_FIXTURES=1)"; return; fi
  skipped=$((skipped + 1))
  echo "SKIP: $1: $2"
}
# finish: the summary line; exit 1 when a check failed, 77 when one was skipped, else 0.
finish() {
  echo "$SUITE: $pass passed, $fail failed, $skipped skipped"
  [ "$fail" -eq 0 ] || exit 1
  [ "$skipped" -eq 0 ] || exit 77
  exit 0
}

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
