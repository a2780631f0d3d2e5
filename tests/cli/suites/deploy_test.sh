#!/usr/bin/env bash
# Deploy suite: docs/DEPLOY.md's recipe as written, end to end, against Debian's docker-registry on 127.0.0.1.
# Every fenced block of the page is taken out (tests/cli/helpers/deploy_check.py): each YAML block must parse and, when it
# is a Pod or a Deployment, have what a pod of the recipe needs (metadata.name, securityContext runAsUser/fsGroup,
# resources, an emptyDir, the trusted key mounted into /etc/ccpack/trusted.d from a ConfigMap or Secret); the TOML
# must parse; each shell block runs, by its role (its first line): "# once" (keygen, kubectl stands in), "# build
# pipeline" (a fake H200 through the stub NVML, `create --settle` of a warm-up that fills the caches from the sample
# cache), and the image's entrypoint ("#!/bin/sh"). Then each Pod's and Deployment's containers run: the init
# container (when there is one) as a GPU-less container would, then the server's container with the GPU; their
# command and env from the YAML, their mounts as local folders, as uid/gid of the securityContext when this suite
# runs as root. The stand-in server says "serving warm" only when the cache was restored and the archive's settings
# reached it (nobody exported them: `ccpack run` or `ccpack env` did). A new shell block with no role here fails the
# suite, so the page cannot drift from it.
# Usage: deploy_test.sh PATH/TO/ccpack PATH/TO/tests/data PATH/TO/nvml_stub.so
set -u
SUITE=deploy
. "$(dirname "${BASH_SOURCE[0]}")/../helpers/harness.sh"
suite_paths "$@"
DOC="$HERE/../../../docs/DEPLOY.md"
CHECK="$HERE/deploy_check.py"
isolate
unset CCPACK_ALLOW_UNSIGNED CCPACK_TRUSTED_KEYS CCPACK_SIGNING_KEY CCPACK_SELECT CCPACK_PLAIN_HTTP

require_tools docker-registry
chmod 755 "$T"  # the pod's user (below) must reach its folders

# A plain docker-registry on a free port, stopped by PID at the end (harness.sh start_plain_registry).
start_plain_registry
REG="127.0.0.1:$PORT"

# Stand-ins: `ccpack` on PATH, `python serve.py` (the warm-up fills the caches; serving checks they were restored),
# `kubectl create configmap NAME --from-file=KEY=FILE` (a folder per ConfigMap), a failing nvidia-smi.
mkdir -p "$T/bin" "$T/configmaps" "$T/nosys"
ln -s "$CCPACK" "$T/bin/ccpack"
cat >"$T/bin/python" <<EOF
#!/bin/sh
[ "\$1" = serve.py ] || { echo "python stand-in: only serve.py" >&2; exit 2; }
if [ "\${2:-}" = --warmup-only ]; then
  mkdir -p "\$TORCHINDUCTOR_CACHE_DIR" "\$TRITON_CACHE_DIR"
  cp -r "$SAMPLE/inductor_cache/." "\$TORCHINDUCTOR_CACHE_DIR" && cp -r "$SAMPLE/triton_cache/." "\$TRITON_CACHE_DIR"
  exit
