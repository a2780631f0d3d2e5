#!/usr/bin/env python3
"""What fresh memory costs on this machine: the first touch of 200 MiB, in huge pages and in 4 KiB pages, right
after the same amount was freed and after it had been free for a few seconds.

Why: ccpack advises its big buffers (zstd's window, the batches and chunks) onto transparent huge pages except on a
virtual machine whose host takes free memory back (util/big_buffer.hpp). There a huge page made of memory the
guest freed seconds ago is backed again by the host 4 KiB at a time; this script shows whether a machine pays that,
and how much, before a benchmark's figures are read.

How: a private anonymous mapping of --mib MiB (a shared one would be shmem, which THP leaves alone), advised
MADV_HUGEPAGE or not, written whole by one memset (ctypes: a Python loop per page would cost more than the faults);
the time of that memset is printed. For each pause of --pauses (seconds slept before each mapping), four mappings alternate
huge, 4 KiB, huge, 4 KiB. It also prints whether a virtio balloon device offers free page reporting (the rule
ccpack follows). Needs Python 3.8+ (mmap.madvise); no compiler.

Usage: scripts/bench/first_touch.py [--mib 200] [--pauses 0,3]
Exit status: 0.
"""
import argparse
import ctypes
import glob
import mmap
import time


def reporting():
    """Whether a virtio balloon device offers free page reporting (feature bit 5), as ccpack reads it."""
    for f in glob.glob("/sys/bus/virtio/drivers/virtio_balloon/virtio*/features"):
        with open(f) as fh:
            bits = fh.readline().strip()
        if len(bits) > 5 and bits[5] == "1":
            return True
    return False


def touch(mib, huge):
    n = mib << 20
    m = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if huge:
        m.madvise(mmap.MADV_HUGEPAGE)
    buf = (ctypes.c_char * n).from_buffer(m)
    t = time.perf_counter()
    ctypes.memset(ctypes.addressof(buf), 1, n)
    ms = (time.perf_counter() - t) * 1e3
    del buf  # the mapping cannot close while a ctypes view holds it
    m.close()
    return ms


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mib", type=int, default=200, help="size of each mapping in MiB (default: %(default)s)")
    ap.add_argument("--pauses", default="0,3", help="seconds slept before each mapping, comma-separated (default: %(default)s)")
    args = ap.parse_args()
    print(f"free page reporting: {'yes' if reporting() else 'no'} (ccpack advises huge pages: {'no' if reporting() else 'yes'})")
    for pause in (float(p) for p in args.pauses.split(",")):
        for huge in (True, False, True, False):
            time.sleep(pause)
            print(f"pause {pause:g} s, {'huge pages' if huge else '4 KiB pages'}: {args.mib} MiB in {touch(args.mib, huge):.1f} ms", flush=True)


if __name__ == "__main__":
    main()
