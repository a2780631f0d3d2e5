#!/usr/bin/env bash
# Tuned by default, without a GPU: a fake Python environment (torch and Triton dist-info folders, each with a ptxas
# that prints its version) and the stand-in warm-up (settle_standin.py, which logs the arguments and settings each
# run got). Shows that:
#   - create --settle gives the warm-up and every settle run the tuned settings with none exported by the user
#     (torch's ptxas as the one TRITON_PTXAS_PATH), every word after -- reaching the command; the manifest records
#     them; a setting the user set is kept; --no-tuned-settings sets none; a plain create of an untuned cache says so;
#   - `ccpack env` prints the folders and settings, with the ptxas resolved to this machine's file of the recorded
#     version; names an archive may not hand out are refused;
#   - a pod without the settings gets exit 3 naming both variables with their values, and no --on-mismatch=force;
#   - `ccpack run` restores, gives the command the folders and settings, passes its exit code and a signal through,
#     runs nothing on a refusal unless --cold-on-failure asks (one line), and exits 127 for a missing command;
#   - TORCHINDUCTOR_COMPILE_THREADS on a pod never warns.
# Usage: tuned_test.sh CCPACK
set -u
SUITE=tuned
CCPACK=$1
. "$(dirname "${BASH_SOURCE[0]}")/../helpers/harness.sh"
isolate
export CCPACK_ALLOW_UNSIGNED=1
use_standin
export STANDIN_MODE=converge
mkdir -p "$T/bin"

# fakesite DIR: torch 2.11 (ptxas 13.0.77 in torch/bin) and Triton 3.6 (bundled ptxas 12.8.93).
fakesite() {
  local d=$1
  mkdir -p "$d/torch-2.11.0.dist-info" "$d/triton-3.6.0.dist-info" "$d/torch/bin" "$d/triton/backends/nvidia/bin"
  printf "__version__ = '2.11.0+cu130'\ncuda = '13.0'\nhip = None\n" >"$d/torch/version.py"
  printf '#!/bin/sh\necho "Cuda compilation tools, release 13.0, V13.0.77"\n' >"$d/torch/bin/ptxas"
  printf '#!/bin/sh\necho "Cuda compilation tools, release 12.8, V12.8.93"\n' >"$d/triton/backends/nvidia/bin/ptxas"
  chmod +x "$d/torch/bin/ptxas" "$d/triton/backends/nvidia/bin/ptxas"
}
fakesite "$T/build-site"
fakesite "$T/pod-site"
fake_python "$T/bin/py-build" "$T/build-site"
fake_python "$T/bin/py-pod" "$T/pod-site"
BUILD_PTXAS="$T/build-site/torch/bin/ptxas"
POD_PTXAS="$T/pod-site/torch/bin/ptxas"
TUNED='TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE=0", "TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=0'

# --- create --settle: every run gets the settings, and every argument after -- ---------------------------------
export CCPACK_PYTHON="$T/bin/py-build" TORCHINDUCTOR_CACHE_DIR="$T/build/ind" TRITON_CACHE_DIR="$T/build/tri"
export STANDIN_ENVLOG="$T/runs.jsonl"
expect 0 "^ccpack: tuned settings for the warm-up and its runs: TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE=0, TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=0, TRITON_PTXAS_PATH=$BUILD_PTXAS\$" -- \
  "$CCPACK" create -o "$T/arch/tuned.ccpack" --settle -- python3 "$STANDIN" --warmup-only -x --settle=9 --
"$PY" - "$T/runs.jsonl" "$BUILD_PTXAS" <<'PYEOF' && ok || bad "runs did not all get the settings and arguments: $(cat "$T/runs.jsonl")"
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
want = {"TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE": "0", "TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK": "0", "TRITON_PTXAS_PATH": sys.argv[2]}
assert len(runs) == 4, len(runs)  # the warm-up and three settle runs
for r in runs:
    assert r["argv"] == ["--warmup-only", "-x", "--settle=9", "--"], r["argv"]
    assert {k: r["env"].get(k) for k in want} == want, r["env"]
PYEOF
expect 0 "" -- "$CCPACK" inspect --json "$T/arch/tuned.ccpack"
json_is "$T/out" 'j["settle"]["tuning"] == {"applied": ["'"$TUNED"'", "TRITON_PTXAS_PATH='"$BUILD_PTXAS"'"], "kept": [], "skipped": []}'
json_is "$T/out" '"TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE=0;TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=0" == j["manifest"]["fingerprint"]["fields"]["env.inductor"]["value"] and j["manifest"]["fingerprint"]["fields"]["ptxas.version"]["value"] == "13.0.77"'
# None of it leaked into the user's shell.
[ -z "${TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK:-}" ] && ok || bad "the shell got the settings"

