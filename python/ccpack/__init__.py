"""ccpack from Python: pack PyTorch torch.compile caches (Inductor + Triton) into one verified archive after a
warm-up, and restore them safely and atomically before training or serving starts.

Each function runs the bundled ``ccpack`` binary with ``--json`` and returns its parsed report (a dict, as
``ccpack COMMAND --json`` prints it, ``"ok": True`` first), or raises the exception of its exit code, which
carries that code and the one-line error: ``Refused`` (3), ``IntegrityError`` (4), ``UsageError`` (2),
``NotRestored`` (5), ``CommandFailed`` (6), ``OverTheGate`` (7), ``Interrupted`` (130, 143) and ``Error`` (1, the
base of all). The binary's warnings are passed on to ``sys.stderr``.

A warm-up script ends with::

    ccpack.create("model.ccpack", sign_key="ci.key", note="pipeline 42")

and a serving entrypoint starts, before torch is imported, with::

    ccpack.activate("model.ccpack")         # trusted keys from /etc/ccpack/trusted.d, or trust=...

which sets in ``os.environ`` the folders and the settings the cache was built with (``ccpack env``), then restores.

The folders are the ones torch and triton use (``TORCHINDUCTOR_CACHE_DIR``, ``TRITON_CACHE_DIR`` and their
defaults) unless ``inductor_dir`` / ``triton_dir`` say otherwise. Anything else the binary takes goes in
``extra_args``. Only the standard library is imported.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from typing import Any, Dict, List, Literal, Mapping, Optional, Sequence, Union

from ccpack._binary import binary
from ccpack.errors import (CommandFailed, Error, IntegrityError, Interrupted, NotRestored, OverTheGate, Refused, UsageError,
                           error_for)

#: What restore does when the fingerprint makes a component stale or refused.
OnMismatch = Literal["refuse", "force", "purge"]

__all__ = ["create", "merge", "restore", "activate", "env", "check", "verify", "inspect", "fingerprint", "status", "push", "pull", "ls", "binary",
           "Error", "UsageError", "Refused", "IntegrityError", "NotRestored", "CommandFailed", "OverTheGate", "Interrupted",
           "Report"]

#: A path: a str or an os.PathLike.
PathArg = Union[str, "os.PathLike[str]"]
#: A parsed --json report.
Report = Dict[str, Any]
#: Fingerprint fields to take as given on the target machine (``--select``): ``{"gpu.arch": "sm_90"}`` or
#: ``["gpu.arch=sm_90"]``, for an init container that sees no GPU.
Select = Union[Mapping[str, str], Sequence[str]]


def create(out: PathArg, sign_key: Optional[PathArg] = None, note: Optional[str] = None, *,
           inductor_dir: Optional[PathArg] = None, triton_dir: Optional[PathArg] = None,
           add: Optional[Mapping[str, PathArg]] = None, level: Optional[str] = None, python: Optional[PathArg] = None,
           jobs: Optional[int] = None, settle: Optional[int] = None, command: Sequence[str] = (),
           settle_timeout: Optional[int] = None, since_restore: bool = False, extra_args: Sequence[str] = ()) -> Report:
    """Pack this machine's cache folders into the archive ``out`` (written atomically), with its fingerprint.

    settle: run ``command`` (a list: ``["python", "warmup.py"]``) as the warm-up, then again on fresh relocated
    restores of its cache, at most ``settle`` times, until a run compiles nothing, and pack that cache
    (``ccpack create --settle=N -- COMMAND``; docs/SETTLE.md). ``report["settle"]`` holds each run and why it
    stopped. settle_timeout: seconds per run. Raises CommandFailed (the command failed or ran past its time limit)
    or Interrupted; nothing is written then.

    since_restore: a delta for ``merge``: only what the restored folders gained since ``ccpack restore`` filled
    them (``ccpack create --since-restore``; docs/CONVERGE.md); ``report["delta"]`` names the base. Raises
    NotRestored when a folder was not restored by ccpack.

    sign_key: the private key file from ``ccpack keygen`` (else ``$CCPACK_SIGNING_KEY``; else unsigned).
    note: a note stored with the signature. add: extra folders, ``{"ext": "~/.cache/torch_extensions"}``.
    level: ``"default"``, ``"max"`` or a zstd level ``"1"``-``"19"``. python: the interpreter to fingerprint.
    Returns the report: ``archive``, ``archive_bytes``, ``files``, ``bytes``, ``components``, ``signed_by``, ...
    """
    options = ["-o", _path(out)] + _dirs(inductor_dir, triton_dir, add)
    options += _opt("--sign-key", sign_key) + _opt("--note", note) + _opt("--level", level)
    options += _opt("--python", python) + _opt("--jobs", jobs) + _flag("--since-restore", since_restore)
    if settle is not None:
        if not command:
            raise UsageError("create(settle=N) needs the warm-up command, e.g. command=['python', 'warmup.py']", exit_code=2)
        options += [f"--settle={int(settle)}"] + _opt("--settle-timeout", settle_timeout)
    elif command:
        raise UsageError("create(command=...) is run only with settle=N", exit_code=2)
    return _run("create", options + list(extra_args), list(command) if settle is not None else ())


def restore(archive: PathArg, on_mismatch: Optional[OnMismatch] = None, *,
            trust: Union[PathArg, Sequence[PathArg], None] = None, allow_unsigned: bool = False,
            inductor_dir: Optional[PathArg] = None, triton_dir: Optional[PathArg] = None,
            add: Optional[Mapping[str, PathArg]] = None, at_build_paths: bool = False, relocate: bool = True,
            durable: bool = False, ignore: Sequence[str] = (), python: Optional[PathArg] = None, jobs: Optional[int] = None,
            select: Optional[Select] = None, fingerprint: Optional[PathArg] = None, plain_http: bool = False,
            ca_file: Optional[PathArg] = None, authfile: Optional[PathArg] = None,
            registries_conf: Optional[PathArg] = None, require_cosign: bool = False,
            extra_args: Sequence[str] = ()) -> Report:
    """Check ``archive`` (a file, or ``oci://host/repository:tag``) and restore it into this machine's cache
    folders, atomically; a second call with the same archive does nothing.

    on_mismatch: ``"refuse"`` (write nothing, raise Refused), ``"force"`` or ``"purge"``; None: ccpack's default
    (``$CCPACK_ON_MISMATCH``, else refuse). trust: public key files or folders (else ``$CCPACK_TRUSTED_KEYS``,
    ``/etc/ccpack/trusted.d``, ``~/.config/ccpack/trusted.d``). ignore: fingerprint fields to accept as they are.
    relocate=False restores every file as packed: Triton's ``__grp__*.json`` files and Inductor's pickled FX-graph
    and AOTAutograd entries then name the build machine's folders (docs/RELOCATION.md).
    select: fingerprint fields taken as given (``{"gpu.arch": "sm_90"}``) where no GPU is visible; fingerprint: a
    ``ccpack fingerprint --json`` file of the target machine. plain_http, ca_file, authfile, registries_conf: how
    an ``oci://`` archive is fetched (as the flags of the same names; the environment's ``CCPACK_SELECT`` and
    ``CCPACK_PLAIN_HTTP`` apply when these are not given). require_cosign: an ``oci://`` archive must carry a cosign
    signature by a trusted key (``--require-cosign``; docs/SIGNING.md), and then needs no signature of its own.
    Raises Refused when the fingerprint does not fit, IntegrityError when a signature or hash check fails.
    """
    options = _opt("--on-mismatch", on_mismatch) + _trust(trust, allow_unsigned) + _flag("--require-cosign", require_cosign)
    options += _machine(select, fingerprint) + _registry(plain_http, ca_file, authfile, registries_conf)
    options += _dirs(inductor_dir, triton_dir, add) + _flag("--at-build-paths", at_build_paths)
    options += _flag("--no-relocate", not relocate) + _flag("--durable", durable) + _each("--ignore", ignore)
    options += _opt("--python", python) + _opt("--jobs", jobs)
    return _run("restore", options + list(extra_args), [_path(archive)])


def env(archive: PathArg, *, trust: Union[PathArg, Sequence[PathArg], None] = None, allow_unsigned: bool = False,
        inductor_dir: Optional[PathArg] = None, triton_dir: Optional[PathArg] = None, python: Optional[PathArg] = None,
        select: Optional[Select] = None, fingerprint: Optional[PathArg] = None, plain_http: bool = False,
        ca_file: Optional[PathArg] = None, authfile: Optional[PathArg] = None, registries_conf: Optional[PathArg] = None,
        require_cosign: bool = False, extra_args: Sequence[str] = ()) -> Dict[str, str]:
    """What a process must have in its environment to use ``archive`` (``ccpack env``): the cache folders, the
    settings its cache key recorded and a ptxas of the recorded version, as ``{name: value}`` in the order to set them.
    The archive's signature is checked as restore checks it."""
    options = _trust(trust, allow_unsigned) + _flag("--require-cosign", require_cosign) + _machine(select, fingerprint)
    options += _registry(plain_http, ca_file, authfile, registries_conf) + _dirs(inductor_dir, triton_dir, None)
    options += _opt("--python", python)
    report = _run("env", options + list(extra_args), [_path(archive)])
    return {v["name"]: v["value"] for v in report["variables"]}


