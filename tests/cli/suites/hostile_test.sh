#!/usr/bin/env bash
# Hostile-archive suite: drives the real binary over archives made to attack it (by tests/cli/helpers/craft_archive.cpp)
# and over hostile cache folders on create, and pins each to its exact exit code and its exact, single error
# line. Every restore of a hostile archive must leave nothing behind: no target, no staging debris, nothing
# outside. docs/SECURITY.md maps each case to the defence it proves.
# Usage: hostile_test.sh PATH/TO/ccpack PATH/TO/ccpack_craft
set -u
# These cases attack the checks behind the signature gate (manifest, tar, links), so they opt out of signatures;
# tests/cli/suites/signing_test.sh covers the gate itself.
export CCPACK_ALLOW_UNSIGNED=1
CCPACK=$(realpath "$1")
CRAFT=$(realpath "$2")
SUITE=hostile
. "$(dirname "${BASH_SOURCE[0]}")/../helpers/harness.sh"
cases=0

# expect_line CODE LINE -- command...: exit code must be CODE and stderr must be exactly LINE (one line), or empty
# when LINE is empty (stricter than the harness's expect, which matches a pattern).
expect_line() {
  local code=$1 line=$2
  shift 3
  "$@" >"$T/out" 2>"$T/err.all"
  local rc=$?
  # The opt-out's own warning (one fixed line, printed before any archive byte is parsed) is not the archive's.
  grep -v "^ccpack: warning: --allow-unsigned: accepting '[^']*' with no signature" "$T/err.all" >"$T/err"
  if [ "$rc" -ne "$code" ]; then bad "$* -> exit $rc, expected $code; stderr: $(head -c 600 "$T/err")"; return; fi
  if [ -z "$line" ]; then ok; return; fi
  if [ "$(wc -l <"$T/err")" -ne 1 ]; then bad "$* -> $(wc -l <"$T/err") stderr lines, expected 1: $(head -c 600 "$T/err")"; return; fi
  if [ "$(cat "$T/err")" != "$line" ]; then bad "$* -> stderr"$'\n'"  got:      $(cat "$T/err")"$'\n'"  expected: $line"; return; fi
  ok
}

# refused SCENARIO ARCHIVE LINE: verify and restore refuse ARCHIVE with exit 4 and exactly LINE; the restore into
# $T/jail/SCENARIO writes nothing at all.
refused() {
  expect_line 4 "$3" -- "$CCPACK" verify "$2"
  mkdir -p "$T/jail/$1"
  expect_line 4 "$3" -- "$CCPACK" restore "$2" --inductor-dir "$T/jail/$1/ind"
  [ -z "$(ls -A "$T/jail/$1")" ] && ok || bad "$1: restore left $(ls -A "$T/jail/$1")"
}

# hostile SCENARIO LINE: the crafted archive is refused with exit 4 and exactly LINE (after "ccpack: error: ",
# with the archive's quoted path in front) by inspect, inspect --json (which dumps the manifest), verify and
# restore; restore writes nothing at all.
hostile() {
  local scenario=$1 why=$2 a="$T/$1.ccpack"
  cases=$((cases + 1))
  "$CRAFT" "$scenario" "$a" || { bad "ccpack_craft $scenario failed"; return; }
  local line="ccpack: error: '$a': $why"
  expect_line 4 "$line" -- "$CCPACK" inspect "$a"
  expect_line 4 "$line" -- "$CCPACK" inspect --json --files "$a"
  refused "$scenario" "$a" "$line"
}

# damaged SCENARIO LINE: an archive whose manifest is sound but whose payload disagrees with it. inspect reads
# only the manifest and accepts it; verify and restore refuse it with exit 4 and exactly LINE; restore writes nothing.
damaged() {
  local scenario=$1 a="$T/$1.ccpack"
  cases=$((cases + 1))
  "$CRAFT" "$scenario" "$a" || { bad "ccpack_craft $scenario failed"; return; }
  local line="ccpack: error: ${2//ARCHIVE/$a}"
  expect_line 0 "" -- "$CCPACK" inspect "$a"
  refused "$scenario" "$a" "$line"
}

isolate

# --- the crafter makes archives ccpack reads ---------------------------------------------------------------
"$CRAFT" valid "$T/valid.ccpack"
expect_line 0 "" -- "$CCPACK" verify -q "$T/valid.ccpack"
expect_line 0 "" -- "$CCPACK" restore -q "$T/valid.ccpack" --inductor-dir "$T/valid/ind"
[ "$(readlink "$T/valid/ind/alias")" = fx/a.py ] && [ "$(cat "$T/valid/ind/alias")" = "print(1)" ] && ok || bad "valid archive did not restore"

