#!/usr/bin/env bash
# Mirrors as container tools configure them (containers-registries.conf(5)): two real docker-registry instances on
# 127.0.0.1, an origin and a pull-through cache in front of it (distribution's proxy.remoteurl). Pinned: pulls go
# through the mirror; eight concurrent restores of one tag into a node's shared folders cost the origin what one
# cold fetch through the mirror costs; a mirror that is down falls back to the origin; a mirror that accepts
# connections and never answers costs one stall and is skipped from then on (timed); a mirror that serves other
# bytes is an integrity error (exit 4), never a fallback.
# Usage: registry_mirror_test.sh PATH/TO/ccpack PATH/TO/tests/data
set -u
export CCPACK_ALLOW_UNSIGNED=1 CCPACK_ON_MISMATCH=force  # archives made here; fleet_test.sh covers the policy
SUITE=mirror
. "$(dirname "${BASH_SOURCE[0]}")/../helpers/harness.sh"
suite_paths "$@"
isolate_home

# The registries' access logs (one line per request): $DIR_origin/log, $DIR_mirror/log (harness.sh start_registry).
# origin_gets DIGEST: the GETs of a blob in the origin's access log.
origin_gets() { grep -c "\"GET /v2/model/blobs/sha256:$1 HTTP" "$DIR_origin/log"; }

start_registry origin http
# The pull-through cache starts once its remote answers (it checks the remote at start).
start_registry mirror http "proxy:
  remoteurl: http://127.0.0.1:$PORT_origin"
O="127.0.0.1:$PORT_origin"
M="127.0.0.1:$PORT_mirror"
cat >"$T/registries.conf" <<EOF
# as podman reads it
unqualified-search-registries = ["docker.io"]

[[registry]]
prefix = "$O"
location = "$O"
insecure = true

[[registry.mirror]]
location = "$M"   # the node's pull-through cache
insecure = true
EOF

"$CCPACK" create -q -o "$T/a.ccpack" "${DIRS[@]}"
mkdir -p "$T/other/x" && head -c 200000 /dev/urandom >"$T/other/x/blob.bin"
"$CCPACK" create -q -o "$T/b.ccpack" --inductor-dir "$T/other"
"$CCPACK" push -q --plain-http "$T/a.ccpack" "$O/model:v1"
"$CCPACK" push -q --plain-http "$T/b.ccpack" "$O/model:probe"
A=$(sha "$T/a.ccpack")
B=$(sha "$T/b.ccpack")

# What one cold fetch through this mirror costs the origin (distribution's proxy fetches the blob for the client
# and again to store it).
curl -s --max-time 10 -o /dev/null "http://$M/v2/model/blobs/sha256:$B"
sleep 1
COLD=$(origin_gets "$B")
[ "$COLD" -ge 1 ] && ok || bad "the mirror did not fetch from the origin"
echo "mirror: one cold fetch through the pull-through cache = $COLD GET(s) of the blob at the origin"

# --- eight concurrent restores of one tag (a node's pods, one shared volume) --------------------------------
TGT=(--inductor-dir "$T/node/ind" --triton-dir "$T/node/tri")
for i in $(seq 8); do
  "$CCPACK" restore --json --registries-conf "$T/registries.conf" "oci://$O/model:v1" "${TGT[@]}" >"$T/r$i.json" 2>"$T/r$i.err" &
  eval "R$i=\$!"
done
for i in $(seq 8); do
  eval "wait \$R$i"
  rc=$?
  [ "$rc" -eq 0 ] && ok || bad "concurrent restore $i: exit $rc: $(cat "$T/r$i.err")"
done
sleep 1
# The restores fetch one after the other (the lock beside the folders): the first fills the cache, the others are
# served by it. Distribution stores a fetched blob in the background, so a request that comes before the store is
# done (the first restore's payload request, right after its header request; on a loaded machine a next restore's
# header request) reaches the origin once more: 2 on a quiet machine, up to 4 measured under load. Without the order
# every concurrent restore would be a cold fetch of its own (at least 8).
N=$(origin_gets "$A")
[ "$N" -ge "$COLD" ] && [ "$N" -lt 8 ] && ok || bad "eight concurrent restores: $N GETs of the blob at the origin, one cold fetch costs $COLD"
echo "mirror: eight concurrent restores = $(origin_gets "$A") GET(s) of the blob at the origin"
[ "$(grep -c "\"GET /v2/model/blobs/sha256:$A HTTP" "$DIR_mirror/log")" -ge 8 ] && ok || bad "the restores did not all ask the mirror"
"$PY" -c '
import json, sys
rs = [json.load(open(f)) for f in sys.argv[2:]]
assert all(r["registry"]["served_by"] == sys.argv[1] + "/model" for r in rs), [r["registry"]["served_by"] for r in rs]
assert sum(1 for r in rs if not r["noop"]) == 1, [r["noop"] for r in rs]' "$M" "$T"/r?.json && ok || bad "served_by / one restore writing: $(head -c 600 "$T/r1.json")"
"$CCPACK" restore -q "$T/a.ccpack" --inductor-dir "$T/want/ind" --triton-dir "$T/want/tri"
diff -r --exclude=.ccpack-marker.json --exclude='__grp__*.json' "$T/want" "$T/node" >/dev/null && ok || bad "the mirror's restore differs"