def activate(archive: PathArg, on_mismatch: Optional[OnMismatch] = None, *,
             trust: Union[PathArg, Sequence[PathArg], None] = None, allow_unsigned: bool = False,
             inductor_dir: Optional[PathArg] = None, triton_dir: Optional[PathArg] = None,
             python: Optional[PathArg] = None, select: Optional[Select] = None, fingerprint: Optional[PathArg] = None,
             plain_http: bool = False, ca_file: Optional[PathArg] = None, authfile: Optional[PathArg] = None,
             registries_conf: Optional[PathArg] = None, require_cosign: bool = False) -> Report:
    """A serving or training script's first call, before ``import torch``: sets ``os.environ`` to what
    ``env(archive)`` returns (the folders, the settings the cache was built with, a ptxas of the recorded version),
    then restores the archive, whose fingerprint check judges this process with them; ``ccpack run`` in Python.
    python: the interpreter whose torch the process uses (default: this one). Returns restore's report with
    ``"env"`` added. Raises as restore does; os.environ is set first either way, so a caller that catches Refused
    starts cold with the settings. Torch reads them when it is imported: a process that imported torch already
    gets a warning on stderr."""
    where = dict(trust=trust, allow_unsigned=allow_unsigned, inductor_dir=inductor_dir, triton_dir=triton_dir, select=select,
                 fingerprint=fingerprint, plain_http=plain_http, ca_file=ca_file, authfile=authfile,
                 registries_conf=registries_conf, require_cosign=require_cosign)
    python = python if python is not None else sys.executable
    variables = env(archive, python=python, **where)
    if "torch" in sys.modules:
        sys.stderr.write("ccpack: warning: activate() after `import torch`: torch has read its settings already; "
                         "call it first\n")
    os.environ.update(variables)
    report = restore(archive, on_mismatch, python=python, **where)
    report["env"] = variables
    return report


