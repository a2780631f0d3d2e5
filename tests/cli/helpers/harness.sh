# The CLI suites' shared harness, sourced after setting SUITE: a scratch folder $T (removed when every check
# passed, kept and named when one failed), the pass/fail counters, ok/bad, and expect, which pins a command to its
# exact exit code and a stderr pattern, with exactly one "ccpack: error:" line on failure; and the setup that the
# suites which start servers or fake a machine share (PIDS, PY, isolate_home, forget_torch_settings, json_is, sha).
T=$(mktemp -d "${TMPDIR:-/tmp}/ccpack-$SUITE.XXXXXX")
pass=0
fail=0
skipped=0
# PIDS: processes a suite started in the background (PIDS="$PIDS $!"), servers mostly; on exit each is stopped by
# its PID and waited for before $T goes.
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done; for p in $PIDS; do wait "$p" 2>/dev/null; done
      if [ "$fail" -eq 0 ]; then rm -rf "$T"; else echo "kept $T"; fi' EXIT
# HERE: the folder of the suites' helpers, this file's (registry_helpers.py, fault_proxy.py). PY: Debian's Python
# where it is there (the helpers need its python3-cryptography and python3-jwt), else the python3 on PATH; a suite
# that fakes a Python environment may set its own.
HERE="$(dirname "$(realpath "${BASH_SOURCE[0]}")")"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

ok() { pass=$((pass + 1)); }
# With CCPACK_FAIL_FAST=1 (scripts/ci/check-defences, which needs one failure, not all of them) the first failure
# ends the suite: exit 1, the EXIT trap stopping its servers and keeping $T.
bad() {
  fail=$((fail + 1))
  echo "FAIL: $*"
  if [ "${CCPACK_FAIL_FAST:-}" = 1 ]; then exit 1; fi
}
# section PART: whether the part of the suite that follows runs (`if section PART; then ... fi`). Every part runs,
# unless $CCPACK_SECTIONS names parts of this suite (SUITE:PART, space-separated; scripts/ci/check-defences runs a
# defence's covering checks so): then only those, after the setup outside any part.
section() {
  case " ${CCPACK_SECTIONS:-} " in
    *" $SUITE:"*) [[ " $CCPACK_SECTIONS " == *" $SUITE:$1 "* ]] ;;
    *) return 0 ;;
  esac
}
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
# With EXPECT_LOG set, each passing command's output and errors are appended to that file (a suite searches it for
# what must never be printed: key bytes, secrets).
expect() {
  exit_and_stderr "$@" || return 0
  if [ "$1" -ne 0 ] && [ "$(grep -c 'ccpack: error:' "$T/err")" -ne 1 ]; then bad "${*:4} -> not exactly one error line"; return; fi
  [ -z "${EXPECT_LOG:-}" ] || cat "$T/out" "$T/err" >>"$EXPECT_LOG"
  ok
}

# tool_expect CODE PATTERN -- command...: as expect, for another tool (no "ccpack: error:" line to count).
tool_expect() {
  if exit_and_stderr "$@"; then ok; fi
}

# The checks expect and tool_expect share: runs the command (output in $T/out, $T/err), then the exit code and
# the stderr pattern; returns 1 after counting a failure.
exit_and_stderr() {
  local code=$1 pattern=$2
  shift 3
  "$@" >"$T/out" 2>"$T/err"
  local rc=$?
  if [ "$rc" -ne "$code" ]; then bad "$* -> exit $rc, expected $code; stderr: $(cat "$T/err")"; return 1; fi
  if [ -n "$pattern" ] && ! grep -Eq -- "$pattern" "$T/err"; then bad "$* -> stderr '$(cat "$T/err")' lacks /$pattern/"; return 1; fi
}

# isolate_home: HOME and TMPDIR inside $T, and none of the caller's registry credentials, registry mirrors or
# fingerprint override, so that only what the suite writes there is read.
isolate_home() {
  unset CCPACK_FINGERPRINT_FILE REGISTRY_AUTH_FILE DOCKER_CONFIG XDG_RUNTIME_DIR CONTAINERS_REGISTRIES_CONF
  export HOME="$T/home" TMPDIR="$T/tmp"
  mkdir -p "$HOME" "$TMPDIR"
}
# forget_torch_settings: none of the caller's torch and Triton settings (cache folders, TORCHINDUCTOR_* and TRITON_*
# that the fingerprint reads), its Python or its mismatch policy.
forget_torch_settings() {
  unset TORCHINDUCTOR_CACHE_DIR TRITON_CACHE_DIR TRITON_HOME CCPACK_PYTHON CCPACK_ON_MISMATCH TRITON_PTXAS_PATH WORLD_SIZE
  local v
  for v in $(env | sed -n 's/^\(TORCHINDUCTOR_[A-Z_]*\|TRITON_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
}
# json_is FILE EXPR: FILE is JSON and the Python expression EXPR holds of it (as j).
json_is() {
  if "$PY" -c "import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"; then ok; else bad "$1: not ($2): $(head -c 3000 "$1")"; fi
}
# sha FILE: its SHA-256, in hex.
sha() { sha256sum "$1" | cut -d' ' -f1; }
# start_plain_registry: Debian's docker-registry over plain HTTP on a free 127.0.0.1 port, storage in $T/reg, stopped
# by its PID at exit (PIDS); sets PORT. Waits at most 15 s for /v2/ to answer, else fails the suite.
start_plain_registry() {
  PORT=$("$PY" "$HERE/registry_helpers.py" free-port)
  mkdir -p "$T/reg/data"
  printf 'version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: 127.0.0.1:%s\n' \
    "$T/reg/data" "$PORT" >"$T/reg/config.yml"
  docker-registry serve "$T/reg/config.yml" >"$T/reg/log" 2>&1 &
  PIDS="$PIDS $!"
  for _ in $(seq 150); do curl -sf "http://127.0.0.1:$PORT/v2/" >/dev/null && break; sleep 0.1; done
  curl -sf "http://127.0.0.1:$PORT/v2/" >/dev/null || { echo "FAIL: docker-registry did not start: $(tail -3 "$T/reg/log")"; exit 1; }
}
