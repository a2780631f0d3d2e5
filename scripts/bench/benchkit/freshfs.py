"""A freshly made ext4 filesystem per restore: the reference mode of scripts/bench/bench.py.

Why: on ext4, creating inodes within a minute of deleting thousands of others makes the inode allocator scan
past the recently freed slots, which slows whichever tool restores second; a new pod restores into an empty
volume. So every timed restore (ccpack's and stock tar's alike) goes into its own filesystem, made by
`mkfs.ext4` on a sparse image file and loop-mounted; making, mounting, unmounting and removing it are not timed.

How: the image is sized from the cache (every file rounded up to 4 KiB blocks, one block per folder, plus a
quarter and room for the journal), with one inode per entry plus a margin (`-N`). Inode tables and the journal
are initialised by mkfs itself (lazy_itable_init=0), so no background ext4lazyinit thread writes during the
timed part. Needs root and mkfs.ext4; `available()` says whether this machine can.
"""
import contextlib
import os
import shutil
import subprocess
from pathlib import Path

BLOCK = 4096


def available():
    return os.geteuid() == 0 and shutil.which("mkfs.ext4") is not None and shutil.which("mount") is not None


def footprint(root):
    """(image bytes, inodes) a filesystem needs to hold a copy of the tree under root, with margins."""
    blocks = entries = 0
    for dirpath, dirs, names in os.walk(root):
        entries += len(dirs) + len(names)
        blocks += len(dirs)
        for n in names:
            st = os.lstat(os.path.join(dirpath, n))
            blocks += (st.st_size + BLOCK - 1) // BLOCK
    size = int(blocks * BLOCK * 1.25) + (256 << 20) + entries * 256
    return size, int(entries * 1.1) + 4096


def _sh(cmd):
    r = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed (exit {r.returncode}): {r.stdout.decode(errors='replace')}")


@contextlib.contextmanager
def fresh_ext4(work, name, size, inodes, journal_mb=None):
    """Yields the mount point of a new, empty ext4 filesystem of `size` bytes (with a journal of `journal_mb` MiB;
    None: mkfs's default for that size); unmounts and removes it after."""
    work = Path(work)
    img, mnt = work / f"{name}.img", work / f"{name}.mnt"
    mounted = False
    try:
        img.unlink(missing_ok=True)
        with open(img, "wb") as f:
            f.truncate(size)
        journal = ["-J", f"size={journal_mb}"] if journal_mb else []
        _sh(["mkfs.ext4", "-q", "-F", "-N", str(inodes), *journal, "-E",
             "lazy_itable_init=0,lazy_journal_init=0,nodiscard", str(img)])
        mnt.mkdir(parents=True, exist_ok=True)
        _sh(["mount", "-o", "loop", str(img), str(mnt)])
        mounted = True
        yield mnt
    finally:
        if mounted:
            subprocess.run(["umount", str(mnt)], check=False)
        with contextlib.suppress(OSError):
            mnt.rmdir()
        img.unlink(missing_ok=True)
