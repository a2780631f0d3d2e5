"""One timed run of a command under a CPU limit, for the benchmark scripts: its wall, CPU and peak RSS.

Why: a CPU quota is a cgroup, and moving a process into one costs what a pod started in its cgroup never pays (the
write to cgroup.procs can wait for an RCU grace period: 14 ms of a 20 ms no-op restore on the 2-core VM). So the
command's shell joins the limit first, then waits; the clock starts when it is let go (limited(), timed()).

A limit is an object with `dir` (its cgroup folder, or None) and `argv(cmd)` (cmd as the limit runs it, e.g.
under taskset): bench_quota.Limit, or bench_table.NoLimit.
"""
import os
import shlex
import subprocess
import tempfile
import time

import bench

MIB = 1024 * 1024


def limited(cmd, limit):
    """cmd under limit, as the argv of a shell that joins the limit's cgroup (if it has one), says so on its standard
    output (then pointed at /dev/null for cmd), and waits for a line on its standard input before it execs cmd:
    timed() starts the clock when it sends that line. The shell joins, not a hook in the forked Python child, which
    copies this process's page tables and pays their faults on its own clock (15-20 ms added to a no-op restore of
    25 ms)."""
    cgroup = getattr(limit, "dir", None)
    join = 'echo $$ > "$0" && ' if cgroup is not None else ""
    argv0 = str(cgroup / "cgroup.procs") if cgroup is not None else "sh"
    return ["sh", "-c", join + 'echo && exec >/dev/null && read -r _ && exec "$@"', argv0, *limit.argv(cmd)]


def timed(cmd, limit, settle):
    """(wall s, CPU s, peak RSS MiB) of cmd under limit, after sync and `settle` s. The wall runs from the line that
    lets the waiting shell exec cmd (limited()) to cmd's exit; the CPU is the shell's and cmd's. Raises
    bench.Failure."""
    subprocess.run(["sync"], check=False)
    time.sleep(settle)
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    with tempfile.TemporaryFile() as err:
        try:
            p = subprocess.Popen(limited(cmd, limit), stdin=go_r, stdout=ready_w, stderr=err)
        finally:
            os.close(go_r)
            os.close(ready_w)
        try:
            joined = os.read(ready_r, 1) == b"\n"  # b"": the shell failed to join (its error is in err)
            t0 = time.perf_counter()
            if joined:
                os.write(go_w, b"\n")
        finally:
            os.close(ready_r)
            os.close(go_w)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        if not joined or os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            raise bench.Failure(f"command failed: {shlex.join(cmd)}\n{err.read().decode(errors='replace').rstrip()}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss * 1024 / MIB