def check(archive: PathArg, *, inductor_dir: Optional[PathArg] = None, triton_dir: Optional[PathArg] = None,
          add: Optional[Mapping[str, PathArg]] = None, ignore: Sequence[str] = (), python: Optional[PathArg] = None,
          select: Optional[Select] = None, fingerprint: Optional[PathArg] = None, plain_http: bool = False,
          ca_file: Optional[PathArg] = None, authfile: Optional[PathArg] = None,
          registries_conf: Optional[PathArg] = None, extra_args: Sequence[str] = ()) -> Report:
    """Compare ``archive``'s fingerprint with this machine's, field by field, with a verdict per component.

    ``archive`` is a file, or ``oci://host/repository:tag``: the archive a restore of it would choose here, judged
    from its header alone (plain_http, ca_file, authfile, registries_conf as for restore).
    Returns the report when nothing is stale or refused; raises Refused otherwise, whose ``report`` holds the
    same comparison.
    """
    options = _dirs(inductor_dir, triton_dir, add) + _each("--ignore", ignore) + _opt("--python", python)
    options += _machine(select, fingerprint) + _registry(plain_http, ca_file, authfile, registries_conf)
    return _run("check", options + list(extra_args), [_path(archive)])


def verify(archive: PathArg, *, trust: Union[PathArg, Sequence[PathArg], None] = None, allow_unsigned: bool = False,
           jobs: Optional[int] = None, extra_args: Sequence[str] = ()) -> Report:
    """Check ``archive``'s signature and every frame and file against its SHA-256; writes nothing.

    Raises IntegrityError when a check fails.
    """
    options = _trust(trust, allow_unsigned) + _opt("--jobs", jobs)
    return _run("verify", options + list(extra_args), [_path(archive)])


