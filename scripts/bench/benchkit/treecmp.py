"""Compares a restored tree with its source: bytes, modes, symlink targets; a Triton __grp__*.json may differ only
by its absolute child paths being rewritten into the restored folder, and an Inductor fxgraph/ or aotautograd/
pickle only by its str values that began with the source folder beginning with the restored one (ccpack
relocates both)."""
import filecmp
import json
import os
import pickletools
import stat
import subprocess
import sys
from pathlib import Path


class Mismatch(Exception):
    pass


def listing(root):
    """Everything under root but ccpack's own restore marker and entry list, which are not part of the cache."""
    out = {}
    for dirpath, dirs, names in os.walk(root):
        for n in dirs + names:
            if dirpath == str(root) and n in (".ccpack-marker.json", ".ccpack-entries"):
                continue
            p = os.path.join(dirpath, n)
            out[os.path.relpath(p, root)] = os.lstat(p)
    return out


def grp_rewritten_ok(src, dst, dst_root):
    """True if dst is src with its child paths rewritten to <dst_root>/<HASH>/<file>."""
    try:
        a, b = json.loads(Path(src).read_bytes()), json.loads(Path(dst).read_bytes())
        ca, cb = a["child_paths"], b["child_paths"]
    except (ValueError, KeyError, TypeError):
        return False
    roots = {os.path.abspath(dst_root), os.path.realpath(dst_root)}
    return ca.keys() == cb.keys() and all(
        Path(cb[k]).parts[-2:] == Path(ca[k]).parts[-2:] and str(Path(cb[k]).parent.parent) in roots for k in ca)


def pickle_moved_ok(src, dst, dst_root):
    """True if the pickle dst is src with the str values that began with a build folder (the one the cache was made
    in, which the pickles name) beginning with dst_root instead, and nothing else changed."""
    def ops(path):
        return [(op.name, arg) for op, arg, _ in pickletools.genops(Path(path).read_bytes()) if op.name != "FRAME"]
    try:
        a, b = ops(src), ops(dst)
    except Exception:  # noqa: BLE001 (not a pickle pickletools can read: a real difference)
        return False
    if [n for n, _ in a] != [n for n, _ in b]:
        return False
    new, builds = os.path.abspath(dst_root) + "/", set()
    for (_, x), (_, y) in zip(a, b):
        if x == y:
            continue
        if not (isinstance(x, str) and isinstance(y, str) and y.startswith(new) and x.endswith("/" + y[len(new):])):
            return False
        builds.add(x[:len(x) - len(y) + len(new)])
    return all(not (isinstance(x, str) and any(x.startswith(f) for f in builds)) for (_, x), (_, y) in zip(a, b) if x == y)


def verify(pairs):
    """Compare restored trees with their sources; return the number of rewritten __grp__ files."""
    problems, rewritten = [], 0
    for src, dst in pairs:
        a, b = listing(src), listing(dst)
        problems += [f"missing in restore: {dst}/{p}" for p in sorted(a.keys() - b.keys())]
        problems += [f"extra in restore: {dst}/{p}" for p in sorted(b.keys() - a.keys())]
        for rel in sorted(a.keys() & b.keys()):
            sa, sb = a[rel], b[rel]
            s, d = os.path.join(src, rel), os.path.join(dst, rel)
            if stat.S_IFMT(sa.st_mode) != stat.S_IFMT(sb.st_mode):
                problems.append(f"file type differs: {d}")
            elif stat.S_ISLNK(sa.st_mode):
                if os.readlink(s) != os.readlink(d):
                    problems.append(f"symlink target differs: {d}")
            elif stat.S_IMODE(sa.st_mode) != stat.S_IMODE(sb.st_mode):
                problems.append(f"mode differs: {d} ({oct(sa.st_mode)} vs {oct(sb.st_mode)})")
            elif stat.S_ISREG(sa.st_mode) and not filecmp.cmp(s, d, shallow=False):
                if os.path.basename(rel).startswith("__grp__") and grp_rewritten_ok(s, d, dst):
                    rewritten += 1
                elif Path(rel).parts[0] in ("fxgraph", "aotautograd") and pickle_moved_ok(s, d, dst):
                    rewritten += 1
                else:
                    problems.append(f"content differs: {d}")
    if problems:
        raise Mismatch("RESTORE MISMATCH (%d problems):\n  " % len(problems) + "\n  ".join(problems[:30]))
    return rewritten


def verify_in_child(pairs):
    """verify() in a child process. Why: Linux carries a process's peak RSS across fork and exec into its children's
    ru_maxrss, so the benchmark's own peak must stay small; listing a million files here would take ~1 GB."""
    args = [str(p) for pair in pairs for p in pair]
    r = subprocess.run([sys.executable, "-m", "benchkit.treecmp"] + args, cwd=Path(__file__).resolve().parent.parent,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    if r.returncode != 0:
        raise Mismatch(r.stderr.decode(errors="replace").rstrip())
    return int(r.stdout)


if __name__ == "__main__":
    try:
        print(verify(list(zip(sys.argv[1::2], sys.argv[2::2]))))
    except Mismatch as e:
        sys.exit(str(e))