# $CONTAINERS_REGISTRIES_CONF, and pull, go through the mirror too.
CONTAINERS_REGISTRIES_CONF="$T/registries.conf" expect 0 "" -- "$CCPACK" pull --json "$O/model:v1" -o "$T/pulled.ccpack"
cmp -s "$T/pulled.ccpack" "$T/a.ccpack" && ok || bad "pull through the mirror is not byte-identical"

# --- a mirror that is down: the origin serves, with a warning -----------------------------------------------
DOWN=$("$PY" "$HERE/registry_helpers.py" free-port)
sed "s/$M/127.0.0.1:$DOWN/" "$T/registries.conf" >"$T/down.conf"
expect 0 "mirror 127.0.0.1:$DOWN failed \(.*\); trying the next endpoint" -- \
  "$CCPACK" restore --registries-conf "$T/down.conf" "oci://$O/model:v1" --inductor-dir "$T/d/ind" --triton-dir "$T/d/tri"

# --- a mirror that accepts connections and never answers: one stall, then the origin for the rest of the run ----
spawn "$PY" "$HERE/registry_helpers.py" hang "$T/hang.port" "$T/hang.log"
wait_for "$T/hang.port"
HUNG="127.0.0.1:$(cat "$T/hang.port")"
sed "s/$M/$HUNG/" "$T/registries.conf" >"$T/hang.conf"
START=$(date +%s%N)
# Bounded here (a restore that waited on every request would take ten minutes): 90 s is twice the promise.
timeout 120 "$CCPACK" restore --json --registries-conf "$T/hang.conf" "oci://$O/model:v1" \
  --inductor-dir "$T/h/ind" --triton-dir "$T/h/tri" >"$T/hang.json" 2>"$T/hang.err"
rc=$?
MS=$((($(date +%s%N) - START) / 1000000))
echo "mirror: a restore through a hung mirror took $MS ms"
[ "$rc" -eq 0 ] && ok || bad "restore through a hung mirror: exit $rc: $(head -c 600 "$T/hang.err")"
[ "$MS" -lt 90000 ] && ok || bad "restore through a hung mirror took $MS ms (limit 90000)"
json_is "$T/hang.json" "j['registry']['served_by'] == '$O/model'"
# One stall: the hung mirror is asked once, and the run warns once.
[ "$(grep -c ACCEPTED "$T/hang.log")" -eq 1 ] && ok || bad "the hung mirror was asked $(grep -c ACCEPTED "$T/hang.log") times"
[ "$(grep -c "mirror $HUNG failed" "$T/hang.err")" -eq 1 ] && ok || bad "not one warning: $(cat "$T/hang.err")"

# --- a mirror serving other bytes under the digest: exit 4, and the origin is not asked -------------------------
start_registry evil http
"$CCPACK" push -q --plain-http "$T/a.ccpack" "127.0.0.1:$PORT_evil/model:v1"
spawn "$PY" "$HERE/fault_proxy.py" "$T/evil.port" "$PORT_evil" "$T/evil.log" --corrupt-at 3000 2>/dev/null
wait_for "$T/evil.port"
sed "s/$M/127.0.0.1:$(cat "$T/evil.port")/" "$T/registries.conf" >"$T/evil.conf"
BEFORE=$(origin_gets "$A")
"$CCPACK" restore -q "$T/b.ccpack" --inductor-dir "$T/e/ind"
expect 4 "does not match|corrupt or tampered|corrupt header" -- \
  "$CCPACK" restore --registries-conf "$T/evil.conf" "oci://$O/model:v1" --inductor-dir "$T/e/ind" --triton-dir "$T/e/tri"
[ "$(origin_gets "$A")" -eq "$BEFORE" ] && ok || bad "after an integrity error the origin was asked"
grep -q CORRUPT "$T/evil.log" && ok || bad "the evil mirror did not serve"

# --- bad configurations: one line naming the file and line ----------------------------------------------------
printf '[[registry]]\nprefix = "%s\n' "$O" >"$T/bad.conf"
expect 1 "bad.conf:2: unterminated string" -- "$CCPACK" pull --registries-conf "$T/bad.conf" "$O/model:v1" -o "$T/x.ccpack"
printf '[[registry]]\nprefix = "%s"\nblocked = true\n' "$O" >"$T/blocked.conf"
expect 1 "registry $O is blocked" -- "$CCPACK" pull --registries-conf "$T/blocked.conf" "$O/model:v1" -o "$T/x.ccpack"
expect 1 "does not exist" -- "$CCPACK" pull --registries-conf "$T/none.conf" "$O/model:v1" -o "$T/x.ccpack"

finish
