#!/usr/bin/env bash
# Registry suite, loopback only: Debian's docker-registry (CNCF distribution) in three variants (plain HTTP; TLS
# with a self-signed certificate and htpasswd; bearer tokens from a token server written for the test), skopeo
# as an independent client, and small python servers (tests/cli/helpers/registry_helpers.py) that count bytes, cut a
# connection, demand Basic auth and redirect blobs to a logging backend on another port.
# Usage: registry_test.sh PATH/TO/ccpack PATH/TO/tests/data
set -u
# The registry cases publish unsigned test archives; signing_test.sh covers the trust gate, and one case below
# checks that restore oci:// runs it.
export CCPACK_ALLOW_UNSIGNED=1
# Its archives carry fake fingerprints (an H100, an MI300) chosen by CCPACK_FINGERPRINT_FILE for selection; the
# local fingerprint policy (fingerprint_test.sh) would refuse them on this machine.
export CCPACK_ON_MISMATCH=force
# The harness's PY is Debian's python3 (with python3-jwt), not a pyenv or venv one that lacks it.
SUITE=registry
. "$(dirname "${BASH_SOURCE[0]}")/../helpers/harness.sh"
suite_paths "$@"
HELP="$HERE/registry_helpers.py"
# What every passing command printed, searched for secrets at the end.
EXPECT_LOG=$T/all-stderr

require_tools docker-registry skopeo htpasswd openssl python3
"$PY" -c 'import jwt, cryptography' 2>/dev/null || { echo "FAIL: python3-jwt/python3-cryptography missing"; exit 1; }

isolate_home

# serve_py ROLE PORTFILE ARGS...: a python helper server (registry_helpers.py ROLE), waited for until it writes its
# port to PORTFILE; its tracebacks for connections the test cuts on purpose go to a log, not the output.
serve_py() { spawn "$PY" "$HELP" "$@" 2>>"$T/helpers.err"; wait_for "$2"; }

# A fake machine: a fingerprint file in the agreed shape.
fake_fp() {  # fake_fp FILE VENDOR ARCH TORCH HIP
  local hip=null
  [ -n "$5" ] && hip="\"$5\""
  printf '{"schema":1,"fields":{"gpu.vendor":{"value":"%s","source":"test"},"gpu.arch":{"value":"%s","source":"test"},"torch.version":{"value":"%s","source":"test"},"torch.hip":{"value":%s,"source":"test"},"triton.version":{"value":"3.6.0","source":"test"},"python.abi":{"value":"cpython-312-x86_64-linux-gnu","source":"test"},"cpu.arch":{"value":"x86_64","source":"test"}}}\n' \
    "$2" "$3" "$4" "$hip" >"$1"
}
fake_fp "$T/h100.json" nvidia sm_90 2.11.0+cu130 ""
fake_fp "$T/mi300.json" amd gfx942 2.11.0+rocm6.4 6.4
fake_fp "$T/b200.json" nvidia sm_100 2.11.0+cu130 ""

# Archives "built" on each machine, and a larger one (3 MB incompressible) for the cut connection.
"$CCPACK" create -q -o "$T/base.ccpack" "${DIRS[@]}"
"$PY" "$HELP" set-fingerprint "$T/base.ccpack" "$T/h100.ccpack" "$T/h100.json"
"$PY" "$HELP" set-fingerprint "$T/base.ccpack" "$T/mi300.ccpack" "$T/mi300.json"
mkdir -p "$T/bigcache/x" && head -c 3000000 /dev/urandom >"$T/bigcache/x/blob.bin"
"$CCPACK" create -q -o "$T/big0.ccpack" --inductor-dir "$T/bigcache"
"$PY" "$HELP" set-fingerprint "$T/big0.ccpack" "$T/big.ccpack" "$T/h100.json"
"$CCPACK" verify -q "$T/h100.ccpack" && "$CCPACK" verify -q "$T/big.ccpack" && ok || bad "faked archives do not verify"


# ================================= plain HTTP ================================================================
start_registry plain http ""
serve_py proxy "$T/proxy.port" "$PORT_plain" "$T/proxy.log"
R="127.0.0.1:$(cat "$T/proxy.port")"
: >"$T/proxy.log"

