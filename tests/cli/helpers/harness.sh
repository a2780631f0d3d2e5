# The CLI suites' shared harness, sourced after setting SUITE: a scratch folder $T (removed when every check
# passed, kept and named when one failed), the pass/fail counters, ok/bad, and expect, which pins a command to its
# exact exit code and a stderr pattern, with exactly one "ccpack: error:" line on failure; and the setup the suites
# share: their arguments (suite_paths), a clean environment (isolate), keys (make_key, trust_ci_key), copies of the
# sample cache, a fake machine (fake_site, fake_python, gpu/nogpu), servers on 127.0.0.1 stopped by PID (spawn,
# start_registry), and checks of files and JSON (check, holds, absent, expect_exact, snap, json_is, field, sha).
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

# ok: counts a passed check.
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
# isolate: isolate_home and forget_torch_settings, the clean start of a suite that packs or restores caches.
isolate() { isolate_home; forget_torch_settings; }
# json_is FILE EXPR: FILE is JSON and the Python expression EXPR holds of it (as j).
json_is() {
  if "$PY" -c "import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"; then ok; else bad "$1: not ($2): $(head -c 3000 "$1")"; fi
}
# sha FILE: its SHA-256, in hex.
sha() { sha256sum "$1" | cut -d' ' -f1; }
# snap DIR: DIR's listing (paths, types, modes, sizes) and its files' SHA-256s, to compare before and after.
snap() { (cd "$1" && find . -printf '%p %y %m %s\n' | sort && find . -type f -exec sha256sum {} + | sort); }
# field EXPR [FILE]: prints the Python expression EXPR of FILE's JSON (as j; FILE is $T/out unless given).
field() { "$PY" -c "import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "${2:-$T/out}" "$1"; }
# manifest_sha ARCHIVE: prints the SHA-256 of ARCHIVE's manifest, as inspect --json reports it.
manifest_sha() { "$CCPACK" inspect --json "$1" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["manifest_sha256"])'; }
# header_size ARCHIVE: the size of ARCHIVE's header frame (a zstd skippable frame: 8 bytes and its 32-bit LE length).
header_size() { "$PY" -c 'import struct,sys; print(8 + struct.unpack_from("<I", open(sys.argv[1], "rb").read(8), 4)[0])' "$1"; }
# check CONDITION MESSAGE: the shell CONDITION (evaluated) holds, else a failure saying MESSAGE.
check() { if eval "$1"; then ok; else bad "$2"; fi; }
# holds MESSAGE COMMAND...: COMMAND succeeds, else a failure saying MESSAGE.
holds() { local what=$1; shift; if "$@"; then ok; else bad "$what"; fi; }
# absent MESSAGE PATH...: none of the PATHs exists (a refused command wrote nothing), else a failure saying MESSAGE.
absent() { local what=$1 p; shift; for p in "$@"; do [ ! -e "$p" ] || { bad "$what"; return; }; done; ok; }
# expect_exact CODE LINE -- command...: exit code must be CODE and stderr exactly LINE (stricter than expect's pattern).
expect_exact() {
  local line=$2
  exit_and_stderr "$1" "" -- "${@:4}" || return 0
  if [ "$(cat "$T/err")" != "$line" ]; then bad "${*:4} -> stderr '$(cat "$T/err")', expected exactly '$line'"; return; fi
  ok
}

# suite_paths CCPACK DATA [STUB]: those arguments, absolute; SAMPLE, tests/data's sample cache; DIRS, its folders as flags.
suite_paths() {
  CCPACK=$(realpath "$1")
  DATA=$(realpath "$2")
  SAMPLE="$DATA/sample-cache"
  DIRS=(--inductor-dir "$SAMPLE/inductor_cache" --triton-dir "$SAMPLE/triton_cache")
  [ $# -lt 3 ] || STUB=$(realpath "$3")
}
# copy_sample IND TRI: fresh copies (cp -r) of the sample cache's inductor and triton folders at IND and TRI.
copy_sample() {
  mkdir -p "$(dirname "$1")" "$(dirname "$2")" && cp -r "$SAMPLE/inductor_cache" "$1" && cp -r "$SAMPLE/triton_cache" "$2"
}
# real_python: PY becomes the interpreter behind python3 (its sys.executable: a real file, not a pyenv shim).
real_python() { PY=$(python3 -c 'import sys; print(sys.executable)'); }
# make_key FILE...: an Ed25519 key pair FILE and FILE.pub for each FILE (ccpack keygen, its output dropped).
make_key() { local f; for f in "$@"; do "$CCPACK" keygen -q --out "$f" >/dev/null; done; }
# ec_key KEY PUB: an ECDSA P-256 private key KEY (mode 0600) and its public key PUB, made by openssl.
ec_key() {
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null && chmod 600 "$1" &&
    openssl pkey -in "$1" -pubout -out "$2" 2>/dev/null
}
# cosign_keys: in the current folder, ci.key and other.key (Ed25519 pairs) and ec.key with ec.pub (ECDSA P-256).
cosign_keys() { make_key ci.key other.key && ec_key ec.key ec.pub; }
# trust_ci_key: a key pair $T/ci.key and $T/ci.key.pub, the only trusted key ($CCPACK_TRUSTED_KEYS); SIGN signs with it.
trust_ci_key() { make_key "$T/ci.key"; export CCPACK_TRUSTED_KEYS="$T/ci.key.pub"; SIGN=(--sign-key "$T/ci.key"); }
# signed_copy ARCHIVE COPY KEY: COPY is ARCHIVE signed with KEY (ccpack sign, its output dropped).
signed_copy() { cp "$1" "$2" && "$CCPACK" sign -q "$2" --sign-key "$3" 2>/dev/null; }

# use_standin: STANDIN, the stand-in warm-up (settle_standin.py), its state folder and $T/arch; none of its modes set.
use_standin() {
  STANDIN="$HERE/settle_standin.py"
  export STANDIN_STATE="$T/state"
  mkdir -p "$STANDIN_STATE" "$T/arch"
  unset STANDIN_MODE STANDIN_FAIL_AT STANDIN_SLEEP_AT STANDIN_ENVLOG STANDIN_EXIT
}

# dist SITE NAME-VERSION: the dist-info folder (with its METADATA) of a distribution installed in the fake site SITE.
dist() { mkdir -p "$1/$2.dist-info" && printf 'Metadata-Version: 2.1\nName: x\n' >"$1/$2.dist-info/METADATA"; }
# fake_site SITE: a site folder with torch 2.7.1+cu126 (CUDA 12.6) and triton 3.6.0 installed (dist-info, torch/version.py).
fake_site() {
  dist "$1" torch-2.7.1+cu126 && dist "$1" triton-3.6.0 && mkdir -p "$1/torch" &&
    printf "__version__ = '2.7.1+cu126'\ncuda = '12.6'\nhip = None\n" >"$1/torch/version.py"
}
# fake_python FILE PYTHONPATH [PYTHON]: an executable FILE that runs PYTHON (default $PY) with that PYTHONPATH.
fake_python() { printf '#!/bin/sh\nPYTHONPATH=%s exec %s "$@"\n' "$2" "${3:-$PY}" >"$1" && chmod 755 "$1"; }
# failing_nvidia_smi DIR: DIR/nvidia-smi fails as it does on a machine without the driver (one line, exit 9).
failing_nvidia_smi() {
  mkdir -p "$1" && printf '#!/bin/sh\necho "NVIDIA-SMI has failed" >&2\nexit 9\n' >"$1/nvidia-smi" && chmod 755 "$1/nvidia-smi"
}
# gpu COMMAND...: COMMAND on the fake H200 (the stub NVML library $STUB, 132 SMs).
gpu() { CCPACK_NVML_LIBRARY="$STUB" STUB_NVML_SMS=132 "$@"; }
# nogpu COMMAND...: COMMAND where no NVML library loads (a container that requests no GPU).
nogpu() { CCPACK_NVML_LIBRARY="$T/none/libnvidia-ml.so.1" "$@"; }

# skip_without TOOL...: the whole suite is skipped (skip, then finish) when one of the TOOLs is not installed.
skip_without() {
  local t
  for t in "$@"; do command -v "$t" >/dev/null || { skip "$SUITE suite" "$t is not installed"; finish; }; done
}
# require_tools TOOL...: the suite fails at once when one of the TOOLs is not installed (scripts/setup installs them).
require_tools() {
  local t
  for t in "$@"; do command -v "$t" >/dev/null || { bad "$t is missing (scripts/setup installs it)"; exit 1; }; done
}
# unprivileged WHAT: true with RUNNER, the prefix that runs a command as a user other than root (nobody, by setpriv,
# when this is root); false after skip WHAT where root has no setpriv.
unprivileged() {
  RUNNER=()
  if [ "$(id -u)" -ne 0 ]; then return 0; fi
  if command -v setpriv >/dev/null; then RUNNER=(setpriv --reuid=65534 --regid=65534 --clear-groups); return 0; fi
  skip "$1" "running as root without setpriv (util-linux) to drop to nobody"
  return 1
}

# spawn COMMAND...: COMMAND in the background, stopped by its PID at exit (PIDS).
spawn() { "$@" & PIDS="$PIDS $!"; }
# wait_for FILE: waits at most 10 s for FILE to be written (a helper server writes its port there), else fails the suite.
wait_for() {
  for _ in $(seq 100); do [ -s "$1" ] && return 0; sleep 0.1; done
  bad "nothing wrote $1"
  exit 1
}
# start_registry NAME SCHEME [EXTRA-YAML]: Debian's docker-registry on a free 127.0.0.1 port, in $T/reg-NAME (config,
# storage, access log), stopped by its PID at exit; EXTRA-YAML continues its http: section. Sets PORT_NAME and
# DIR_NAME. Asks /v2/ 150 times, 0.1 s apart and 2 s each at most, for 200 (or 401 behind auth), else fails the suite.
start_registry() {
  local name=$1 scheme=$2 extra=${3:-} port dir code=""
  port=$("$PY" "$HERE/registry_helpers.py" free-port)
  dir="$T/reg-$name"
  mkdir -p "$dir/data"
  printf 'version: 0.1\nlog:\n  level: info\n  formatter: text\nstorage:\n  filesystem:\n    rootdirectory: %s\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:%s\n  secret: ccpack-test\n%s\n' \
    "$dir/data" "$port" "$extra" >"$dir/config.yml"
  spawn docker-registry serve "$dir/config.yml" >"$dir/log" 2>&1
  for _ in $(seq 150); do
    code=$(curl -s -k --max-time 2 -o /dev/null -w '%{http_code}' "$scheme://127.0.0.1:$port/v2/" || true)
    [ "$code" = 200 ] || [ "$code" = 401 ] && break
    sleep 0.1
  done
  [ "$code" = 200 ] || [ "$code" = 401 ] || { bad "registry $name did not start: $(tail -3 "$dir/log")"; exit 1; }
  eval "PORT_$name=$port DIR_$name=$dir"
}
# start_plain_registry: start_registry plain http (no TLS, no auth); sets PORT too.
start_plain_registry() { start_registry plain http; PORT=$PORT_plain; }
