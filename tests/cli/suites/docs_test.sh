#!/usr/bin/env bash
# Docs suite: every example block of README.md and docs/*.md (docs/DEPLOY.md aside: deploy_test.sh runs that page)
# as written. The blocks come from deploy_check.py's `blocks` (fenced, and Markdown's 4-space-indented ones). Each
# block must be named in TABLE below, by its page and the start of its first line, with what this suite does with
# it: `sh` runs each command line in a scratch world and wants exit 0 (or N where the line says "# exits N"); `py`
# runs it with the repository's Python package; `json` parses it; `keys:CHECK` compares the keys a JSON sample names
# with a real --json report; a few named checks; `skip` says why it cannot run. A block with no row, or a row with
# no block, fails the suite, so a new example is classified before it ships.
# The world: HOME in the scratch folder (no XDG_CONFIG_HOME); the sample cache of tests/data copied as the Inductor
# and Triton caches (TORCHINDUCTOR_CACHE_DIR, TRITON_CACHE_DIR); a fake H200 (the stub NVML); the image's Python with
# torch and triton installed (their dist-info); registry.example.com replaced by a docker-registry on 127.0.0.1 (plain HTTP,
# CCPACK_PLAIN_HTTP, as deploy_test.sh); `python warmup.py` the settle stand-in (settle_standin.py), `python
# smoke_test.py` a passing smoke test; the CI's variables (CI_PIPELINE_ID, GIT_SHA, and SECRET_PEM: the private key
# of the page's keygen line, else the CI's key pair, which README's keygen line made and which a page without its
# own keygen finds in its folder). Each page runs in a folder of its own, its blocks in order; README.md trusts its
# key itself, as a newcomer on one machine would; on the pages marked `trust`, ~/.config/ccpack/trusted.d (the
# per-user twin of the /etc/ccpack/trusted.d those pages name for the pod) holds the CI's public key and that of
# each keygen line. README's pod line also runs on a machine without a GPU, with the flag its comment says to add.
# Usage: docs_test.sh PATH/TO/ccpack PATH/TO/tests/data PATH/TO/nvml_stub.so
set -u
SUITE=docs
. "$(dirname "${BASH_SOURCE[0]}")/../helpers/harness.sh"
suite_paths "$@"
ROOT=$(realpath "$HERE/../../..")
CHECK="$HERE/docs_check.py"
isolate
unset CCPACK_ALLOW_UNSIGNED CCPACK_TRUSTED_KEYS CCPACK_SIGNING_KEY CCPACK_SELECT CCPACK_PLAIN_HTTP CCPACK_BINARY XDG_CONFIG_HOME

