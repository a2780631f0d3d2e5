"""Where the ccpack binary is: the one bundled in the wheel (``_bin/bin/ccpack``, with its libraries in
``_bin/lib/ccpack``, found through its RUNPATH), or the one ``$CCPACK_BINARY`` names (a source checkout, a test)."""

from __future__ import annotations

import os
from pathlib import Path

from ccpack.errors import Error

#: The variable that names another binary than the bundled one.
BINARY_VAR = "CCPACK_BINARY"
_BUNDLED = Path(__file__).resolve().parent / "_bin" / "bin" / "ccpack"


def binary() -> str:
    """The path of the ccpack binary this package runs; raises ccpack.Error when there is none."""
    named = os.environ.get(BINARY_VAR)
    if named:
        if not os.path.isfile(named):
            raise Error(f"${BINARY_VAR} names '{named}', which is not a file")
        return named
    if _BUNDLED.is_file():
        return str(_BUNDLED)
    raise Error(f"no ccpack binary at '{_BUNDLED}' (install the ccpack wheel, or set {BINARY_VAR})")
