"""``python -m ccpack ARGS`` and the ``ccpack`` command a wheel installs: both replace this Python process with
the bundled binary (exec), so its exit code, signals, terminal and progress line are the binary's own."""

from __future__ import annotations

import os
import sys
from typing import NoReturn, Optional, Sequence

from ccpack._binary import binary
from ccpack.errors import Error


def main(argv: Optional[Sequence[str]] = None) -> NoReturn:
    """Run the ccpack binary with ``argv`` (default: this process's arguments)."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        path = binary()
    except Error as e:  # one line, as the binary would print it
        print(f"ccpack: error: {e.message}", file=sys.stderr)
        sys.exit(e.exit_code)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(path, ["ccpack", *args])


if __name__ == "__main__":
    main()
