#!/bin/bash
# The performance table of docs/PERFORMANCE.md on the H200 machine (or any host without a compiler): the portable
# package's ccpack against the stock tools, the real fixture and the 100k synthetic cache, under a quota of 1 and
# 2 CPUs and with all of them (scripts/bench/bench_table.py, which makes the synthetic cache on first use).
# Usage: scripts/gpu/bench.sh PACKAGE.tar.gz FIXTURE.tar.xz ZSTD [bench_table.py options...]
#   PACKAGE.tar.gz: scripts/ci/package's output; FIXTURE.tar.xz: a tar of inductor_cache/ and triton_cache/;
#   ZSTD: a zstd program for the stock commands (the H200 machine has none). Extra options go to bench_table.py
#   (default: --cases fixture,100k --cpus 1,2,all --pairs 2 --noops 7). Prints the table; exits with its status.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 PACKAGE.tar.gz FIXTURE.tar.xz ZSTD [bench_table.py options...]" >&2; exit 2; }
for f in "$1" "$2" "$3"; do [ -f "$f" ] || { echo "$0: no file $f" >&2; exit 2; }; done
package=$(realpath "$1") fixture=$(realpath "$2") zstd=$(realpath "$3")
shift 3
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=${TMPDIR:-/tmp}/ccpack-gpu-bench
rm -rf "$work/pkg" "$work/cache" && mkdir -p "$work/pkg" "$work/cache"
tar -xzf "$package" -C "$work/pkg" --strip-components=1
tar -xJf "$fixture" -C "$work/cache"
[ -x "$work/pkg/bin/ccpack" ] || { echo "$0: $package holds no bin/ccpack" >&2; exit 2; }
if [ ! -d "$work/cache/inductor_cache" ] || [ ! -d "$work/cache/triton_cache" ]; then
  echo "$0: $fixture holds no inductor_cache/ and triton_cache/" >&2
  exit 2
fi
[ $# -gt 0 ] || set -- --cases fixture,100k --cpus 1,2,all --pairs 2 --noops 7
exec python3 "$repo/scripts/bench/bench_table.py" --ccpack "$work/pkg/bin/ccpack" --zstd "$zstd" --cache "$work/cache" \
  --workdir "$work/bench" "$@"