# --- 1. symlinks that escape through other symlinks ----------------------------------------------------------
hostile link-chain "manifest field 'entries[2].target' of symlink 'inductor/l1' resolves outside 'inductor': 'l2/..'"
hostile link-chain-deep "manifest field 'entries[4].target' of symlink 'inductor/a/esc' resolves outside 'inductor': 'b/up/../x'"
hostile link-loop "manifest field 'entries[1].target' of symlink 'inductor/a' follows more than 40 symlinks (a loop): 'b'"
# --- 2. a link target the kernel would cut at a NUL --------------------------------------------------------------
hostile link-nul "manifest field 'entries[1].target' of symlink 'inductor/l' contains a NUL byte"
# --- 3. JSON nested 60,000 levels deep (a stack overflow before) -------------------------------------------------
deep="fingerprint$(printf '.a%.0s' $(seq 63))"
hostile deep-json "manifest field '$deep' nests deeper than 64 levels"
# --- 4. duplicate JSON keys ----------------------------------------------------------------------------------------
hostile dup-entries "manifest field 'entries' is repeated (a JSON key appears twice in one object)"
hostile dup-key-entry "manifest field 'entries[1].path' is repeated (a JSON key appears twice in one object)"
# --- 6. names ccpack writes itself --------------------------------------------------------------------------------
hostile reserved-marker "manifest field 'entries[1].path' uses a name ccpack reserves for itself: 'inductor/.ccpack-marker.json'"
hostile reserved-staging "manifest field 'entries[1].path' uses a name ccpack reserves for itself: 'inductor/.x.ccpack-staging.1'"
# --- 8. a refused name that would forge a second error line (and clear the screen) -------------------------------
hostile newline-path "manifest field 'entries[1].mode' has setuid, setgid or sticky bits on 'inductor/evil\\nccpack: error: forged line\\x1b[2J'"
# --- 9. sizes that wrap around 2^64 --------------------------------------------------------------------------------
hostile payload-max "header field 'payload_size' is 18446744073709551615: the header and payload sizes overflow 64 bits"
hostile frame-overflow "manifest field 'frames[1].compressed_size' makes the payload size overflow 64 bits"
# --- the payload against the manifest: each check alone, the rest of the archive consistent ---------------------
# One file's bytes against its manifest digest, the frame's hash right: only the signer can make this (both hashes
# are in the signed manifest). verify holds the manifest to each file and refuses it, naming the entry; restore
# checks each frame before decoding it and writes the bytes the frame holds, which create compressed.
cases=$((cases + 1))
"$CRAFT" file-sha "$T/file-sha.ccpack"
expect_line 4 "ccpack: error: entry 1 'inductor/a.py': SHA-256 mismatch (corrupt or tampered archive)" -- "$CCPACK" verify "$T/file-sha.ccpack"
expect_line 0 "" -- "$CCPACK" restore -q "$T/file-sha.ccpack" --inductor-dir "$T/file-sha/ind"
[ "$(cat "$T/file-sha/ind/a.py")" = "print(2)" ] && ok || bad "file-sha: restore did not write the frame's bytes"
damaged frame-sha "'ARCHIVE': frame 0: SHA-256 of the compressed bytes mismatch"
damaged tar-name "'ARCHIVE': tar offset 512: tar header 'inductor/a.py' does not match manifest entry 1 'inductor/b.py'"
damaged tar-size "'ARCHIVE': tar offset 512: tar header 'inductor/a.py' does not match manifest entry 1 'inductor/a.py'"
damaged tar-type "'ARCHIVE': tar offset 512: tar header 'inductor/d/' does not match manifest entry 1 'inductor/d'"

# --- create refuses what restore would refuse -------------------------------------------------------------------
# 1. The chain from the issue: mkdir c; ln -s . c/l2; ln -s l2/.. c/l1.
cases=$((cases + 1))
mkdir -p "$T/chain/c" && ln -s . "$T/chain/c/l2" && ln -s l2/.. "$T/chain/c/l1"
expect_line 1 "ccpack: error: refusing to pack symlink '$T/chain/c/l1' -> 'l2/..': it leads outside '$T/chain/c' (replace it with the file it points to)" \
  -- "$CCPACK" create -o "$T/chain.ccpack" --inductor-dir "$T/chain/c"
absent "refused create left $T/chain.ccpack" "$T/chain.ccpack"
cases=$((cases + 1))
mkdir -p "$T/loop/c" && ln -s b "$T/loop/c/a" && ln -s a "$T/loop/c/b"
expect_line 1 "ccpack: error: refusing to pack symlink '$T/loop/c/a' -> 'b': resolving it follows more than 40 symlinks (a loop)" \
  -- "$CCPACK" create -o "$T/loop.ccpack" --inductor-dir "$T/loop/c"
# 10. A name that is not UTF-8 (the manifest is JSON): refused on create, named with the byte escaped.
cases=$((cases + 1))
mkdir -p "$T/latin1/c/sub" && echo x >"$T/latin1/c/sub/caf$(printf '\xe9')"
expect_line 1 "ccpack: error: cannot pack '$T/latin1/c/sub/caf\\xe9': its name is not valid UTF-8 (the manifest is JSON); rename it" \
  -- "$CCPACK" create -o "$T/latin1.ccpack" --inductor-dir "$T/latin1/c"
cases=$((cases + 1))
mkdir -p "$T/latin1l/c" && ln -s "caf$(printf '\xe9')" "$T/latin1l/c/l"
expect_line 1 "ccpack: error: cannot pack symlink '$T/latin1l/c/l': its target is not valid UTF-8 (the manifest is JSON)" \
  -- "$CCPACK" create -o "$T/latin1l.ccpack" --inductor-dir "$T/latin1l/c"
# 8. A refused name on create with a newline in it stays on one line.
cases=$((cases + 1))
mkdir -p "$T/nl/c" && mkfifo "$T/nl/c/pi"$'\n'"pe"
expect_line 1 "ccpack: error: refusing to pack FIFO '$T/nl/c/pi\\npe': only files, folders and symlinks can be packed" \
  -- "$CCPACK" create -o "$T/nl.ccpack" --inductor-dir "$T/nl/c"

# Nothing escaped: every symlink restored anywhere in this run resolves inside its component folder.
while IFS= read -r -d '' l; do
  root=${l%%/ind/*}/ind
  case "$(realpath -m "$l")/" in "$root"/*) ok ;; *) bad "symlink $l resolves outside $root" ;; esac
done < <(find "$T/jail" "$T/valid" -type l -print0)

echo "hostile: $cases hostile cases"
finish
