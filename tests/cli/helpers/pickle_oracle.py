#!/usr/bin/env python3
"""Checks a relocated restore against the cache it was packed from, with Python's own pickle reader (pickletools)
as an oracle independent of ccpack's: every file below the Inductor folder's fxgraph/ and aotautograd/ is the
packed pickle with exactly the str values that began with the build folder moved to the restored folder (FRAME
opcodes aside, but each restored FRAME must end where an opcode begins, as Python's reader requires); every other file of both folders is byte for byte as packed, Triton's __grp__ files aside (their
rule has tests of its own). Exit 0 and one summary line, or exit 1 naming the first file that breaks the rule.

Usage: pickle_oracle.py PACKED_INDUCTOR RESTORED_INDUCTOR BUILD_FOLDER [PACKED_TRITON RESTORED_TRITON]
"""
import os
import pickletools
import sys

STR_OPS = {"SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8"}


def ops(data):
    return [(op.name, arg) for op, arg, _ in pickletools.genops(data) if op.name != "FRAME"]


def frames_whole(data):
    """Whether each FRAME's length ends exactly where an opcode begins (or at the end), no opcode across it."""
    frame_end = None
    for op, arg, pos in pickletools.genops(data):
        if frame_end is not None and pos > frame_end:
            return False
        if frame_end is not None and pos == frame_end:
            frame_end = None
        if op.name == "FRAME":
            if frame_end is not None:
                return False
            frame_end = pos + 9 + arg
    return frame_end is None or frame_end == len(data)


def check_pickle(packed, restored, build, target):
    if not frames_whole(restored):
        return None, "a FRAME whose length does not end at an opcode"
    a, b = ops(packed), ops(restored)
    if len(a) != len(b):
        return None, "opcode count %d, packed %d" % (len(b), len(a))
    moved = 0
    for (name_a, arg_a), (name_b, arg_b) in zip(a, b):
        if name_a in STR_OPS and isinstance(arg_a, str) and arg_a.startswith(build + "/"):
            if name_b not in STR_OPS or arg_b != target + arg_a[len(build):]:
                return None, "%r not moved to %s" % (arg_a[:120], target)
            moved += 1
        elif (name_a, arg_a) != (name_b, arg_b) and not (name_a in STR_OPS and name_b in STR_OPS and arg_a == arg_b):
            return None, "opcode %s %r changed" % (name_a, str(arg_a)[:80])
    return moved, None


def main():
    packed_ind, restored_ind, build = sys.argv[1], sys.argv[2], sys.argv[3].rstrip("/")
    pairs = [(packed_ind, restored_ind, True)]
    if len(sys.argv) > 5:
        pairs.append((sys.argv[4], sys.argv[5], False))
    pickles = moved = same = 0
    for packed_root, restored_root, inductor in pairs:
        target = os.path.normpath(os.path.abspath(restored_root))
        for dirpath, _, files in os.walk(packed_root):
            for f in files:
                src = os.path.join(dirpath, f)
                rel = os.path.relpath(src, packed_root)
                dst = os.path.join(restored_root, rel)
                if f.startswith("__grp__") and f.endswith(".json"):
                    continue
                with open(src, "rb") as fa, open(dst, "rb") as fb:
                    a, b = fa.read(), fb.read()
                if inductor and rel.split(os.sep)[0] in ("fxgraph", "aotautograd"):
                    n, why = check_pickle(a, b, build, target)
                    if why:
                        print("FAIL %s: %s" % (rel, why))
                        return 1
                    pickles += 1
                    moved += n
                elif a != b:
                    print("FAIL %s: differs from the packed file" % rel)
                    return 1
                else:
                    same += 1
    if moved == 0:
        print("FAIL no str value began with %s: nothing was checked" % build)
        return 1
    print("ok: %d pickles, %d paths moved, %d other files as packed" % (pickles, moved, same))
    return 0


sys.exit(main())
