"""The Python suites' shared harness (what tests/cli/helpers/harness.sh is to the shell suites), standard library
only, so that a suite run by an installed wheel's interpreter can import it: a scratch folder kept when a check
failed, the unittest run that removes it, and Debian's docker-registry on a free 127.0.0.1 port, stopped by its PID.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path
from typing import Optional


def scratch(name: str) -> Path:
    """A fresh scratch folder for the suite NAME (removed by finish when every check passed)."""
    return Path(tempfile.mkdtemp(prefix=f"ccpack-{name}."))


def finish(work: Path) -> None:
    """Runs the suite's unittest cases, removes WORK when all passed (else names it), and exits 0 or 1."""
    ok = unittest.main(exit=False, verbosity=1).result.wasSuccessful()
    if ok:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"kept {work}")
    sys.exit(0 if ok else 1)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Registry:
    """`with Registry(folder) as reg:` Debian's docker-registry over plain HTTP on 127.0.0.1:reg.port, its config,
    storage and log in FOLDER; waits at most 15 s for it to listen, and stops it by its PID (10 s, then SIGKILL)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = 0
        self.proc: Optional[subprocess.Popen] = None

    def __enter__(self) -> "Registry":
        exe = shutil.which("docker-registry")
        if exe is None:
            raise AssertionError("docker-registry is missing (scripts/setup installs it)")
        self.port = free_port()
        (self.folder / "data").mkdir(parents=True)
        (self.folder / "config.yml").write_text(
            f"version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {self.folder / 'data'}\n"
            f"http:\n  addr: 127.0.0.1:{self.port}\n  secret: ccpack-test\n")
        with open(self.folder / "log", "wb") as log:
            self.proc = subprocess.Popen([exe, "serve", str(self.folder / "config.yml")], stdout=log, stderr=log)
        for _ in range(150):  # at most 15 s
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                time.sleep(0.1)
        self.__exit__()
        raise AssertionError(f"docker-registry did not start: {(self.folder / 'log').read_text()[-500:]}")

    def __exit__(self, *exc: object) -> None:
        assert self.proc is not None
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
