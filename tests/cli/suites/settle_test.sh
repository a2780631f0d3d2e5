#!/usr/bin/env bash
# `create --settle` and `status --max-compiled` without a GPU: a stand-in warm-up (settle_standin.py) writes Triton
# kernel folders, FX-graph entries and autotune results into the folders the variables name, fewer each run.
#   - it settles at the fixed point: the run count, each run's report line and --json, the manifest's "settle"
#     field (inspect, --json, the card), and the archive restored into other folders is byte for byte what the same
#     runs write there directly (relocation of the scratch folders' paths included);
#   - one that always adds a kernel stops at N, the archive marked not settled;
#   - a failing warm-up or settle run, a time limit, SIGINT and SIGTERM exit 6, 6, 6, 130, 143 and leave nothing:
#     no output, no scratch folder, the source folders as the warm-up left them;
#   - usage errors; status --max-compiled passes at N and fails (exit 7) below.
# Usage: settle_test.sh CCPACK
set -u
SUITE=settle
CCPACK=$1
. "$(dirname "${BASH_SOURCE[0]}")/../helpers/harness.sh"
isolate
export CCPACK_ALLOW_UNSIGNED=1
use_standin

src() { export TORCHINDUCTOR_CACHE_DIR="$T/$1/ind" TRITON_CACHE_DIR="$T/$1/tri"; }
kernels() { find "$1" -mindepth 1 -maxdepth 1 -type d | wc -l; }
# nothing_left NAME: no output archive and no scratch folder beside it.
nothing_left() {
  [ -z "$(ls -A "$T/arch")" ] && ok || bad "$1: left behind in the output folder: $(ls -A "$T/arch")"
}
# untouched DIR N: the source folder holds N kernel folders and nothing of ccpack's.
untouched() {
  [ "$(kernels "$1")" -eq "$2" ] && ok || bad "$1: $(kernels "$1") kernel folders, expected $2"
  [ -z "$(find "$1" -name '.ccpack-*')" ] && ok || bad "$1: ccpack files in the source folder: $(find "$1" -name '.ccpack-*')"
}

# --- converges: warm-up 4 kernels, runs compile 2, 1, 0 -------------------------------------------------------
if section converges; then
src conv
export STANDIN_MODE=converge
expect 0 "settle run 3: exit 0 in [0-9.]+ s; compiled 0 Triton kernels, 0 FX graphs, 0 autotune results, 0 other files" -- \
  "$CCPACK" create -o "$T/arch/s.ccpack" --settle -- python3 "$STANDIN"
grep -Eq "^ccpack: warm-up: exit 0 in [0-9.]+ s$" "$T/err" && ok || bad "warm-up line: $(cat "$T/err")"
grep -q "settle run 1: exit 0 in .* s; compiled 2 Triton kernels, 1 FX graph, 1 autotune result, 1 other file$" "$T/err" && ok || bad "run 1 line: $(cat "$T/err")"
grep -q "settle run 2: exit 0 in .* s; compiled 1 Triton kernel, 1 FX graph, 1 autotune result, 1 other file$" "$T/err" && ok || bad "run 2 line: $(cat "$T/err")"
grep -q "^ccpack: settled after 3 settle runs (fixed point: settle run 3 compiled no Triton kernel, FX graph or autotune result)$" "$T/err" && ok || bad "stop line: $(cat "$T/err")"
untouched "$T/conv/tri" 4
[ "$(ls -A "$T/arch")" = s.ccpack ] && ok || bad "output folder: $(ls -A "$T/arch")"
expect 0 "" -- "$CCPACK" inspect --json "$T/arch/s.ccpack"
json_is "$T/out" 'j["settled"] is True and {k: v for k, v in j["settle"].items() if k != "tuning"} == {"runs": 3, "settled": True, "stopped": "fixed-point", "last_run_compiled": {"triton_kernels": 0, "fx_graphs": 0, "autotune": 0, "other": 0}} and j["manifest"]["settle"] == j["settle"]'
# The tuned settings were set for the runs (tuned_test.sh checks what each run saw, the ptxas included).
json_is "$T/out" 'j["settle"]["tuning"]["applied"][:2] == ["TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE=0", "TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=0"] and j["settle"]["tuning"]["kept"] == []'
json_is "$T/out" '[c["source"] for c in j["manifest"]["components"]] == ["'"$T"'/conv/ind", "'"$T"'/conv/tri"] and [c["files"] for c in j["manifest"]["components"]] == [9, 21]'
expect 0 "" -- "$CCPACK" inspect "$T/arch/s.ccpack"
grep -q "^settle       settled after 3 settle runs (fixed point: the last compiled 0 Triton kernels, 0 FX graphs, 0 autotune results)$" "$T/out" && ok || bad "inspect: $(cat "$T/out")"
expect 0 "" -- "$CCPACK" inspect --card "$T/arch/s.ccpack"
grep -q "^- settled: settled after 3 settle runs" "$T/out" && ok || bad "card: $(grep settle "$T/out")"