expect 2 "" -- "$CCPACK" push "$T/h100.ccpack"
expect 2 "invalid repository" -- "$CCPACK" push --plain-http "$T/h100.ccpack" "$R/Bad"
expect 2 "invalid registry host" -- "$CCPACK" push --plain-http "$T/h100.ccpack" "http://$R/x"
# Plain HTTP only when asked: without --plain-http ccpack speaks TLS to a plain server and fails, and says what
# to do (docker-registry itself here, as a user meets it; then through the proxy).
PLAIN_HINT="; if 127\.0\.0\.1:[0-9]+ serves plain HTTP, pass --plain-http \(or set insecure = true in its registries.conf entry\)$"
expect 1 "SSL connect error \(after [0-9]+ attempts\); if 127\.0\.0\.1:$PORT_plain serves plain HTTP, pass --plain-http \(or set insecure = true in its registries.conf entry\)$" -- \
  "$CCPACK" pull "127.0.0.1:$PORT_plain/cache:h100" -o "$T/x.ccpack" --fingerprint "$T/h100.json"
expect 1 "$PLAIN_HINT" -- "$CCPACK" push "$T/h100.ccpack" "127.0.0.1:$PORT_plain/cache:h100"
expect 1 "$PLAIN_HINT" -- "$CCPACK" restore "oci://127.0.0.1:$PORT_plain/cache:h100" --inductor-dir "$T/x/ind"
expect 1 "$PLAIN_HINT" -- "$CCPACK" pull "$R/cache:h100" -o "$T/x.ccpack" --fingerprint "$T/h100.json"

expect 0 "layer .* uploaded" -- "$CCPACK" push --plain-http "$T/h100.ccpack" "oci://$R/cache:h100"
expect 0 "already present" -- "$CCPACK" push --plain-http "$T/h100.ccpack" "$R/cache:h100"
expect 0 "" -- "$CCPACK" push --plain-http --json "$T/h100.ccpack" "$R/cache:h100"
holds "push --json: layer skipped" [ "$(field 'j["layer_uploaded"]')" = False ]
MDIGEST=$(field 'j["manifest_digest"]')
holds "push --json layer digest" [ "$(field 'j["layer_digest"]')" = "sha256:$(sha "$T/h100.ccpack")" ]
expect 0 "pulled .* digest OK" -- "$CCPACK" pull --plain-http "$R/cache:h100" -o "$T/pulled.ccpack" --fingerprint "$T/h100.json"
holds "push then pull is byte-identical" cmp -s "$T/h100.ccpack" "$T/pulled.ccpack"
# --plain-http from the environment an init container sets.
CCPACK_PLAIN_HTTP=1 expect 0 "pulled .* digest OK" -- "$CCPACK" pull "$R/cache:h100" -o "$T/pulled-env.ccpack" --fingerprint "$T/h100.json"
CCPACK_PLAIN_HTTP=true expect 2 "CCPACK_PLAIN_HTTP must be 1 or 0" -- "$CCPACK" pull "$R/cache:h100" -o "$T/pulled-env.ccpack" --fingerprint "$T/h100.json"
# By digest, and with the fingerprint from the environment.
CCPACK_FINGERPRINT_FILE="$T/h100.json" expect 0 "" -- "$CCPACK" pull --plain-http "$R/cache@$MDIGEST" -o "$T/pulled2.ccpack"
holds "pull by digest is byte-identical" cmp -s "$T/h100.ccpack" "$T/pulled2.ccpack"

# A restore of the pulled archive equals a local restore of the original.
"$CCPACK" restore -q "$T/h100.ccpack" --inductor-dir "$T/local/ind" --triton-dir "$T/local/tri"
"$CCPACK" restore -q "$T/pulled.ccpack" --inductor-dir "$T/remote/ind" --triton-dir "$T/remote/tri"
# (group files name their own folder; markers hold the time of their restore)
holds "restored trees equal" diff -r --exclude="__grp__*.json" --exclude=.ccpack-marker.json "$T/local" "$T/remote"

# skopeo, as an independent client, reads what push wrote.
skopeo inspect --raw --tls-verify=false "docker://$R/cache:h100" >"$T/skopeo-raw.json" 2>"$T/skopeo.err"
holds "skopeo inspect --raw digest = push's manifest digest" [ "sha256:$(sha "$T/skopeo-raw.json")" = "$MDIGEST" ]
holds "artifactType and annotations" grep -q '"artifactType":"application/vnd.ccpack.archive.v1".*"org.ccpack.fp.gpu.arch":"sm_90"' "$T/skopeo-raw.json"
skopeo copy -q --src-tls-verify=false "docker://$R/cache:h100" "oci:$T/layout:h100" 2>"$T/skopeo.err" || bad "skopeo copy: $(cat "$T/skopeo.err")"
holds "skopeo copy keeps the layer bytes" cmp -s "$T/h100.ccpack" "$T/layout/blobs/sha256/$(sha "$T/h100.ccpack")"
holds "skopeo copy keeps the manifest digest" grep -q "$MDIGEST" "$T/layout/index.json"

