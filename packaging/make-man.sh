#!/bin/sh
# Builds ccpack.1.gz from the binary's own help, so the man page can never disagree with it:
# help2man turns `ccpack --help` and `ccpack --version` into the page, and an include file adds one section per
# subcommand, read off the "Subcommands:" list of --help, holding that subcommand's --help.
# Usage: make-man.sh PATH/TO/ccpack OUT.1.gz   (HELP2MAN names help2man when not on PATH)
set -eu
bin=$1
out=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
{
  echo "[COMMANDS]"
  "$bin" --help | sed -n '/^Subcommands:/,/^$/p' | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p' | while read -r cmd; do
    echo ".SS \"ccpack $cmd\""
    echo ".nf"
    "$bin" "$cmd" --help | sed 's/\\/\\\\/g; s/^\./\\\&./'
    echo ".fi"
  done
  echo "[SEE ALSO]"
  echo "The README shipped in /usr/share/doc/ccpack (or share/doc/ccpack of the .tar.gz)."
} >"$work/include"
"${HELP2MAN:-help2man}" --no-info --no-discard-stderr --section=1 --include="$work/include" \
  --name="pack and restore PyTorch torch.compile caches" --output="$work/ccpack.1" "$bin"
gzip -9n <"$work/ccpack.1" >"$out.tmp"
mv "$out.tmp" "$out"