# The archive restored into other folders is what the same three runs write there directly.
export TORCHINDUCTOR_CACHE_DIR="$T/pod/ind" TRITON_CACHE_DIR="$T/pod/tri"
for _ in 1 2 3; do python3 "$STANDIN" >/dev/null; done
mv "$T/pod" "$T/expected"
# A pod takes the archive's settings (ccpack env) before its restore, which judges them.
expect 0 "" -- "$CCPACK" env "$T/arch/s.ccpack"
eval "$(cat "$T/out")"
expect 0 "" -- "$CCPACK" restore -q "$T/arch/s.ccpack" --inductor-dir "$T/pod/ind" --triton-dir "$T/pod/tri"
diff -r -x '.ccpack-*' "$T/expected" "$T/pod" >"$T/diff" 2>&1 && ok || bad "restored settled archive differs: $(head -20 "$T/diff")"
# The gate: nothing compiled yet passes at 0; one more kernel passes at 1 and fails at 0 (exit 7).
expect 0 "" -- "$CCPACK" status --max-compiled 0
STANDIN_MODE=always python3 "$STANDIN" >/dev/null
expect 0 "" -- "$CCPACK" status --max-compiled 1
expect 7 "ccpack: error: 1 Triton kernel compiled since the restore, more than --max-compiled 0" -- "$CCPACK" status --max-compiled 0
grep -q "1 Triton kernel compiled here since the restore.*: triton_poi_fused_add_7$" "$T/out" && ok || bad "status names the kernel: $(cat "$T/out")"
expect 7 "" -- "$CCPACK" status --json --max-compiled 0
json_is "$T/out" 'j["ok"] is False and j["exit_code"] == 7'
expect 0 "" -- "$CCPACK" status --json
json_is "$T/out" 'j["triton_kernels_since_restore"] == 1 and j["max_compiled"] is None'
# A gate that is not a whole number from 0 to 2^63-1 is a usage error naming it, never a gate that passes everything.
for bad in -1 -9223372036854775809 9223372036854775808 "" 1.5 +3 0x10; do
  lit=$(printf '%s' "$bad" | sed 's/[.+]/\\&/g')
  expect 2 "ccpack: error: --max-compiled: '$lit' is not a whole number from 0 to 9223372036854775807\$" -- "$CCPACK" status --max-compiled "$bad"
done

forget_torch_settings  # the pod's settings (ccpack env) end with the pod
fi

# --- never converges: stops at N, marked not settled -----------------------------------------------------------
if section limit; then
src always
export STANDIN_MODE=always
expect 0 "not settled after 2 settle runs \(run limit --settle=2 reached: the last run still compiled 1 Triton kernel" -- \
  "$CCPACK" create -o "$T/arch/a.ccpack" --json --settle=2 -- python3 "$STANDIN"