# --- the table: every block, and what this suite does with it ----------------------------------------------------
# page | start of the block's first line | role | options of the page's world or, for skip, why it does not run:
#   trust  ~/.config/ccpack/trusted.d holds the CI's public key, and the one of each keygen line of the page
#   cold   the caches start empty (the page's warm-up fills them)
TABLE=$(cat <<'EOF'
README.md | scripts/demo | skip | installs packages and builds the project; the steps it shows are this suite's README rows
README.md | scripts/test | skip | runs every test, this suite among them
README.md | # once: a signing key pair | sh
README.md | import ccpack | py
docs/ARCHITECTURE.md | cli/main.cpp | skip | a drawing of the layers, no example
docs/FINGERPRINT.md | {"schema": 1, | keys:fingerprint
docs/FINGERPRINT.md | wheels.cuda | skip | two table rows of `check`, from a machine whose CUDA wheels and settings differ from the archive's
docs/FINGERPRINT.md | $ ccpack check model.ccpack | skip | a transcript from a machine without the archive's nvidia-cusparselt wheel
docs/FINGERPRINT.md | $ ccpack status | skip | a transcript from a pod that compiled after its restore 
docs/FINGERPRINT.md | {"ok": true, "compiled_since_restore" | keys:status
docs/FORMAT.md | { | keys:manifest
docs/FORMAT.md | list    = header | entries
docs/FORMAT.md | [{"key_id" | json
docs/FORMAT.md | "ccpack-signature-v1" 0x00 | skip | the grammar of the signed message, no example
docs/IMPORT.md | ccpack import cache.tar.zst | sh
docs/IMPORT.md | {"schema": 1, | keys:derived
docs/PACKAGING.md | pip install --no-index | skip | installs the wheel (tests/cli/suites/wheel_test.sh installs it the same way into a venv)
docs/PACKAGING.md | tar -xzf ccpack-0.1.0-linux-x86_64.tar.gz -C /opt | skip | writes into /opt (scripts/ci/package unpacks and runs the .tar.gz)
docs/PACKAGING.md | apt install ./ccpack_0.1.0_amd64.deb | skip | installs a system package as root (scripts/ci/package checks the .deb)
docs/PACKAGING.md | ccpack 0.1.0 | version
docs/PACKAGING.md | tar -xzf ccpack-0.1.0-linux-x86_64.tar.gz -C /tmp | skip | the GPU proof of the portable package, on a GPU machine
docs/PACKAGING.md | python3 -m venv v | skip | builds a venv from dist/'s wheel (tests/cli/suites/wheel_test.sh does, and calls the API)
docs/PACKAGING.md | import ccpack | py | trust
docs/PURGE.md | {"ok": true, "removed" | keys:purge
docs/PURGE.md | ccpack: warning: fingerprint field | skip | a transcript of a restore that purges, from a pod whose settings differ (purge_test.sh)
docs/REGISTRY.md | ccpack push ARCHIVE | synopsis
docs/REGISTRY.md | TAG ──> image index | skip | a drawing of the OCI documents (registry_test.sh checks them)
docs/REGISTRY.md | sha256-<hex>.sig ──> image manifest | skip | a drawing of the cosign signature documents (cosign_test.sh checks them)
docs/REGISTRY.md | TAG                         the base | skip | a drawing of the delta tag scheme (converge_test.sh pushes and lists such tags)
docs/CONVERGE.md | # on each pod, after serving for a while | skip | a fleet's flow: pods whose folders ccpack restored and that compiled since (converge_test.sh runs it with such folders)
docs/CONVERGE.md | ccpack push pod.delta.ccpack | skip | a fleet's flow through a registry: the same pods (converge_test.sh pushes deltas and merges from a registry on 127.0.0.1)
docs/SETTLE.md | ccpack create -o model.ccpack --sign-key ci.key --settle | sh | trust cold
docs/SETTLE.md | ccpack: warm-up: exit 0 | skip | a transcript of a real warm-up's timings (settle_test.sh checks these lines)
docs/SETTLE.md | ccpack run model.ccpack -- python smoke_test.py | sh | trust cold
docs/SETTLE.md | import ccpack | py
docs/SIGNING.md | # once, on a trusted machine | sh | trust
docs/SIGNING.md | # once: an ECDSA P-256 key pair | sh | trust
docs/SIGNING.md | tag sha256-<hex>.sig | skip | a drawing of the cosign signature layout and payload (cosign_test.sh checks them)
docs/SIGNING.md | # /etc/containers/registries.d/ccpack.yaml | skip | skopeo's configuration; Debian 12's skopeo has sigstore patched out (cosign_test.sh pins that)
docs/SIGNING.md | # cosign 2: verify what ccpack pushed | skip | cosign 2 is not packaged for Debian 12 and not installed here (cosign_test.sh checks the bytes with @sigstore/verify)
docs/SIGNING.md | referrer manifest (OCI image manifest | skip | a drawing of the bundle referrer layout (cosign3_test.sh checks it with @sigstore/verify and @sigstore/sign)
docs/SIGNING.md | # cosign 3: verify what ccpack pushed | skip | cosign 3 is not packaged for Debian 12 and not installed here (cosign3_test.sh checks the bundles with @sigstore/verify)
docs/TUNING.md | TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE=0 | skip | the settings create --settle sets, no command (tuned_test.sh checks each run got them)
docs/TUNING.md | ccpack run model.ccpack -- python serve.py | skip | a pod's two ways to get the settings; tuned_test.sh runs both on an archive made with create --settle
EOF
)

# --- the world -------------------------------------------------------------------------------------------------------
require_tools docker-registry
start_plain_registry
REG="127.0.0.1:$PORT"
mkdir -p "$T/bin" "$T/nosys" "$T/keys"
ln -s "$CCPACK" "$T/bin/ccpack"
# `python`: the warm-up and the smoke test stand in; anything else is the real interpreter.
cat >"$T/bin/python" <<EOF
#!/bin/sh
case "\$1" in
  warmup.py) exec "$PY" "$HERE/settle_standin.py" ;;
  smoke_test.py) echo "smoke test passed"; exit 0 ;;
  *) exec "$PY" "\$@" ;;
esac
EOF
failing_nvidia_smi "$T/bin"
# The image's Python: torch and triton installed (their dist-info; torch importable, as TUNING.md's line needs).
SITE="$T/site"
fake_site "$SITE"
printf "from torch.version import __version__\n" >"$SITE/torch/__init__.py"
ln -s "$PY" "$T/bin/python3"
chmod 755 "$T/bin/python"
export PATH="$T/bin:$PATH" PYTHONPATH="$ROOT/python:$SITE" CCPACK_BINARY="$CCPACK" CCPACK_PYTHON="$T/bin/python3"
export CCPACK_SYSFS_ROOT="$T/nosys" CCPACK_PLAIN_HTTP=1 CCPACK_NVML_LIBRARY="$STUB" STUB_NVML_SMS=132
export CI_PIPELINE_ID=42 GIT_SHA=0123abcd
TRUSTED="$HOME/.config/ccpack/trusted.d"

# The CI's key: README's keygen line, run once; SECRET_PEM is its private key's text, as a CI secret.
"$PY" "$CHECK" blocks "$ROOT/README.md" "$T/readme" || { echo "FAIL: cannot read the blocks of README.md"; exit 1; }
KEYGEN=$(grep -h -m1 '^ccpack keygen ' "$T"/readme/*)
(cd "$T/keys" && eval "$KEYGEN") >"$T/out" 2>&1 && [ -f "$T/keys/ci.key" ] && [ -f "$T/keys/ci.key.pub" ] &&
  ok || { bad "README.md's keygen line '$KEYGEN' made no ci.key: $(cat "$T/out")"; finish; }
SECRET_PEM=$(cat "$T/keys/ci.key")
export SECRET_PEM

# page_world PAGE: a fresh folder for the page's blocks (cd there), with a fresh copy of the sample cache as this
# machine's caches, the CI's key pair unless the page makes its own (BLOCKS: its blocks), and nothing trusted but,
# on a page marked `trust`, the CI's public key.
page_world() {
  W="$T/world/${1//\//_}"
  OPTS=$(awk -F' [|] ' -v p="$1" '$1 == p && $3 != "skip" { print $4 }' <<<"$TABLE" | sort -u | tr '\n' ' ')
  mkdir -p "$W"
  cd "$W" || exit 1
  # A page with nothing to run needs no caches or keys.
  awk -F' [|] ' -v p="$1" '$1 == p && ($3 == "sh" || $3 == "py")' <<<"$TABLE" | grep -q . || return 0
  mkdir -p "$W/cache"
  case " $OPTS " in
    *" cold "*) ;;
    *) copy_sample "$W/cache/inductor" "$W/cache/triton" ;;
  esac
  export TORCHINDUCTOR_CACHE_DIR="$W/cache/inductor" TRITON_CACHE_DIR="$W/cache/triton"
  rm -rf "$TRUSTED"
  if [[ " $OPTS " == *" trust "* ]]; then
    mkdir -p "$TRUSTED" && cp "$T/keys/ci.key.pub" "$TRUSTED/"
  fi
  grep -qh '^ccpack keygen ' "$BLOCKS"/[0-9]* || cp "$T/keys/ci.key" "$T/keys/ci.key.pub" "$W/"
}
# IMPORT.md's inputs: the sample cache as the tarballs and the zip teams keep, and a build machine's fingerprint.
import_inputs() {
  tar -C "$SAMPLE" -cf - inductor_cache triton_cache | zstd -q -o cache.tar.zst
  tar -C "$SAMPLE" -czf cache.tar.gz inductor_cache triton_cache
  "$PY" - "$SAMPLE" <<'PYEOF'
import os, sys, zipfile
with zipfile.ZipFile("workspace-caches.zip", "w") as z:
    for src, dst in (("inductor_cache", "workspace/ind"), ("triton_cache", "workspace/tri")):
        for d, _, files in sorted(os.walk(os.path.join(sys.argv[1], src))):
            for f in sorted(files):
                p = os.path.join(d, f)
                z.write(p, os.path.join(dst, os.path.relpath(p, os.path.join(sys.argv[1], src))))
PYEOF
  ccpack fingerprint --json >build-machine-fingerprint.json
}

# --- the real reports the JSON samples are compared with ---------------------------------------------------------
# reports DIR: in a world where README.md's blocks ran (an archive restored into the caches), the --json of status,
# purge --dry-run and inspect --files (whose "manifest" is the archive's, its "fingerprint" the machine's; that of an
# import without --fingerprint has the derived fingerprint), and each registry command's --help.
reports() {
  mkdir -p "$1/help"
  # A pod that compiled after its restore (the stand-in adds a kernel, an FX graph, an autotune result), and an
  # archive made with --settle, so that every key of the samples can show.
  # A lock file left behind, which purge removes; a symlink, which the manifest lists with its target.
  STANDIN_MODE=always python warmup.py >/dev/null &&
    ccpack status --json >"$1/status.json" &&
    : >"$TORCHINDUCTOR_CACHE_DIR/stale.lock" &&
    ccpack purge --dry-run --json >"$1/purge.json" &&
    ln -s "$(cd "$TORCHINDUCTOR_CACHE_DIR" && find . -name '*.py' | sort | head -1)" "$TORCHINDUCTOR_CACHE_DIR/alias.py" &&
    ccpack create -q -o "$1/settled.ccpack" --settle=1 -- python warmup.py >"$1/settle.log" 2>&1 &&
    ccpack inspect "$1/settled.ccpack" --json --files >"$1/inspect.json" &&
    "$PY" -c 'import json,sys; m=json.load(open(sys.argv[1]))["manifest"]; json.dump(m, open(sys.argv[2], "w"))
json.dump(m["fingerprint"], open(sys.argv[3], "w"))' "$1/inspect.json" "$1/manifest.json" "$1/fingerprint.json" &&
    tar -C "$SAMPLE" -cf "$1/cache.tar" inductor_cache triton_cache &&
    ccpack import -q "$1/cache.tar" -o "$1/imported.ccpack" &&
    ccpack inspect "$1/imported.ccpack" --json >"$1/imported.json" &&
    "$PY" -c 'import json,sys; json.dump(json.load(open(sys.argv[1]))["manifest"]["fingerprint"], open(sys.argv[2], "w"))' \
      "$1/imported.json" "$1/derived.json" || bad "cannot make the reports the samples are compared with: see $1"
  # Every command's --help: a synopsis may name any of them.
  for c in $(ccpack --help | awk '/^[A-Za-z ]*:$/ {on = /ommands/; next} on && /^  [a-z]/ {print $1}'); do ccpack "$c" --help >"$1/help/$c" 2>&1; done
  find . -name .ccpack-entries | head -1 | xargs -r cp -t "$1"
}

# run_block PAGE FILE LINE ROLE: one block, by its role (OPTS: the options of the page's world).
run_block() {
  local page=$1 f=$2 line=$3 role=$4 where="$1:$3" o="$T/run/${1//\//_}.${2##*/}"
  mkdir -p "$T/run"
  case "$role" in
    sh)
      sed -i "s/registry\.example\.com/$REG/g" "$f"
      "$PY" "$CHECK" script "$f" "$where" $([[ " $OPTS " == *" trust "* ]] && echo "$TRUSTED") >"$o.run"
      bash "$o.run" >"$o.out" 2>&1 3>"$o.fail"
      [ -s "$o.fail" ] && bad "$(cat "$o.fail") (output: $(tail -c 1500 "$o.out"))" || ok
      ;;
    py)
      "$PY" "$f" >"$o.out" 2>&1 && ok || bad "$where: the Python block failed: $(tail -c 1500 "$o.out")"
      ;;
    json)
      "$PY" -c 'import json,sys; json.load(open(sys.argv[1]))' "$f" 2>"$o.out" && ok || bad "$where: not JSON: $(cat "$o.out")"
      ;;
    keys:*)
      "$PY" "$CHECK" keys "$f" "$REPORTS/${role#keys:}.json" fit fingerprint "fields/*" >"$o.out" 2>&1 &&
        ok || bad "$where: the sample and the real ${role#keys:} report differ: $(cat "$o.out")"
      ;;
    synopsis)
      "$PY" "$CHECK" synopsis "$f" "$REPORTS/help" >"$o.out" && ok || bad "$where: $(cat "$o.out")"
      ;;
    entries)  # the grammar, against a real entry list: header, then f/g/l lines, then "end"
      "$PY" - "$REPORTS/.ccpack-entries" >"$o.out" 2>&1 <<'PYEOF' && ok || bad "$where: a real .ccpack-entries breaks the grammar: $(cat "$o.out")"