def inspect(archive: PathArg, *, files: bool = False, extra_args: Sequence[str] = ()) -> Report:
    """``archive``'s manifest: components, sizes, signers, fingerprint (``files``: every entry too)."""
    return _run("inspect", _flag("--files", files) + list(extra_args), [_path(archive)])


def fingerprint(*, python: Optional[PathArg] = None, inductor_dir: Optional[PathArg] = None,
                triton_dir: Optional[PathArg] = None, extra_args: Sequence[str] = ()) -> Report:
    """This machine's environment fingerprint, the one ``create`` records: ``report["fields"][NAME]`` is
    ``{"value": ..., "source": ...}``, with value None where a probe found nothing."""
    options = _opt("--python", python) + _dirs(inductor_dir, triton_dir, None)
    return _run("fingerprint", options + list(extra_args))


def status(*, max_compiled: Optional[int] = None, extra_args: Sequence[str] = ()) -> Report:
    """What ``ccpack status --json`` reports about this machine's cache folders. A binary without the status
    command raises UsageError. max_compiled: a smoke test's gate: raises OverTheGate when more than that many
    Triton kernels were compiled since the restore (``ccpack status --max-compiled N``)."""
    return _run("status", _opt("--max-compiled", max_compiled) + list(extra_args))


def merge(base: PathArg, deltas: Sequence[PathArg], out: PathArg, sign_key: Optional[PathArg] = None, *,
          note: Optional[str] = None, trust: Optional[Sequence[PathArg]] = None, allow_unsigned: bool = False,
          deltas_from_registry: bool = False, plain_http: bool = False, ca_file: Optional[PathArg] = None,
          authfile: Optional[PathArg] = None, registries_conf: Optional[PathArg] = None, jobs: Optional[int] = None,
          extra_args: Sequence[str] = ()) -> Report:
    """Write ``out``: the archive ``base`` (verified with the trusted keys) plus what the ``deltas`` (made by
    ``create(since_restore=True)`` on pods restored from it) add, signed with ``sign_key`` (else
    ``$CCPACK_SIGNING_KEY``). The same bytes in any order of the deltas. deltas_from_registry: ``base`` is
    ``oci://host/repository:tag`` and its deltas are the tags pushed with ``push(..., delta=True)``.
    Raises Refused for a delta of another base or environment, IntegrityError for a hostile or corrupt one.
    ``report["deltas"]`` says, per delta, what it added and what was skipped and why; ``report["conflicts"]``
    the files two deltas added with other bytes (docs/CONVERGE.md)."""
    options = ["-o", _path(out)] + _opt("--sign-key", sign_key) + _opt("--note", note) + _opt("--jobs", jobs)
    options += [a for t in (trust or ()) for a in ("--trust", _path(t))] + _flag("--allow-unsigned", allow_unsigned)
    options += _flag("--deltas-from-registry", deltas_from_registry)
    if deltas_from_registry:
        options += _registry(plain_http, ca_file, authfile, registries_conf)
    return _run("merge", options + list(extra_args), [str(base) if deltas_from_registry else _path(base)] + [_path(d) for d in deltas])