fi
[ -f "\$TORCHINDUCTOR_CACHE_DIR/.ccpack-marker.json" ] && [ -f "\$TRITON_CACHE_DIR/.ccpack-marker.json" ] || { echo "serving cold" >&2; exit 1; }
[ "\${TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE:-}" = 0 ] && [ "\${TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK:-}" = 0 ] || { echo "serving without the archive's settings" >&2; exit 1; }
echo "serving warm"
EOF
cat >"$T/bin/kubectl" <<EOF
#!/bin/sh
[ "\$1 \$2" = "create configmap" ] || { echo "kubectl stand-in: only create configmap" >&2; exit 2; }
mkdir -p "$T/configmaps/\$3" && chmod 755 "$T/configmaps/\$3"
spec=\${4#--from-file=}
cp "\${spec#*=}" "$T/configmaps/\$3/\${spec%%=*}" && chmod 644 "$T/configmaps/\$3/\${spec%%=*}"
EOF
failing_nvidia_smi "$T/bin"
chmod 755 "$T/bin" "$T/bin/python" "$T/bin/kubectl"
# The image's Python, the same in the pipeline and the pod: torch and triton installed (their dist-info), on
# Debian's interpreter (the pod's user reaches none below /root).
SITE="$T/site"
fake_site "$SITE"
chmod -R a+rX "$SITE"
fake_python "$T/bin/py" "$SITE"
export PATH="$T/bin:$PATH" CCPACK_SYSFS_ROOT="$T/nosys" CCPACK_PYTHON="$T/bin/py"
# The test registry speaks plain HTTP: the documented variable, so the blocks run as written.
export CCPACK_PLAIN_HTTP=1

# --- every block of the page ---------------------------------------------------------------------------------------
"$PY" "$CHECK" blocks "$DOC" "$T/blocks" || { echo "FAIL: cannot read the blocks of $DOC"; exit 1; }
for f in "$T"/blocks/*; do sed -i "s/registry\.example\.com/$REG/g" "$f"; done
n_yaml=0
for f in "$T"/blocks/*.yaml; do
  n_yaml=$((n_yaml + 1))
  "$PY" "$CHECK" validate "$f" >"$T/why" && ok || bad "$(cat "$T/why")"
done
[ "$(grep -l '^kind: Pod' "$T"/blocks/*.yaml | wc -l)" -ge 1 ] && [ "$(grep -l '^kind: Deployment' "$T"/blocks/*.yaml | wc -l)" -ge 1 ] &&
  ok || bad "the page lacks a complete Pod or Deployment"
for f in "$T"/blocks/*.toml; do
  "$PY" -c 'import sys, tomllib; tomllib.load(open(sys.argv[1], "rb"))' "$f" && ok || bad "$f: TOML does not parse"
done
# The checker can fail: a Pod without its name or its trusted key is refused.
POD=$(grep -l '^kind: Pod' "$T"/blocks/*.yaml | head -1)
grep -v '^  name: model-server$' "$POD" >"$T/broken1.yaml"
"$PY" "$CHECK" validate "$T/broken1.yaml" | grep -q "no metadata.name" && ok || bad "the checker missed a Pod without metadata.name"
sed 's|mountPath: /etc/ccpack/trusted.d|mountPath: /etc/keys|' "$POD" >"$T/broken2.yaml"
"$PY" "$CHECK" validate "$T/broken2.yaml" | grep -q "no trusted key mounted" && ok || bad "the checker missed a Pod without its key"

# --- the shell blocks, in the page's order, each as its role runs it ------------------------------------------------
mkdir -p "$T/admin" "$T/ci" "$T/docker"
for f in "$T"/blocks/*.sh; do
  first=$(head -1 "$f")
  case "$first" in
    "# once"*)
      (cd "$T/admin" && bash -eu "$f") >"$T/out" 2>"$T/err" && ok || bad "the keys block failed: $(cat "$T/err")"
      ;;
    "# build pipeline"*)
      (cd "$T/ci" && CCPACK_CI_KEY_PEM="$(cat "$T/admin/ci.key")" CI_PIPELINE_ID=42 \
        TORCHINDUCTOR_CACHE_DIR="$T/ci/cache/inductor" TRITON_CACHE_DIR="$T/ci/cache/triton" gpu bash -eu "$f") >"$T/out" 2>"$T/err" &&
        ok || bad "the build pipeline block failed: $(cat "$T/err")"
      ;;
    "#!/bin/sh")
      cp "$f" "$T/docker/entrypoint.sh"
      ;;
    *) bad "a shell block of the page with no role in this suite: '$first'" ;;
  esac
done
[ -f "$T/configmaps/ccpack-trusted-keys/ci.pub" ] && ok || bad "no ConfigMap with the public key"
expect 0 "" -- "$CCPACK" verify "$T/ci/model-h200.ccpack" --trust "$T/configmaps/ccpack-trusted-keys"

# --- the Pod's and the Deployment's containers: the init container without a GPU, the server's with it --------------
# run_container init|main YAML ROOT nogpu|gpu: mounts as folders under ROOT (the emptyDir group-owned by fsGroup and
# setgid, as kubelet makes it; the ConfigMap's files), the env and command of the YAML, as runAsUser:fsGroup when
# root may switch. Exit 75 when the YAML has no such container.
run_container() {
  local which=$1 yaml=$2 root=$3 machine=$4 line uid gid cmd=""
  local -a envs=()
  mkdir -p "$root" && chmod 755 "$root"
  "$PY" "$CHECK" "$which" "$yaml" "$root" >"$T/init.plan" || { bad "cannot read the $which container of $yaml"; return 1; }
  [ -s "$T/init.plan" ] || return 75
  while IFS= read -r line; do
    case "$line" in
      MOUNT*)
        eval "set -- ${line#MOUNT }"
        case "$3" in
          emptyDir) mkdir -p "$2" ;;
          configMap) [ -d "$2" ] || cp -r "$T/configmaps/$4" "$2" ;;
          secret) mkdir -p "$2" ;;
        esac
        [ "$1" = /etc/ccpack/trusted.d ] && envs+=("CCPACK_TRUSTED_KEYS=$2")  # the mount's place, named
        ;;
      ENV*) eval "envs+=(${line#ENV })" ;;
      COMMAND*) cmd=${line#COMMAND } ;;
      SECURITY*) set -- ${line#SECURITY }; uid=$1 gid=$2 ;;
    esac
  done <"$T/init.plan"
  local -a as=()
  if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    for d in "$root"/*; do [ "$d" = "$root/home" ] || { chgrp -R "$gid" "$d" && chmod 2775 "$d"; }; done
    as=(setpriv --reuid="$uid" --regid="$gid" --groups="$gid")
  fi
  mkdir -p "$root/home" && chmod 777 "$root/home"
  eval "$machine env HOME=$root/home TMPDIR=$root/home XDG_CACHE_HOME=$root/home/.cache CCPACK_PROBE_CACHE=$root/home/probe.json ${envs[*]@Q} ${as[*]} $cmd"
}

for kind in Pod Deployment; do
  Y=$(grep -l "^kind: $kind" "$T"/blocks/*.yaml | head -1)
  R="$T/pod-$kind"
  first=init
  run_container init "$Y" "$R" nogpu >"$T/out" 2>"$T/err"
  rc=$?
  if [ "$rc" -eq 75 ]; then
    first=main
  else
    [ "$rc" -eq 0 ] && ok || bad "$kind: the init container exited $rc: $(cat "$T/err")"
    n=$(cat "$T/out" "$T/err" | wc -l)
    [ "$n" -le 2 ] && ! grep -q warning "$T/err" && ok || bad "$kind: the init container printed $n lines: $(cat "$T/out" "$T/err")"
  fi
  # The server's container: warm, with the archive's settings, and ccpack's own lines at most two.
  run_container main "$Y" "$R" gpu >"$T/out" 2>"$T/err"
  rc=$?
  [ "$rc" -eq 0 ] && grep -qx "serving warm" "$T/out" && ok || bad "$kind: the server's container exited $rc: $(cat "$T/out" "$T/err")"
  [ "$(wc -l <"$T/err")" -le 2 ] && ! grep -q warning "$T/err" && ok || bad "$kind: the server's container printed: $(cat "$T/err")"
  cp "$T/err" "$T/transcript-$kind"
  if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then  # restored as the pod's user, into the fsGroup volume
    [ "$(stat -c %u "$R/compile-cache/inductor")" = 1000 ] && ok || bad "$kind: not restored as runAsUser 1000"
  fi
  # Restored, byte for byte, where the server reads it.
  diff -r --exclude=.ccpack-marker.json --exclude=.ccpack-entries --exclude='__grp__*.json' "$SAMPLE/inductor_cache" "$R/compile-cache/inductor" >/dev/null &&
    diff -r --exclude=.ccpack-marker.json --exclude=.ccpack-entries --exclude='__grp__*.json' "$SAMPLE/triton_cache" "$R/compile-cache/triton" >/dev/null &&
    ok || bad "$kind: the restored folders differ from the cache the pipeline packed"
  # A restart: nothing fetched but the header, still at most two lines.
  run_container "$first" "$Y" "$R" "$( [ "$first" = init ] && echo nogpu || echo gpu)" >"$T/out" 2>"$T/err" && grep -q "already restored" "$T/err" &&
    [ "$(cat "$T/err" | wc -l)" -le 2 ] && ok || bad "$kind: the restart: $(cat "$T/out" "$T/err")"
  expect 0 "" -- nogpu "$CCPACK" status --json --inductor-dir "$R/compile-cache/inductor" --triton-dir "$R/compile-cache/triton"
  json_is "$T/out" "[f['archive']['origin'] for f in j['folders']]==['oci://$REG/ml/model-cache:v42']*2"
done

# --- the Docker entrypoint, with the key mounted and the target named ---------------------------------------------
[ -f "$T/docker/entrypoint.sh" ] && ok || bad "the page has no entrypoint block"
D="$T/docker"
(cd "$D" && nogpu env CCPACK_SELECT=gpu.arch=sm_90 CCPACK_TRUSTED_KEYS="$T/configmaps/ccpack-trusted-keys" \
  TORCHINDUCTOR_CACHE_DIR="$D/cache/inductor" TRITON_CACHE_DIR="$D/cache/triton" sh entrypoint.sh) >"$T/out" 2>"$T/err" &&
  grep -qx "serving warm" "$T/out" && ok || bad "the entrypoint: $(cat "$T/out" "$T/err")"
[ "$(wc -l <"$T/err")" -le 2 ] && ok || bad "the entrypoint's restore printed more than two lines: $(cat "$T/err")"

echo "deploy: the Deployment's server container said: $(cat "$T/transcript-Deployment" 2>/dev/null)"
finish