import re, sys
lines = open(sys.argv[1], "rb").read().decode().split("\n")
m = re.fullmatch(r"ccpack-entries 1 [0-9a-f]{64} (\d+)", lines[0])
assert m, lines[0]
body = lines[1:1 + int(m.group(1))]
assert all(re.fullmatch(r"[fg] \d+ [0-9a-f]{64} .+|l .+", e) for e in body), body
assert lines[1 + int(m.group(1)):] == ["end", ""], lines[-3:]
PYEOF
      ;;
    version)  # `ccpack --version`'s shape: the version line, "built with:", the same libraries
      ccpack --version >"$o.out" 2>&1
      [ "$(head -2 "$f")" = "$(head -2 "$o.out")" ] && [ "$(sed 1,2d "$f" | awk '{print $1}')" = "$(sed 1,2d "$o.out" | awk '{print $1}')" ] &&
        ok || bad "$where: ccpack --version prints: $(cat "$o.out")"
      ;;
    skip) ;;
    *) bad "$where: unknown role '$role' in the table" ;;
  esac
}

REPORTS="$T/reports"
USED="$T/rows-used"
: >"$USED"
for page in README.md $(cd "$ROOT" && ls docs/*.md); do
  [ "$page" = docs/DEPLOY.md ] && continue
  BLOCKS="$T/blocks/${page//\//_}"
  "$PY" "$CHECK" blocks "$ROOT/$page" "$BLOCKS" || { bad "cannot read the blocks of $page"; continue; }
  [ -s "$BLOCKS/index" ] || continue
  page_world "$page"
  [ "$page" = docs/IMPORT.md ] && import_inputs
  while IFS=$'\t' read -r name line first; do
    rows=$(awk -F' [|] ' -v p="$page" -v f="$first" '$1 == p && index(f, $2) == 1 { print NR "\t" $3 "\t" $4 }' <<<"$TABLE")
    if [ "$(grep -c . <<<"$rows")" -ne 1 ]; then
      bad "$page:$line: a block the table does not name (or names twice): '$first'"
      continue
    fi
    IFS=$'\t' read -r nr role _ <<<"$rows"
    echo "$nr" >>"$USED"
    run_block "$page" "$BLOCKS/$name" "$line" "${role% }" </dev/null
  done <"$BLOCKS/index"
  if [ "$page" = README.md ]; then
    mkdir -p "$REPORTS" && reports "$REPORTS"
    # "no GPU visible? add --select gpu.arch=sm_90": the pod line on a machine without a GPU (its own probe memo).
    flag=$(grep -ho 'no GPU visible? add --[a-z]* [^ ]*' "$BLOCKS"/[0-9]* | sed 's/.*add //')
    pod=$(grep -h '^ccpack restore oci://' "$BLOCKS"/[0-9]* | sed 's/ *#.*//')
    rm -rf "$W/cache"
    (export CCPACK_NVML_LIBRARY="$T/none/libnvidia-ml.so.1" CCPACK_PROBE_CACHE="$T/nogpu-probe.json"; eval "$pod $flag") >"$T/out" 2>&1 && [ -n "$flag" ] &&
      [ -f "$W/cache/inductor/.ccpack-marker.json" ] && ok || bad "README.md: '$pod $flag' on a machine without a GPU: $(cat "$T/out")"
  fi
  cd "$T" || exit 1
done
# Every row names a block.
n=0
while IFS= read -r row; do
  n=$((n + 1))
  grep -qx "$n" "$USED" || bad "the table's row $n names no block: $row"
done <<<"$TABLE"

finish