# A setting the user set is kept, and said; --no-tuned-settings sets none.
rm -f "$T/runs.jsonl"
TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=1 expect 0 "kept yours: TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=1\$" -- \
  "$CCPACK" create -o "$T/arch/kept.ccpack" --json --settle=1 -- python3 "$STANDIN"
json_is "$T/out" 'j["settle"]["run_reports"][0]["exit_code"] == 0'
expect 0 "" -- "$CCPACK" inspect --json "$T/arch/kept.ccpack"
json_is "$T/out" 'j["settle"]["tuning"]["kept"] == ["TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=1"] and j["settle"]["tuning"]["applied"][0] == "TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE=0"'
rm -f "$T/runs.jsonl"
expect 0 "tuned settings for the warm-up and its runs: none; not applied: all: --no-tuned-settings" -- \
  "$CCPACK" create -o "$T/arch/untuned.ccpack" --settle=1 --no-tuned-settings -- python3 "$STANDIN"
grep -q "TORCHINDUCTOR_BUNDLE\|TRITON_PTXAS_PATH" "$T/runs.jsonl" && bad "--no-tuned-settings: a run got a setting: $(cat "$T/runs.jsonl")" || ok
expect 2 "ccpack: error: --no-tuned-settings needs --settle" -- "$CCPACK" create -o "$T/arch/x.ccpack" --no-tuned-settings
expect 2 "" -- "$CCPACK" inspect "$T/arch/tuned.ccpack" -- echo
unset STANDIN_ENVLOG

# A plain create of a cache warmed without them says so in one line.
expect 0 "^ccpack: warning: this cache was warmed without TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE=0, TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=0, TRITON_PTXAS_PATH: pods restoring it will compile and tune again; warm up with \`ccpack create -o OUT --settle -- CMD ARGS...\`, which sets them" -- \
  "$CCPACK" create -o "$T/arch/plain.ccpack"

# --- ccpack env: the pod's folders, the recorded settings, this machine's ptxas of the recorded version ---------
export CCPACK_PYTHON="$T/bin/py-pod"
unset TORCHINDUCTOR_CACHE_DIR TRITON_CACHE_DIR
expect 0 "" -- "$CCPACK" env "$T/arch/tuned.ccpack" --inductor-dir "$T/pod/ind" --triton-dir "$T/pod/tri"
cat >"$T/want" <<WANT
export TORCHINDUCTOR_CACHE_DIR='$T/pod/ind'
export TRITON_CACHE_DIR='$T/pod/tri'
export TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE='0'
export TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK='0'
export TRITON_PTXAS_PATH='$POD_PTXAS'
export TORCHINDUCTOR_COMPILE_THREADS='1'
WANT
diff "$T/want" "$T/out" >"$T/diff" && ok || bad "env output: $(cat "$T/diff")"
expect 0 "" -- "$CCPACK" env --json "$T/arch/tuned.ccpack" --inductor-dir "$T/pod/ind" --triton-dir "$T/pod/tri"
json_is "$T/out" '[(v["name"], v["why"]) for v in j["variables"]][2:5] == [("TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE", "cache key"), ("TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK", "cache key"), ("TRITON_PTXAS_PATH", "ptxas 13.0.77")] and j["notes"] == []'
# Without a ptxas of the recorded version here: said, and not exported.
chmod -x "$T/pod-site/torch/bin/ptxas"
expect 0 "ccpack: warning: no ptxas 13.0.77 on this machine \(found: triton's bundled ptxas 12.8.93" -- \
  "$CCPACK" env "$T/arch/tuned.ccpack" --inductor-dir "$T/pod/ind" --triton-dir "$T/pod/tri"
grep -q TRITON_PTXAS_PATH "$T/out" && bad "a ptxas of another version exported: $(cat "$T/out")" || ok
chmod +x "$T/pod-site/torch/bin/ptxas"
# An unsigned archive is not trusted without the opt-out: its lines get sourced.
CCPACK_ALLOW_UNSIGNED= expect 4 "" -- "$CCPACK" env "$T/arch/tuned.ccpack"

# --- a pod without the settings: exit 3, both variables and their values named, no force ------------------------
expect 3 "ccpack: error: not restoring '$T/arch/tuned.ccpack': this process lacks the settings its cache was built with, so every entry would miss: TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE=0 TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=0 TRITON_PTXAS_PATH=<a ptxas 13.0.77>; \`ccpack run .* -- CMD\` restores and runs CMD with them" -- \
  "$CCPACK" restore "$T/arch/tuned.ccpack" --inductor-dir "$T/pod/ind" --triton-dir "$T/pod/tri"