# --as-image: also a plain one-layer image that kubelet (and skopeo) treat as any image; its layer is a tar that
# holds the archive file.
expect 0 "pushed image .*/cache:h100-image" -- "$CCPACK" push --plain-http --as-image "$T/h100.ccpack" "$R/cache:h100"
skopeo inspect --tls-verify=false "docker://$R/cache:h100-image" >"$T/image-inspect.json" 2>"$T/skopeo.err" || bad "skopeo inspect image: $(cat "$T/skopeo.err")"
holds "image is linux/amd64" grep -q '"Architecture": "amd64"' "$T/image-inspect.json"
skopeo copy -q --src-tls-verify=false "docker://$R/cache:h100-image" "oci:$T/imglayout:img" 2>"$T/skopeo.err" || bad "skopeo copy image: $(cat "$T/skopeo.err")"
skopeo inspect --raw --tls-verify=false "docker://$R/cache:h100-image" >"$T/image-raw.json" 2>/dev/null
LAYER=$("$PY" -c '
import json,sys
m=json.load(open(sys.argv[1]))
assert m["layers"][0]["mediaType"]=="application/vnd.oci.image.layer.v1.tar" and "artifactType" not in m, m
print(m["layers"][0]["digest"])' "$T/image-raw.json")
curl -s --max-time 30 -o "$T/image-layer.tar" "http://$R/v2/cache/blobs/$LAYER"
holds "image layer digest" [ "sha256:$(sha "$T/image-layer.tar")" = "$LAYER" ]
mkdir -p "$T/imgfs" && tar -xf "$T/image-layer.tar" -C "$T/imgfs"
holds "the image layer holds the archive unchanged" cmp -s "$T/h100.ccpack" "$T/imgfs/h100.ccpack"
expect 2 "invalid tag" -- "$CCPACK" push --plain-http --as-image --image-tag 'bad tag' "$T/h100.ccpack" "$R/cache:h100"

# An index with archives for two GPU targets: each machine pulls its own.
expect 0 "index entry for gpu.vendor=nvidia gpu.arch=sm_90" -- "$CCPACK" push --plain-http --index "$T/h100.ccpack" "$R/cache:fleet"
expect 0 "index entry for gpu.vendor=amd gpu.arch=gfx942" -- "$CCPACK" push --plain-http --index "$T/mi300.ccpack" "$R/cache:fleet"
expect 0 "" -- "$CCPACK" push --plain-http --index --json "$T/h100.ccpack" "$R/cache:fleet"
holds "re-push replaces the entry" [ "$(field 'j["replaced_entries"]')" = 1 ]
skopeo inspect --raw --tls-verify=false "docker://$R/cache:fleet" >"$T/index.json" 2>/dev/null
holds "index has two entries, no artifactType" "$PY" -c '
import json,sys; d=json.load(open(sys.argv[1]))
assert len(d["manifests"])==2 and "artifactType" not in d and d["mediaType"].endswith("index.v1+json"), d' "$T/index.json"
expect 0 "" -- "$CCPACK" pull --plain-http "$R/cache:fleet" -o "$T/f-h100.ccpack" --fingerprint "$T/h100.json"
holds "H100 machine pulls the H100 archive" cmp -s "$T/h100.ccpack" "$T/f-h100.ccpack"
expect 0 "" -- "$CCPACK" pull --plain-http "$R/cache:fleet" -o "$T/f-mi300.ccpack" --fingerprint "$T/mi300.json"
holds "MI300 machine pulls the MI300 archive" cmp -s "$T/mi300.ccpack" "$T/f-mi300.ccpack"
skopeo copy -q --all --src-tls-verify=false "docker://$R/cache:fleet" "oci:$T/layout:fleet" 2>"$T/skopeo.err" || bad "skopeo copy --all: $(cat "$T/skopeo.err")"
holds "skopeo copy --all keeps the index digest" grep -q "sha256:$(sha "$T/index.json")" "$T/layout/index.json"

# ls: what a tag holds, with each archive's selection, size and digest, fetching no blob.
: >"$T/proxy.log"
expect 0 "" -- "$CCPACK" ls --plain-http --json "oci://$R/cache:fleet"
holds "ls --json: the index's two archives, their selection, size and digest" "$PY" -c '
import hashlib, json, sys
j = json.load(open(sys.argv[1]))
files = {"sm_90": sys.argv[2], "gfx942": sys.argv[3]}
assert j["index"] is True and j["digest"] == "sha256:" + sys.argv[4] and len(j["archives"]) == 2, j
for a in j["archives"]:
    data = open(files[a["selection"]["gpu.arch"]], "rb").read()
    assert a["ccpack"] is True and a["bytes"] == len(data) and a["digest"] == "sha256:" + hashlib.sha256(data).hexdigest(), a
    assert list(a["selection"])[:3] == ["gpu.vendor", "gpu.arch", "torch.version"], a
assert sorted(a["selection"]["torch.version"] for a in j["archives"]) == ["2.11.0+cu130", "2.11.0+rocm6.4"], j' \
  "$T/out" "$T/h100.ccpack" "$T/mi300.ccpack" "$(sha "$T/index.json")"
holds "ls fetched no blob" [ "$(grep -c '/blobs/' "$T/proxy.log")" -eq 0 ]
# The listing goes to standard output; standard error stays empty.
expect 0 "" -- "$CCPACK" ls --plain-http "oci://$R/cache:fleet"
holds "ls writes its listing to standard output, nothing to standard error" [ ! -s "$T/err" ]
holds "ls says what the tag names" grep -Eq "/cache:fleet: index sha256:[0-9a-f]{64}, 2 archives$" "$T/out"
holds "ls names each archive by digest, size and selection" grep -Eq \
  "^  sha256:$(sha "$T/mi300.ccpack")  [0-9.]+ MB  gpu.vendor=amd gpu.arch=gfx942 " "$T/out"
expect 0 "" -- "$CCPACK" ls --plain-http "$R/cache:h100"
holds "ls of one manifest" grep -Eq "/cache:h100: manifest sha256:[0-9a-f]{64}, 1 archive$" "$T/out"
holds "ls of one manifest names its archive" grep -Eq "^  sha256:$(sha "$T/h100.ccpack")  .*gpu.arch=sm_90 " "$T/out"
expect 1 "cache:nothing not found in the registry" -- "$CCPACK" ls --plain-http "oci://$R/cache:nothing"

# check oci://: the archive a restore would choose here, judged on its signed fingerprint from the header frame
# alone (one ranged blob request, up to the header's size), nothing written.
: >"$T/proxy.log"
expect 0 "the archive fits this machine" -- "$CCPACK" check --plain-http "oci://$R/cache:fleet" --fingerprint "$T/mi300.json"
holds "check oci:// read the header frame only" "$PY" -c '
import re, sys
blobs = [l.split() for l in open(sys.argv[1]) if "/blobs/" in l]
assert len(blobs) == 1 and blobs[0][0] == "GET" and blobs[0][1].endswith(sys.argv[2]), blobs
assert re.fullmatch(r"bytes=0-\d+", blobs[0][4]) and int(blobs[0][4].split("-")[1]) < int(sys.argv[3]), blobs' \
  "$T/proxy.log" "$(sha "$T/mi300.ccpack")" "$(stat -c %s "$T/mi300.ccpack")"
expect 0 "" -- "$CCPACK" check --plain-http --json "oci://$R/cache:fleet" --fingerprint "$T/h100.json"
holds "check oci:// --json: the H100 archive's fingerprint judged" "$PY" -c '
import json, sys
j = json.load(open(sys.argv[1]))
arch = [f for f in j["fingerprint"]["fields"] if f["field"] == "gpu.arch"]
assert j["archive"] == sys.argv[2] and arch and arch[0]["archive"] == "sm_90", j' "$T/out" "oci://$R/cache:fleet"
expect 3 "does not fit this machine: .*gpu.arch" -- "$CCPACK" check --plain-http "oci://$R/cache:h100" --fingerprint "$T/mi300.json"
# Without its scheme a reference is not a file: the line says how to write it (restore alike).
expect 2 "^ccpack: error: no file '$R/cache:h100'; a registry reference is written with its scheme: oci://$R/cache:h100$" -- \
  "$CCPACK" check --plain-http "$R/cache:h100" --fingerprint "$T/mi300.json"
expect 2 "no file 'registry.example.com/team/cache:v1'; a registry reference is written with its scheme: oci://registry.example.com/team/cache:v1" -- \
  "$CCPACK" restore registry.example.com/team/cache:v1 --fingerprint "$T/mi300.json"
expect 1 "cannot open archive 'no-such.ccpack': No such file or directory" -- "$CCPACK" check no-such.ccpack --fingerprint "$T/mi300.json"
: >"$T/proxy.log"
expect 3 "no archive in .*cache:fleet fits this machine" -- "$CCPACK" check --plain-http "oci://$R/cache:fleet" --fingerprint "$T/b200.json"
holds "check oci:// with nothing for this machine fetched no blob" [ "$(grep -c '/blobs/' "$T/proxy.log")" -eq 0 ]
expect 1 "cache:nothing not found in the registry" -- "$CCPACK" check --plain-http "oci://$R/cache:nothing" --fingerprint "$T/h100.json"

# A third machine: exit 3, the list of what is available, and not one blob byte transferred.
: >"$T/proxy.log"
expect 3 "no archive in .*cache:fleet fits this machine \(gpu.vendor=nvidia gpu.arch=sm_100.*available: gpu.vendor=.*gpu.arch=gfx942.*; gpu.vendor=nvidia gpu.arch=sm_90" -- \
  "$CCPACK" pull --plain-http "$R/cache:fleet" -o "$T/f-b200.ccpack" --fingerprint "$T/b200.json"
holds "refused pull leaves no file" [ ! -e "$T/f-b200.ccpack" ]
holds "refused pull read the index only" [ "$(grep -c . "$T/proxy.log")" -ge 1 ]
holds "refused pull fetched zero blob bytes" [ "$(grep -c '/blobs/' "$T/proxy.log")" -eq 0 ]

# Annotations are hints: a manifest whose annotations lie is refused on the signed fingerprint, after the
# header frame only.
"$PY" - "$T/skopeo-raw.json" "$T/liar.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["annotations"]["org.ccpack.fp.gpu.arch"] = "sm_100"
open(sys.argv[2], "w").write(json.dumps(d, separators=(",", ":")))
EOF
curl -s --max-time 10 -o /dev/null -X PUT -H 'Content-Type: application/vnd.oci.image.manifest.v1+json' --data-binary @"$T/liar.json" \
  "http://$R/v2/cache/manifests/liar"
: >"$T/proxy.log"
expect 3 "signed fingerprint does not fit this machine: gpu.arch is 'sm_90' in the archive, 'sm_100' here" -- \
  "$CCPACK" pull --plain-http "$R/cache:liar" -o "$T/liar.ccpack" --fingerprint "$T/b200.json"
HSIZE=$(field 'j["annotations"]["org.ccpack.header.size"]' "$T/liar.json")
holds "lying annotations: only the header frame was read" [ "$(awk '/\/blobs\//{n+=$4} END{print n+0}' "$T/proxy.log")" = "$HSIZE" ]
holds "refused pull leaves no file" [ ! -e "$T/liar.ccpack" ]

# restore oci://: straight from the registry into the cache folders, the same trees as a local restore.
same_tree() {
  # group files name their folder; a registry restore leaves nothing beside the folders
  if diff -r --exclude=.ccpack-marker.json --exclude=.ccpack-entries --exclude='__grp__*.json' "$1" "$2" >/dev/null &&
     diff <(cd "$1" && find . -printf '%p %y %m
' | sort) <(cd "$2" && find . -printf '%p %y %m
' | sort) >/dev/null; then ok
  else bad "trees differ: $1 vs $2"; fi
}
"$CCPACK" restore -q "$T/mi300.ccpack" --inductor-dir "$T/local-mi/ind" --triton-dir "$T/local-mi/tri"
CCPACK_FINGERPRINT_FILE="$T/mi300.json" expect 0 "triton: restored" -- \
  "$CCPACK" restore --plain-http "oci://$R/cache:fleet" --inductor-dir "$T/oci-mi/ind" --triton-dir "$T/oci-mi/tri"
same_tree "$T/local-mi" "$T/oci-mi"
# The trust gate runs on the fetched header: without the opt-out, the unsigned archive is refused, nothing written.
CCPACK_ALLOW_UNSIGNED=0 CCPACK_FINGERPRINT_FILE="$T/mi300.json" expect 4 "is unsigned and unsigned archives are refused" -- \
  "$CCPACK" restore --plain-http "oci://$R/cache:fleet" --inductor-dir "$T/gate/ind" --triton-dir "$T/gate/tri"
holds "restore oci:// refused by the trust gate wrote no inductor folder" [ ! -e "$T/gate/ind" ]
holds "restore oci:// refused by the trust gate wrote no triton folder" [ ! -e "$T/gate/tri" ]
: >"$T/proxy.log"
CCPACK_FINGERPRINT_FILE="$T/mi300.json" expect 0 "triton: already restored" -- \
  "$CCPACK" restore --plain-http "oci://$R/cache:fleet" --inductor-dir "$T/oci-mi/ind" --triton-dir "$T/oci-mi/tri"
HSIZE_MI=$(awk '/\/blobs\//{n+=$4} END{print n+0}' "$T/proxy.log")
# The header frame of the pushed file: a zstd skippable frame, 8 bytes then its little-endian 32-bit length.
HEADER_MI=$(header_size "$T/mi300.ccpack")
holds "already restored: exactly the header frame was read ($HSIZE_MI bytes, header $HEADER_MI)" [ "$HSIZE_MI" = "$HEADER_MI" ]
: >"$T/proxy.log"
CCPACK_FINGERPRINT_FILE="$T/b200.json" expect 3 "no archive in .* fits this machine" -- \
  "$CCPACK" restore --plain-http "oci://$R/cache:fleet" --inductor-dir "$T/oci-mi/ind" --triton-dir "$T/oci-mi/tri"
holds "refused restore fetched zero blob bytes" [ "$(grep -c '/blobs/' "$T/proxy.log")" -eq 0 ]
same_tree "$T/local-mi" "$T/oci-mi"

# A connection cut mid-payload resumes with Range and completes.
expect 0 "" -- "$CCPACK" push --plain-http "$T/big.ccpack" "$R/cache:big"
serve_py proxy "$T/cut.port" "$PORT_plain" "$T/cut.log" --cut-after 1000000
expect 0 "digest OK" -- "$CCPACK" pull --plain-http "127.0.0.1:$(cat "$T/cut.port")/cache:big" -o "$T/big-pulled.ccpack" --fingerprint "$T/h100.json"
holds "cut transfer completes byte-identical" cmp -s "$T/big.ccpack" "$T/big-pulled.ccpack"
holds "the proxy cut the transfer" grep -q ' CUT$' "$T/cut.log"
# The archive is one frame: the resume starts at the end of the last verified frame, the header frame's end.
RESUME=$(header_size "$T/big.ccpack")
holds "the rest came with a Range request from the last verified frame" grep -Eq "GET /v2/cache/blobs/sha256:[0-9a-f]+ 206 [0-9]+ bytes=$RESUME-[0-9]+\$" "$T/cut.log"

# ... and restore oci:// through a cut connection gives the same trees as a local restore.
serve_py proxy "$T/cut2.port" "$PORT_plain" "$T/cut2.log" --cut-after 1000000
"$CCPACK" restore -q "$T/big.ccpack" --inductor-dir "$T/local-big/ind"
CCPACK_FINGERPRINT_FILE="$T/h100.json" expect 0 "inductor: restored" -- \
  "$CCPACK" restore --plain-http "oci://127.0.0.1:$(cat "$T/cut2.port")/cache:big" --inductor-dir "$T/oci-big/ind"
same_tree "$T/local-big" "$T/oci-big"
holds "restore: the proxy cut the transfer" grep -q ' CUT$' "$T/cut2.log"

# Transient answers are retried: 503 with backoff, 429 after its Retry-After.
serve_py proxy "$T/flaky.port" "$PORT_plain" "$T/flaky.log" --fail-first 2:503
serve_py proxy "$T/busy.port" "$PORT_plain" "$T/busy.log" --fail-first 1:429
expect 0 "" -- "$CCPACK" pull --plain-http "127.0.0.1:$(cat "$T/flaky.port")/cache:h100" -o "$T/flaky.ccpack" --fingerprint "$T/h100.json"
holds "pull after two 503s is byte-identical" cmp -s "$T/h100.ccpack" "$T/flaky.ccpack"
holds "two 503s were answered" [ "$(grep -c ' 503 ' "$T/flaky.log")" -eq 2 ]
START=$(date +%s%N)
expect 0 "" -- "$CCPACK" pull --plain-http "127.0.0.1:$(cat "$T/busy.port")/cache:h100" -o "$T/busy.ccpack" --fingerprint "$T/h100.json"
holds "429 honoured Retry-After: 1" [ $(( ($(date +%s%N) - START) / 1000000 )) -ge 1000 ]
holds "pull after a 429 is byte-identical" cmp -s "$T/h100.ccpack" "$T/busy.ccpack"

# A hostile registry: a 5 MiB manifest is refused at the 4 MiB bound, once (no retry).
serve_py proxy "$T/huge.port" "$PORT_plain" "$T/huge.log" --huge-manifests 1
expect 1 "exceeds 4194304 bytes" -- "$CCPACK" pull --plain-http "127.0.0.1:$(cat "$T/huge.port")/cache:h100" -o "$T/huge.ccpack" --fingerprint "$T/h100.json"
holds "an oversized document is not retried" [ "$(grep -c 'manifests' "$T/huge.log")" -eq 1 ]

# Tampering with the blob inside the registry's storage: exit 4, no file, and an existing file untouched.
BLOB="$DIR_plain/data/docker/registry/v2/blobs/sha256/$(sha "$T/h100.ccpack" | cut -c1-2)/$(sha "$T/h100.ccpack")/data"
holds "blob in storage" [ -f "$BLOB" ]
"$PY" - "$BLOB" <<'EOF'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[-100] ^= 0x55
open(p, "wb").write(bytes(b))
EOF
echo previous >"$T/keep.ccpack"
expect 4 "does not match the SHA-256 its manifest gives \(corrupt or tampered blob\)" -- "$CCPACK" pull --plain-http "$R/cache:h100" -o "$T/keep.ccpack" --fingerprint "$T/h100.json"
holds "tampered pull leaves the previous file" [ "$(cat "$T/keep.ccpack")" = previous ]
holds "tampered pull leaves no temporary" [ "$(ls "$T" | grep -c 'keep.ccpack.tmp')" -eq 0 ]

# restore oci:// of the tampered blob: exit 4 and the previous cache stays.
"$CCPACK" restore -q "$T/mi300.ccpack" --inductor-dir "$T/prev/ind" --triton-dir "$T/prev/tri"
CCPACK_FINGERPRINT_FILE="$T/h100.json" expect 4 "SHA-256 of the compressed bytes mismatch|corrupt" -- \
  "$CCPACK" restore --plain-http "oci://$R/cache:h100" --inductor-dir "$T/prev/ind" --triton-dir "$T/prev/tri"
same_tree "$T/local-mi" "$T/prev"
holds "failed restore leaves no staging folder" [ "$(ls -A "$T/prev" | grep -c ccpack-staging)" -eq 0 ]

# Credentials never reach a redirect target on another port; the presigned query never reaches a message.
serve_py backend "$T/backend.port" "$PORT_plain" "$T/backend.log"
serve_py proxy "$T/auth.port" "$PORT_plain" "$T/auth.log" --basic "alice:s3cret-pw" --redirect-blobs "$(cat "$T/backend.port")"
RA="127.0.0.1:$(cat "$T/auth.port")"
printf '{"auths":{"%s":{"auth":"%s"}}}\n' "$RA" "$(printf 'alice:s3cret-pw' | base64)" >"$T/auth-alice.json"
expect 1 "access denied \(HTTP 401\)" -- "$CCPACK" pull --plain-http "$RA/cache:fleet" -o "$T/r.ccpack" --fingerprint "$T/mi300.json"
expect 0 "" -- "$CCPACK" pull --plain-http --authfile "$T/auth-alice.json" "$RA/cache:fleet" -o "$T/r.ccpack" --fingerprint "$T/mi300.json"
holds "pull through a redirect is byte-identical" cmp -s "$T/mi300.ccpack" "$T/r.ccpack"
holds "the backend served the blob" grep -q '^HEADERS GET /v2/cache/blobs/' "$T/backend.log"
holds "no Authorization reached the backend" [ "$(grep -ci 'authorization' "$T/backend.log")" -eq 0 ]
# The same through docker's config.json, via DOCKER_CONFIG.
mkdir -p "$T/dockercfg" && cp "$T/auth-alice.json" "$T/dockercfg/config.json"
DOCKER_CONFIG="$T/dockercfg" expect 0 "" -- "$CCPACK" pull --plain-http "$RA/cache:fleet" -o "$T/r2.ccpack" --fingerprint "$T/mi300.json"

# ... and through a credential helper (credHelpers), which gets the server on stdin; its output is never shown.
mkdir -p "$T/bin" "$T/helpercfg"
printf '#!/bin/sh\nread server\necho "$server" >>"%s"\necho "{\\"ServerURL\\":\\"$server\\",\\"Username\\":\\"alice\\",\\"Secret\\":\\"s3cret-pw\\"}"\n' \
  "$T/helper.log" >"$T/bin/docker-credential-fake"
chmod +x "$T/bin/docker-credential-fake"
printf '{"credHelpers":{"%s":"fake"}}\n' "$RA" >"$T/helpercfg/config.json"
PATH="$T/bin:$PATH" DOCKER_CONFIG="$T/helpercfg" expect 0 "" -- \
  "$CCPACK" pull --plain-http "$RA/cache:fleet" -o "$T/r3.ccpack" --fingerprint "$T/mi300.json"
holds "credential helper asked for this registry" grep -qx "$RA" "$T/helper.log"
holds "pull with a credential helper is byte-identical" cmp -s "$T/mi300.ccpack" "$T/r3.ccpack"

# ================================= TLS + htpasswd ============================================================
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" \
  -keyout "$T/tls.key" -out "$T/tls.crt" 2>/dev/null
htpasswd -Bbn bob 'hunter2-tls' >"$T/htpasswd" 2>/dev/null
start_registry tls https "  tls:
    certificate: $T/tls.crt
    key: $T/tls.key
auth:
  htpasswd:
    realm: ccpack-test
    path: $T/htpasswd"
RT="127.0.0.1:$PORT_tls"
printf '{"auths":{"%s":{"username":"bob","password":"hunter2-tls"}}}\n' "$RT" >"$T/auth-bob.json"
expect 1 "certificate|SSL" -- "$CCPACK" push --authfile "$T/auth-bob.json" "$T/h100.ccpack" "$RT/cache:h100"
expect 1 "access denied" -- "$CCPACK" push --ca-file "$T/tls.crt" "$T/h100.ccpack" "$RT/cache:h100"
REGISTRY_AUTH_FILE="$T/auth-bob.json" expect 0 "uploaded" -- "$CCPACK" push --ca-file "$T/tls.crt" "$T/h100.ccpack" "$RT/cache:h100"
expect 0 "" -- "$CCPACK" pull --ca-file "$T/tls.crt" --authfile "$T/auth-bob.json" "$RT/cache:h100" -o "$T/tls.ccpack" --fingerprint "$T/h100.json"
holds "TLS + basic auth round trip" cmp -s "$T/h100.ccpack" "$T/tls.ccpack"
skopeo inspect --raw --cert-dir "$T/nocerts" --tls-verify=false --creds bob:hunter2-tls "docker://$RT/cache:h100" >"$T/tls-raw.json" 2>/dev/null
holds "skopeo reads the TLS push" grep -q 'application/vnd.ccpack.archive.v1' "$T/tls-raw.json"

# ================================= bearer tokens =============================================================
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=ccpack-token" -keyout "$T/token.key" -out "$T/token.crt" 2>/dev/null
serve_py token-server "$T/token.port" "$T/token.key" "$T/token.crt" "carol:tok-pw" "$T/token.log"
start_registry bearer http "auth:
  token:
    realm: http://127.0.0.1:$(cat "$T/token.port")/token
    service: ccpack-test
    issuer: ccpack-test-issuer
    rootcertbundle: $T/token.crt"
RB="127.0.0.1:$PORT_bearer"
printf '{"auths":{"%s":{"auth":"%s"}}}\n' "$RB" "$(printf 'carol:tok-pw' | base64)" >"$T/auth-carol.json"
expect 1 "token server .* answered HTTP 401" -- "$CCPACK" push --plain-http "$T/h100.ccpack" "$RB/team/cache:h100"
expect 0 "uploaded" -- "$CCPACK" push --plain-http --authfile "$T/auth-carol.json" --index "$T/h100.ccpack" "$RB/team/cache:fleet"
expect 0 "" -- "$CCPACK" pull --plain-http --authfile "$T/auth-carol.json" "$RB/team/cache:fleet" -o "$T/bearer.ccpack" --fingerprint "$T/h100.json"
holds "bearer round trip" cmp -s "$T/h100.ccpack" "$T/bearer.ccpack"
holds "push asked for pull,push" grep -q 'TOKEN auth=ok scope=repository:team/cache:pull,push' "$T/token.log"
holds "pull asked for pull only" grep -q 'TOKEN auth=ok scope=repository:team/cache:pull$' "$T/token.log"

# Secrets never appear in any output.
holds "no secret in any output" [ "$(grep -Ec 's3cret-pw|hunter2-tls|tok-pw|s3cr3t|YWxpY2U6czNjcmV0LXB3' "$T/all-stderr")" -eq 0 ]

finish
