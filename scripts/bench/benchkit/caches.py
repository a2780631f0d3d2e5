"""The synthetic caches of scripts/bench/bench.py: generated once by gen_synthetic_cache.py into the work folder and
kept between runs (regenerated when the generator changes). A million files go into their own loop-mounted ext4
image made with enough inodes (-N), kept as WORKDIR/synthetic-1m.img and mounted only while in use."""
import contextlib
import shutil
import subprocess
import sys

from . import freshfs

SYNTHETIC = {"100k": ["--files", "100000"], "1m": ["--files", "1000000", "--tiny"]}


@contextlib.contextmanager
def synthetic_cache(name, work, gen_script, log):
    """A synthetic case's cache, generated once into work (kept between runs): 1M files go into their own
    loop-mounted ext4 image with enough inodes, kept as work/synthetic-1m.img and mounted while in use."""
    dest, gen = work / f"synthetic-{name}", [sys.executable, str(gen_script)]
    done = dest.with_name(dest.name + ".done")
    img = work / f"synthetic-{name}.img"
    mounted = False
    try:
        if name == "1m" and freshfs.available():
            if not done.exists() or not img.exists():
                img.unlink(missing_ok=True)
                subprocess.run(["truncate", "-s", "12G", str(img)], check=True)
                subprocess.run(["mkfs.ext4", "-q", "-F", "-N", "1300000", str(img)], check=True)
            dest.mkdir(parents=True, exist_ok=True)
            subprocess.run(["mount", "-o", "loop", str(img), str(dest)], check=True)
            mounted = True
        if not done.exists() or done.stat().st_mtime < gen_script.stat().st_mtime:
            log(f"generating synthetic cache {name} in {dest}")
            for d in ("inductor_cache", "triton_cache"):
                shutil.rmtree(dest / d, ignore_errors=True)
            subprocess.run(gen + [str(dest)] + SYNTHETIC[name], check=True, stdin=subprocess.DEVNULL)
            done.touch()
        yield dest
    finally:
        if mounted:
            subprocess.run(["umount", str(dest)], check=False)