grep -q "on-mismatch=force" "$T/err" && bad "force offered where every entry misses: $(cat "$T/err")" || ok
absent "the refused restore wrote $T/pod" "$T/pod"

# --- ccpack run: restore, then the command with the folders and settings; its exit code and signals -------------
cat >"$T/cmd.py" <<'PYEOF'
import json, os, signal, sys
keep = {k: v for k, v in os.environ.items() if k.startswith(("TORCHINDUCTOR_", "TRITON_"))}
json.dump({"argv": sys.argv[1:], "env": keep, "kernels": sum(e.is_dir() for e in os.scandir(keep["TRITON_CACHE_DIR"]))}, open(os.environ["RUN_LOG"], "w"))
if sys.argv[1] == "signal":
    os.kill(os.getpid(), signal.SIGTERM)
sys.exit(int(sys.argv[1]) if sys.argv[1].isdigit() else 0)
PYEOF
export RUN_LOG="$T/run.json"
exit_and_stderr 42 "" -- "$CCPACK" run -q "$T/arch/tuned.ccpack" --inductor-dir "$T/pod/ind" --triton-dir "$T/pod/tri" -- "$PY" "$T/cmd.py" 42 --port 8000 && ok
json_is "$RUN_LOG" 'j["argv"] == ["42", "--port", "8000"] and j["kernels"] == 7 and {k: j["env"].get(k) for k in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR", "TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE", "TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK", "TRITON_PTXAS_PATH", "TORCHINDUCTOR_COMPILE_THREADS")} == {"TORCHINDUCTOR_CACHE_DIR": "'"$T/pod/ind"'", "TRITON_CACHE_DIR": "'"$T/pod/tri"'", "TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE": "0", "TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK": "0", "TRITON_PTXAS_PATH": "'"$POD_PTXAS"'", "TORCHINDUCTOR_COMPILE_THREADS": "1"}'
# The restored folders are the archive's bytes (the settled run's seven kernels, relocated into the pod's folders).
expect 0 "" -- "$CCPACK" status --json --inductor-dir "$T/pod/ind" --triton-dir "$T/pod/tri"
json_is "$T/out" 'j["triton_kernels_since_restore"] == 0'
# A signal that ends the command ends the pod the same way (run is replaced by the command: no ccpack between).
"$CCPACK" run -q "$T/arch/tuned.ccpack" --inductor-dir "$T/pod/ind" --triton-dir "$T/pod/tri" -- "$PY" "$T/cmd.py" signal
rc=$?
[ "$rc" -eq 143 ] && ok || bad "a command killed by SIGTERM: run exited $rc, expected 143"
# A pod whose TORCHINDUCTOR_COMPILE_THREADS differs from the warm-up's: no warning at all.
TORCHINDUCTOR_COMPILE_THREADS=1 expect 0 "" -- "$CCPACK" run "$T/arch/tuned.ccpack" --inductor-dir "$T/pod/ind" --triton-dir "$T/pod/tri" -- true
grep -q "compile_threads" "$T/err" && bad "a warning with TORCHINDUCTOR_COMPILE_THREADS=1: $(cat "$T/err")" || ok
# A refused restore runs nothing (exit 3), unless --cold-on-failure: then one line, and the command runs cold.
rm -f "$RUN_LOG"
expect 3 "" -- "$CCPACK" run "$T/arch/tuned.ccpack" --select cpu.arch=riscv64 --inductor-dir "$T/cold/ind" --triton-dir "$T/cold/tri" -- "$PY" "$T/cmd.py" 0
absent "the command ran after a refusal" "$RUN_LOG"
mkdir -p "$T/cold/tri"
exit_and_stderr 5 "^ccpack: restore refused \(exit 3\); starting '$PY' cold, as --cold-on-failure asks\$" -- \
  "$CCPACK" run --cold-on-failure "$T/arch/tuned.ccpack" --select cpu.arch=riscv64 --inductor-dir "$T/cold/ind" --triton-dir "$T/cold/tri" -- "$PY" "$T/cmd.py" 5 && ok
json_is "$RUN_LOG" 'j["kernels"] == 0 and j["env"]["TRITON_CACHE_DIR"] == "'"$T/cold/tri"'"'
expect 127 "ccpack: error: cannot run 'no-such-command-here': No such file or directory" -- \
  "$CCPACK" run -q "$T/arch/tuned.ccpack" --inductor-dir "$T/pod/ind" --triton-dir "$T/pod/tri" -- no-such-command-here
expect 2 "run needs the command after --" -- "$CCPACK" run "$T/arch/tuned.ccpack" --
finish