def push(archive: PathArg, reference: str, *, index: bool = False, allow_unsigned: bool = False,
         plain_http: bool = False, ca_file: Optional[PathArg] = None, authfile: Optional[PathArg] = None,
         sign_key: Optional[PathArg] = None, cosign_key: Optional[PathArg] = None, cosign_format: Optional[str] = None,
         delta: bool = False, extra_args: Sequence[str] = ()) -> Report:
    """Push ``archive`` to ``reference`` (``oci://host/repository:tag``); index=True adds it to the tag's image
    index, one entry per environment. An unsigned archive raises IntegrityError unless allow_unsigned.
    sign_key (else ``$CCPACK_SIGNING_KEY``), cosign_key: private key files whose cosign signatures of the pushed
    manifest (and index) go under ``sha256-<hex>.sig``, for skopeo, podman, cosign and admission policies, and as
    sigstore bundle referrers, cosign 3's form; cosign_format: ``"legacy"``, ``"bundle"`` or ``"both"`` (the default).
    delta=True: ``archive`` is a delta, pushed next to its base under ``tag.delta-<12 hex>`` (signed or not)."""
    options = _flag("--index", index) + _flag("--allow-unsigned", allow_unsigned) + _flag("--delta", delta)
    options += _opt("--sign-key", sign_key) + _opt("--cosign-key", cosign_key) + _opt("--cosign-format", cosign_format)
    options += _registry(plain_http, ca_file, authfile, None)
    return _run("push", options + list(extra_args), [_path(archive), reference])


def pull(reference: str, out: PathArg, *, select: Optional[Select] = None, fingerprint: Optional[PathArg] = None,
         plain_http: bool = False, ca_file: Optional[PathArg] = None, authfile: Optional[PathArg] = None,
         registries_conf: Optional[PathArg] = None, require_cosign: bool = False,
         trust: Union[PathArg, Sequence[PathArg], None] = None, extra_args: Sequence[str] = ()) -> Report:
    """Download the archive under ``reference`` that fits this machine (or ``select`` / ``fingerprint``) into
    ``out``, checked frame by frame; nothing is written when a check fails. require_cosign: the artifact must carry
    a cosign signature by a key of ``trust`` (else the default trusted keys), checked before any archive byte."""
    options = ["-o", _path(out)] + _machine(select, fingerprint) + _registry(plain_http, ca_file, authfile, registries_conf)
    if require_cosign:
        options += _trust(trust, False) + ["--require-cosign"]
    elif trust is not None:
        raise UsageError("pull(trust=...) takes effect with require_cosign=True only", exit_code=2)
    return _run("pull", options + list(extra_args), [reference])


def ls(reference: str, *, plain_http: bool = False, ca_file: Optional[PathArg] = None,
       authfile: Optional[PathArg] = None, registries_conf: Optional[PathArg] = None,
       extra_args: Sequence[str] = ()) -> Report:
    """The archives under ``reference``: each index entry's selection annotations, size and digests."""
    return _run("ls", _registry(plain_http, ca_file, authfile, registries_conf) + list(extra_args), [reference])


# --- running the binary ------------------------------------------------------------------------------------


