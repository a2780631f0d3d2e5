#!/usr/bin/env bash
# Relocation of the real fixture, checked by an oracle independent of ccpack (tests/cli/helpers/pickle_oracle.py, Python's
# own pickle reader): restored into other folders, every FX-graph and AOTAutograd entry is the packed pickle with
# exactly its build-folder paths moved, and every other file (group files aside) is as packed; restored with
# --no-relocate, the oracle names the first path left behind. Needs the fixture (../shared/fixtures): without it
# the suite exits 77, which CTest reports as skipped, or fails when CCPACK_REQUIRE_FIXTURES=1.
# Usage: relocate_test.sh CCPACK FIXTURE_TAR_XZ
set -u
SUITE=relocate
CCPACK=$1
FIXTURE=${CCPACK_FIXTURE:-$2}  # $CCPACK_FIXTURE overrides the path, as for the unit tests
ORACLE="$(cd "$(dirname "$0")/../helpers" && pwd)/pickle_oracle.py"
if [ ! -f "$FIXTURE" ]; then
  echo "relocate: the real fixture $FIXTURE is absent"
  [ "${CCPACK_REQUIRE_FIXTURES:-0}" = 1 ] && exit 1
  exit 77
fi
. "$(dirname "${BASH_SOURCE[0]}")/../helpers/harness.sh"
export CCPACK_ALLOW_UNSIGNED=1
BUILD=/workspace/inductor_cache  # the folder the fixture was built in, as its pickles name it

xz -dc "$FIXTURE" | tar -xf - -C "$T" || { bad "cannot unpack $FIXTURE"; exit 1; }
expect 0 "" -- "$CCPACK" create -q -o "$T/fx.ccpack" --inductor-dir "$T/inductor_cache" --triton-dir "$T/triton_cache"

expect 0 "" -- "$CCPACK" restore --json "$T/fx.ccpack" --inductor-dir "$T/pod/ind" --triton-dir "$T/pod/tri"
fields=$(field '" ".join(str(j["components"][0][k]) for k in ("pickle_files", "pickle_paths_rewritten", "files_unparsed"))')
[ "$fields" = "3 30 0" ] && ok || bad "restore --json: pickle_files pickle_paths_rewritten files_unparsed = '$fields', expected '3 30 0'"
python3 "$ORACLE" "$T/inductor_cache" "$T/pod/ind" "$BUILD" "$T/triton_cache" "$T/pod/tri" >"$T/oracle" 2>&1
[ "$(cat "$T/oracle")" = "ok: 3 pickles, 30 paths moved, 3188 other files as packed" ] && ok || bad "oracle on the relocated restore: $(cat "$T/oracle")"

# The same restore without the rewrite fails the oracle, at the first path it left in the build folder.
expect 0 "" -- "$CCPACK" restore -q --no-relocate "$T/fx.ccpack" --inductor-dir "$T/raw/ind" --triton-dir "$T/raw/tri"
python3 "$ORACLE" "$T/inductor_cache" "$T/raw/ind" "$BUILD" "$T/triton_cache" "$T/raw/tri" >"$T/oracle" 2>&1
rc=$?
[ "$rc" -eq 1 ] && ok || bad "oracle on a restore with --no-relocate: exit $rc, expected 1"
grep -q "^FAIL fxgraph/.*'$BUILD/.*' not moved to $T/raw/ind$" "$T/oracle" && ok || bad "oracle line: $(cat "$T/oracle")"

finish
