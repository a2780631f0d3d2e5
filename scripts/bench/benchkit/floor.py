"""Builds and runs floor.c, the restore floor (see the top of floor.c), with the system C compiler."""
import os
import shutil
import subprocess
from pathlib import Path

SOURCE = Path(__file__).resolve().parent / "floor.c"


def build(work):
    """Returns the path of the floor binary, compiled into work (None when no C compiler is found)."""
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        return None
    exe = Path(work) / "floor"
    subprocess.run([cc, "-O2", "-pthread", "-o", str(exe), str(SOURCE)], check=True)
    return exe


def argv(exe, tar, dest, threads, sync=True):
    """The floor's command line: create the entries of `tar` under dest with `threads` threads, then syncfs (or not)."""
    return [str(exe), str(tar), str(dest), str(threads)] + ([] if sync else ["no-sync"])


def parse(out):
    """(create seconds, syncfs seconds) from the floor's one line of output."""
    fields = dict(kv.split("=") for kv in out.split())
    return float(fields["create_s"]), float(fields["sync_s"])


def run(exe, tar, dest, threads):
    """Creates the entries of `tar` under dest; returns (create seconds, syncfs seconds)."""
    return parse(subprocess.run(argv(exe, tar, dest, threads), check=True, stdout=subprocess.PIPE,
                                stdin=subprocess.DEVNULL).stdout.decode())