json_is "$T/out" 'j["settle"]["settled"] is False and j["settle"]["stopped"] == "run-limit" and j["settle"]["runs"] == 2 and [r["compiled"] and r["compiled"]["triton_kernels"] for r in j["settle"]["run_reports"]] == [None, 1, 1] and [r["exit_code"] for r in j["settle"]["run_reports"]] == [0, 0, 0]'
expect 0 "" -- "$CCPACK" inspect "$T/arch/a.ccpack"
grep -q "^settle       NOT settled: stopped at the run limit after 2 settle runs (the last compiled 1 Triton kernels, 1 FX graphs, 1 autotune results)$" "$T/out" && ok || bad "inspect: $(cat "$T/out")"
rm -f "$T/arch/a.ccpack" "$T/arch/s.ccpack"

# A plain create says "not settled (not tried)" and records no field.
expect 0 "" -- "$CCPACK" create -q -o "$T/plain.ccpack"
expect 0 "" -- "$CCPACK" inspect --json "$T/plain.ccpack"
json_is "$T/out" 'j["settled"] is False and j["settle"] is None and "settle" not in j["manifest"]'
expect 0 "" -- "$CCPACK" inspect "$T/plain.ccpack"
grep -q "^settle       not settled (not tried: made without \`create --settle\`)$" "$T/out" && ok || bad "inspect plain: $(cat "$T/out")"
fi

# --- failures: nothing left behind -----------------------------------------------------------------------------
if section failures; then
export STANDIN_MODE=converge
src failwarm
STANDIN_FAIL_AT=0 expect 6 "ccpack: error: the warm-up of 'python3' exited 7; nothing written" -- \
  "$CCPACK" create -o "$T/arch/f.ccpack" --settle -- python3 "$STANDIN"
grep -Eq "^ccpack: warm-up: exit 7 in [0-9.]+ s$" "$T/err" && ok || bad "warm-up failure line: $(cat "$T/err")"
nothing_left "failing warm-up"
src failrun
STANDIN_FAIL_AT=4 expect 6 "ccpack: error: settle run 1 of 'python3' exited 7; nothing written" -- \
  "$CCPACK" create -o "$T/arch/f.ccpack" --settle -- python3 "$STANDIN"
nothing_left "failing settle run"
untouched "$T/failrun/tri" 4
src slow
start=$(date +%s)
STANDIN_SLEEP_AT=4 expect 6 "ccpack: error: settle run 1 ran past --settle-timeout 5 s and was killed; nothing written" -- \
  "$CCPACK" create -o "$T/arch/f.ccpack" --settle --settle-timeout 5 -- python3 "$STANDIN"
[ $(($(date +%s) - start)) -lt 30 ] && ok || bad "the time limit took $(($(date +%s) - start)) s"
grep -q "^SIGTERM$" "$STANDIN_STATE/signal" 2>/dev/null && ok || bad "the command did not get SIGTERM at the time limit"
nothing_left "time limit"
untouched "$T/slow/tri" 4
for sig in INT TERM; do
  src "sig$sig"
  rm -f "$STANDIN_STATE/ready" "$STANDIN_STATE/signal"
  STANDIN_SLEEP_AT=4 "$CCPACK" create -o "$T/arch/f.ccpack" --settle -- python3 "$STANDIN" >/dev/null 2>"$T/err" &
  pid=$!
  for _ in $(seq 1 200); do [ -e "$STANDIN_STATE/ready" ] && break; sleep 0.1; done
  kill -"$sig" "$pid"
  wait "$pid"
  rc=$?
  want=$([ "$sig" = INT ] && echo 130 || echo 143)
  [ "$rc" -eq "$want" ] && ok || bad "SIG$sig: exit $rc, expected $want; $(cat "$T/err")"
  grep -q "^ccpack: error: interrupted by SIG$sig; nothing written$" "$T/err" && ok || bad "SIG$sig line: $(cat "$T/err")"
  grep -q "^SIG$sig$" "$STANDIN_STATE/signal" 2>/dev/null && ok || bad "SIG$sig was not passed on to the command"
  nothing_left "SIG$sig"
  untouched "$T/sig$sig/tri" 4