def _run(command: str, options: List[str], positionals: Sequence[str] = ()) -> Report:
    """Runs ``ccpack COMMAND --json OPTIONS -- POSITIONALS`` and returns its report or raises its error."""
    argv = [binary(), command, "--json", *options]
    if positionals:
        argv += ["--", *positionals]
    done = _spawn(command, argv)
    stdout = done.stdout.decode("utf-8", "replace")
    stderr = done.stderr.decode("utf-8", "replace")
    errors = [line[len("ccpack: error: "):] for line in stderr.splitlines() if line.startswith("ccpack: error: ")]
    passed_on = "".join(line for line in stderr.splitlines(True) if not line.startswith("ccpack: error: "))
    if passed_on:
        sys.stderr.write(passed_on)
    report: Optional[Report] = None
    try:
        parsed = json.loads(stdout) if stdout.strip() else None
        if isinstance(parsed, dict):
            report = parsed
    except ValueError:
        pass
    if done.returncode == 0:
        if report is None:
            raise Error(f"ccpack {command} printed no JSON report", exit_code=1, stderr=stderr)
        return report
    if report is not None and isinstance(report.get("error"), str):
        message = report["error"]
    elif errors:
        message = errors[-1]
    elif done.returncode < 0:
        message = f"ccpack {command} was killed by signal {-done.returncode}"
    else:
        message = f"ccpack {command} exited with {done.returncode}"
    raise error_for(done.returncode, message, report, stderr)


def _spawn(command: str, argv: List[str]) -> "subprocess.CompletedProcess[bytes]":
    """Runs the binary; what stops it from starting is a ccpack exception too (the API raises no other): a NUL in
    an argument (ValueError) and arguments past the system's limit (E2BIG) are UsageError, any other OSError is
    Error."""
    try:
        return subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    except ValueError:
        raise UsageError(f"ccpack {command}: a path or value holds a NUL byte, which no argument can hold",
                         exit_code=2) from None
    except OSError as e:
        if e.errno == errno.E2BIG:
            raise UsageError(f"ccpack {command}: the paths or values are too long for one command line ({e.strerror})",
                             exit_code=2) from None
        raise Error(f"ccpack {command}: cannot run {argv[0]!r}: {e.strerror or e}", exit_code=1) from None


def _path(value: PathArg) -> str:
    return os.fspath(value)


def _opt(name: str, value: Union[PathArg, int, None]) -> List[str]:
    if value is None:
        return []
    return [name, str(value) if isinstance(value, int) else _path(value)]


def _flag(name: str, on: bool) -> List[str]:
    return [name] if on else []


def _each(name: str, values: Sequence[str]) -> List[str]:
    if isinstance(values, str):  # one value, not its characters
        values = [values]
    return [arg for value in values for arg in (name, value)]


def _trust(trust: Union[PathArg, Sequence[PathArg], None], allow_unsigned: bool) -> List[str]:
    keys: Sequence[PathArg] = [] if trust is None else [trust] if isinstance(trust, (str, os.PathLike)) else trust
    return [arg for key in keys for arg in ("--trust", _path(key))] + _flag("--allow-unsigned", allow_unsigned)


def _machine(select: Optional[Select], fingerprint: Optional[PathArg]) -> List[str]:
    if isinstance(select, Mapping):
        entries = [f"{field}={value}" for field, value in select.items()]
    else:
        entries = [] if select is None else [select] if isinstance(select, str) else list(select)
    return _each("--select", entries) + _opt("--fingerprint", fingerprint)


def _registry(plain_http: bool, ca_file: Optional[PathArg], authfile: Optional[PathArg],
              registries_conf: Optional[PathArg]) -> List[str]:
    return _flag("--plain-http", plain_http) + _opt("--ca-file", ca_file) + _opt("--authfile", authfile) + \
        _opt("--registries-conf", registries_conf)


def _dirs(inductor_dir: Optional[PathArg], triton_dir: Optional[PathArg], add: Optional[Mapping[str, PathArg]]) -> List[str]:
    options = _opt("--inductor-dir", inductor_dir) + _opt("--triton-dir", triton_dir)
    for name, folder in (add or {}).items():
        options += ["--add", f"{name}={_path(folder)}"]
    return options
