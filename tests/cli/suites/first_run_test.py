#!/usr/bin/env python3
"""The first five minutes, through the real binary: bare `ccpack` prints the help and one error line (exit 2); a
mistyped command names the closest one (exit 2); and on a terminal the progress line of create, restore,
restore oci:// and pull (the download) shows the rate and the time left, then clears itself. A pseudo-terminal stands in
for the terminal (the line appears only there); in a pipe nothing but the report is written.
Usage: first_run_test.py PATH/TO/ccpack PATH/TO/tests/data
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import unittest
from pathlib import Path
from typing import List, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "helpers"))
from suite_harness import Registry, finish, scratch  # noqa: E402 (the helpers folder is on the path only now)

CCPACK = str(Path(sys.argv.pop(1)).resolve()) if len(sys.argv) > 2 else ""
DATA = Path(sys.argv.pop(1)).resolve() if len(sys.argv) > 1 else Path()
WORK = scratch("first-run")
# "create  52.6%  191.1 / 363.2 MB  85.3 MB/s  0:02 left" (util/progress.hpp)
LINE = r" +[0-9]+\.[0-9]%  [0-9]+\.[0-9] / [0-9]+\.[0-9] MB  [0-9]+\.[0-9]+ (kB|MB|GB)/s  [0-9]+:[0-9]{2}(:[0-9]{2})? left"


def run(*args: str) -> Tuple[int, str, str]:
    p = subprocess.run([CCPACK, *args], stdin=subprocess.DEVNULL, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def on_terminal(*args: str) -> Tuple[int, bytes]:
    """Runs ccpack with standard error on a pseudo-terminal; returns its exit code and all it wrote there."""
    master, slave = os.openpty()
    p = subprocess.Popen([CCPACK, *args], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return p.wait(), out


def frames(out: bytes, label: str) -> List[str]:
    """The progress lines drawn (each starts with "\\r", ends with "\\033[K")."""
    text = out.decode("utf-8", "replace").replace("\r\n", "\n")
    return [f[: -len("\033[K")] for f in text.split("\r") if f.startswith(label) and f.endswith("\033[K")]


class FirstRun(unittest.TestCase):
    def test_bare_ccpack_prints_the_help(self) -> None:
        code, help_text, _ = run("--help")
        self.assertEqual(code, 0)
        code, out, err = run()
        self.assertEqual((code, out), (2, ""))
        self.assertEqual(err, help_text + "ccpack: error: no command given (the commands are listed above)\n")
        self.assertIn("Subcommands:", err)

    def test_a_mistyped_command_is_named(self) -> None:
        self.assertEqual(run("creat"), (2, "", "ccpack: error: unknown command 'creat'; did you mean 'create'?\n"))
        self.assertEqual(run("restroe", "x.ccpack", "--json"),
                         (2, "", "ccpack: error: unknown command 'restroe'; did you mean 'restore'?\n"))
        self.assertEqual(run("frobnicate"), (2, "", "ccpack: error: unknown command 'frobnicate' (see ccpack --help)\n"))
        self.assertEqual(run("create", "--help")[0], 0)

    def test_progress_shows_rate_and_time_left(self) -> None:
        sample = DATA / "sample-cache"
        archive = str(WORK / "a.ccpack")
        dirs = ["--inductor-dir", str(sample / "inductor_cache"), "--triton-dir", str(sample / "triton_cache")]
        code, out = on_terminal("create", "-j", "1", "-o", archive, *dirs)
        self.assertEqual(code, 0, out)
        self.check_frames(out, "create")
        pod = ["--inductor-dir", str(WORK / "pod" / "ind"), "--triton-dir", str(WORK / "pod" / "tri")]
        code, out = on_terminal("restore", "-j", "1", archive, *pod)
        self.assertEqual(code, 0, out)
        self.check_frames(out, "restore")
        # In a pipe: no progress line at all.
        code, _, err = run("restore", archive, "--inductor-dir", str(WORK / "p2" / "ind"), "--triton-dir", str(WORK / "p2" / "tri"))
        self.assertEqual(code, 0, err)
        self.assertNotIn("\r", err)
        self.assertNotIn("MB/s", err)

    def test_restore_oci_shows_the_download(self) -> None:
        archive = str(WORK / "oci.ccpack")
        sample = DATA / "sample-cache"
        self.assertEqual(run("create", "-q", "-o", archive, "--inductor-dir", str(sample / "inductor_cache"))[0], 0)
        with Registry(WORK / "registry") as reg:
            ref = f"oci://127.0.0.1:{reg.port}/ccpack/sample:v1"
            code, _, err = run("push", "--plain-http", archive, ref)
            self.assertEqual(code, 0, err)
            code, out = on_terminal("restore", "--plain-http", ref, "--inductor-dir", str(WORK / "oci" / "ind"))
            code_pull, out_pull = on_terminal("pull", "--plain-http", ref, "-o", str(WORK / "pulled.ccpack"))
        self.assertEqual(code, 0, out)
        self.check_frames(out, "download")
        self.assertEqual(frames(out, "restore"), [], "restore oci:// drew a second progress line")
        self.assertEqual(code_pull, 0, out_pull)
        self.check_frames(out_pull, "download")

    def check_frames(self, out: bytes, label: str) -> None:
        drawn = frames(out, label)
        self.assertGreater(len(drawn), 0, f"no {label} progress line on the terminal: {out!r}")
        for f in drawn:
            self.assertRegex(f, "^" + re.escape(label) + LINE + "$")
        # The line is cleared before the report: the last "\r" is followed by "\033[K" and the report.
        self.assertIn(b"\r\033[Kccpack: ", out)


if __name__ == "__main__":
    if not CCPACK:
        sys.exit("usage: first_run_test.py PATH/TO/ccpack PATH/TO/tests/data")
    for var in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR", "TRITON_HOME", "CCPACK_TRUSTED_KEYS", "CCPACK_ON_MISMATCH"):
        os.environ.pop(var, None)
    os.environ.update({"CCPACK_ALLOW_UNSIGNED": "1", "HOME": str(WORK / "home")})
    os.environ.setdefault("CCPACK_PROBE_CACHE", str(WORK / "probe-memo.json"))
    finish(WORK)