done
fi

# --- nothing of a run outlives it: a daemon in its own session, and a SIGKILL of ccpack ------------------------
if section outlives; then
# alive PIDFILE: the process it names still runs (a zombie counts as gone).
alive() { local p; p=$(cat "$1" 2>/dev/null) && [ -n "$p" ] && kill -0 "$p" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null; }
# gone_within PIDFILE...: a hang guard, not a speed limit: waits up to 30 s in all for the processes to be gone (they
# end within a second of ccpack; without the defence they never do, and each second waited is the check's cost).
gone_within() { local f end=$((SECONDS + 30)); for f in "$@"; do while alive "$f" && [ "$SECONDS" -lt "$end" ]; do sleep 0.1; done; done; }
src daemon
export STANDIN_MODE=converge D="$T/daemon-state"
mkdir -p "$D"
# Each run starts a daemon (setsid: another session and group) that would write into the folders much later.
# (The commands are scripts: create takes no option-like word after --.)
cat >"$D/daemon-run.sh" <<EOS
setsid sh -c 'echo \$\$ >"$D/daemon.pid"; sleep 1000; touch "\$TRITON_CACHE_DIR/late"' &
exec python3 "$STANDIN"
EOS
cat >"$D/kill-run.sh" <<EOS
setsid sh -c 'echo \$\$ >"$D/orphan.pid"; exec sleep 1000' &
echo \$\$ >"$D/cmd.pid"
touch "$D/ready"
exec sleep 1000
EOS
expect 0 "settled after 3 settle runs" -- "$CCPACK" create -o "$T/arch/d.ccpack" --settle -- sh "$D/daemon-run.sh"
[ -s "$D/daemon.pid" ] && ! alive "$D/daemon.pid" && ok || bad "a daemon the run started in its own session outlived the run"
rm -f "$T/arch/d.ccpack"
# A SIGKILL of ccpack mid-run: the command and its daemon end with it, nothing writes afterwards.
mkdir -p "$T/killed"
"$CCPACK" create -o "$T/killed/k.ccpack" --settle -- sh "$D/kill-run.sh" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 600); do [ -e "$D/ready" ] && [ -s "$D/orphan.pid" ] && break; sleep 0.1; done
[ -e "$D/ready" ] && [ -s "$D/orphan.pid" ] && ok || bad "the settle command to kill did not start"
PIDS="$PIDS $(cat "$D/cmd.pid") $(cat "$D/orphan.pid")"  # stopped at exit should a check below fail
kill -9 "$pid"
wait "$pid" 2>/dev/null
gone_within "$D/cmd.pid" "$D/orphan.pid"
alive "$D/cmd.pid" && bad "the settle command outlived a SIGKILL of ccpack" || ok
alive "$D/orphan.pid" && bad "the settle command's daemon outlived a SIGKILL of ccpack" || ok
unset D STANDIN_MODE
fi

# --- usage ---------------------------------------------------------------------------------------------------
if section usage; then
expect 2 "--settle needs the warm-up command after --" -- "$CCPACK" create -o "$T/arch/u.ccpack" --settle
expect 2 "a command after -- is run only with --settle" -- "$CCPACK" create -o "$T/arch/u.ccpack" -- true
expect 2 "--settle packs the inductor and triton folders only" -- "$CCPACK" create -o "$T/arch/u.ccpack" --add x="$T" --settle -- true
expect 2 "--settle-timeout needs --settle" -- "$CCPACK" create -o "$T/arch/u.ccpack" --settle-timeout 3
expect 1 "cannot run the settle command 'no-such-command-x'" -- "$CCPACK" create -o "$T/arch/u.ccpack" --settle -- no-such-command-x
nothing_left "usage errors"
fi

finish
