"""The exceptions of the ccpack API, one per exit code of the ``ccpack`` binary.

The binary owns the exit codes (its ``--help`` prints the table); this module is the one place that maps them to
exception classes, and a test checks that the two agree. Every class carries the exit code, the one-line error
(the binary's ``ccpack: error: ...`` line without its prefix) and, when the binary printed one, the ``--json``
report of the failure (a refused restore or check names the differing fingerprint fields there).
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Type


class Error(Exception):
    """ccpack failed (exit 1: a missing or unreadable folder or file, I/O failure); the base of every ccpack error."""

    exit_code: int = 1
    #: The word ``ccpack --help`` starts this exit code's meaning with.
    kind: str = "error"

    def __init__(self, message: str, exit_code: Optional[int] = None, report: Optional[Dict[str, Any]] = None,
                 stderr: str = "") -> None:
        super().__init__(message)
        self.message = message
        if exit_code is not None:
            self.exit_code = exit_code
        #: The parsed ``--json`` report of the failure, or None when the binary printed none (a usage error).
        self.report = report
        #: Everything the binary wrote on standard error.
        self.stderr = stderr

    def __str__(self) -> str:
        return f"{self.message} (exit {self.exit_code})"


class UsageError(Error):
    """The command line was wrong (exit 2): an unknown option or value, or options that exclude each other."""

    exit_code = 2
    kind = "usage"


class Refused(Error):
    """The archive does not fit this machine (exit 3): its fingerprint differs; nothing was written.

    ``report["fingerprint"]`` holds the comparison, field by field.
    """

    exit_code = 3
    kind = "refused"


class IntegrityError(Error):
    """The archive failed a signature or integrity check (exit 4): unsigned or untrusted, corrupt, truncated,
    tampered with or unsafe; nothing was written."""

    exit_code = 4
    kind = "integrity"


class NotRestored(Error):
    """``status`` found a cache folder that ccpack did not restore (exit 5): no marker, or named and missing.

    ``report["folders"]`` still says what was found for each folder.
    """

    exit_code = 5
    kind = "not restored"


class CommandFailed(Error):
    """``create(settle=...)``: the warm-up command exited non-zero, was killed or ran past its time limit (exit 6);
    nothing was written. The message names the run and the command's own exit code."""

    exit_code = 6
    kind = "command failed"


class OverTheGate(Error):
    """``status(max_compiled=N)``: more than N Triton kernels were compiled since the restore (exit 7).

    ``report["folders"]`` names them; ``report["triton_kernels_since_restore"]`` counts them.
    """

    exit_code = 7
    kind = "over the gate"


class Interrupted(Error):
    """``create(settle=...)`` got SIGINT (exit 130) or SIGTERM (exit 143), passed it on to the command and wrote
    nothing."""

    exit_code = 130
    kind = "interrupted"


#: Exit code -> exception class, for every exit code but 0.
EXCEPTIONS: Dict[int, Type[Error]] = {
    cls.exit_code: cls for cls in (Error, UsageError, Refused, IntegrityError, NotRestored, CommandFailed, OverTheGate)}
EXCEPTIONS[129] = Interrupted  # SIGHUP
EXCEPTIONS[130] = Interrupted  # SIGINT
EXCEPTIONS[143] = Interrupted  # SIGTERM


def error_for(exit_code: int, message: str, report: Optional[Dict[str, Any]] = None, stderr: str = "") -> Error:
    """The exception for a run that ended with ``exit_code`` (not 0); an unknown code gives a plain Error."""
    cls = EXCEPTIONS.get(exit_code, Error)
    return cls(message, exit_code=exit_code, report=report, stderr=stderr)
