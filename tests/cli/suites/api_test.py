#!/usr/bin/env python3
"""The Python API (python/ccpack) against the real binary: a signed create / restore round trip of the
sample cache with every restored byte equal, an archive refused for its fingerprint raising Refused (exit 3, the
comparison in its report, nothing written), a tampered archive raising IntegrityError (exit 4), a usage error
raising UsageError (2), create(settle=...) and status(max_compiled=...) with a stand-in warm-up (CommandFailed,
OverTheGate), and the exit-code mapping agreeing with the table the binary's --help prints.
Runs with the ccpack package importable (an installed wheel, or PYTHONPATH=python with $CCPACK_BINARY).
Usage: api_test.py PATH/TO/tests/data
"""

from __future__ import annotations

import filecmp
import os
import re
import shutil
import subprocess
import sys
import unittest
from pathlib import Path

import ccpack
import ccpack.errors

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "helpers"))
from suite_harness import Registry, finish, scratch  # noqa: E402 (the helpers folder is on the path only now)

DATA = Path(sys.argv.pop(1)).resolve() if len(sys.argv) > 1 else None
WORK = scratch("api")


def fake_python(name: str, torch_version: str) -> Path:
    """An interpreter whose sys.path shows torch TORCH_VERSION (as the fingerprint tests fake one)."""
    site = WORK / "site" / name
    (site / f"torch-{torch_version}.dist-info").mkdir(parents=True)
    (site / f"torch-{torch_version}.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\n")
    (site / "torch").mkdir()
    (site / "torch" / "version.py").write_text(f"__version__ = '{torch_version}'\ncuda = '12.6'\nhip = None\n")
    exe = WORK / "bin" / name
    exe.parent.mkdir(exist_ok=True)
    exe.write_text(f"#!/bin/sh\nPYTHONPATH={site} exec {sys.executable} \"$@\"\n")
    exe.chmod(0o755)
    return exe


def same_tree(a: Path, b: Path) -> list:
    """The paths whose bytes differ or that only one side has (the restore marker and entry list aside)."""
    diff = []
    cmp = filecmp.dircmp(a, b, ignore=[".ccpack-marker.json", ".ccpack-entries"])
    stack = [(cmp, Path("."))]
    while stack:
        c, rel = stack.pop()
        diff += [str(rel / n) for n in c.left_only + c.right_only + c.funny_files]
        _, mismatch, errors = filecmp.cmpfiles(c.left, c.right, c.common_files, shallow=False)
        diff += [str(rel / n) for n in mismatch + errors]
        stack += [(sub, rel / n) for n, sub in c.subdirs.items()]
    return diff


class Api(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        for var in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR", "TRITON_HOME", "CCPACK_SIGNING_KEY",
                    "CCPACK_TRUSTED_KEYS", "CCPACK_ALLOW_UNSIGNED", "CCPACK_ON_MISMATCH", "CCPACK_PYTHON"):
            os.environ.pop(var, None)
        os.environ["HOME"] = str(WORK / "home")
        os.environ.setdefault("CCPACK_PROBE_CACHE", str(WORK / "probe-memo.json"))
        cls.sample = DATA / "sample-cache"
        cls.dirs = {"inductor_dir": cls.sample / "inductor_cache", "triton_dir": cls.sample / "triton_cache"}
        key = WORK / "ci.key"
        subprocess.run([ccpack.binary(), "keygen", "--out", str(key)], check=True, stdout=subprocess.DEVNULL)
        cls.key = key
        cls.signed = WORK / "signed.ccpack"
        cls.report = ccpack.create(cls.signed, sign_key=key, note="api test", **cls.dirs)

    def test_create_reports(self) -> None:
        r = self.report
        self.assertIs(r["ok"], True)
        self.assertEqual(r["archive"], str(self.signed))
        self.assertEqual(r["files"], 107)
        self.assertEqual(r["archive_bytes"], self.signed.stat().st_size)
        self.assertEqual([c["name"] for c in r["components"]], ["inductor", "triton"])
        self.assertIsNotNone(r["signed_by"])

    def test_round_trip(self) -> None:
        pod = WORK / "pod"
        r = ccpack.restore(self.signed, trust=f"{self.key}.pub", inductor_dir=pod / "inductor",
                           triton_dir=pod / "triton", relocate=False)
        self.assertIs(r["ok"], True)
        self.assertEqual(same_tree(self.sample / "inductor_cache", pod / "inductor"), [])
        self.assertEqual(same_tree(self.sample / "triton_cache", pod / "triton"), [])
        # verify and inspect see the same archive; check on this machine finds nothing stale.
        self.assertIs(ccpack.verify(self.signed, trust=[f"{self.key}.pub"])["ok"], True)
        entries = ccpack.inspect(self.signed, files=True)["manifest"]["entries"]
        self.assertEqual(len([e for e in entries if e["type"] == "file"]), 107)

    def test_refused_for_its_fingerprint(self) -> None:
        archive = WORK / "torch271.ccpack"
        ccpack.create(archive, python=fake_python("py271", "2.7.1+cu126"), **self.dirs)
        target = WORK / "refused"
        with self.assertRaises(ccpack.Refused) as caught:
            ccpack.restore(archive, allow_unsigned=True, python=fake_python("py280", "2.8.0+cu126"),
                           inductor_dir=target / "inductor", triton_dir=target / "triton")
        e = caught.exception
        self.assertEqual(e.exit_code, 3)
        self.assertIsInstance(e, ccpack.Error)
        self.assertIn("does not fit this machine", e.message)
        self.assertIn("torch.version", e.message)
        self.assertIs(e.report["ok"], False)
        self.assertEqual(e.report["exit_code"], 3)
        self.assertIn("fingerprint", e.report)
        self.assertFalse(target.exists(), "a refused restore wrote something")
        with self.assertRaises(ccpack.Refused):
            ccpack.check(archive, python=WORK / "bin" / "py280", **self.dirs)

    def test_tampered_raises_integrity_error(self) -> None:
        tampered = WORK / "tampered.ccpack"
        data = bytearray(self.signed.read_bytes())
        data[-100] ^= 0x01  # inside the last payload frame
        tampered.write_bytes(bytes(data))
        target = WORK / "tampered-pod"
        with self.assertRaises(ccpack.IntegrityError) as caught:
            ccpack.restore(tampered, trust=f"{self.key}.pub", inductor_dir=target / "inductor",
                           triton_dir=target / "triton")
        self.assertEqual(caught.exception.exit_code, 4)
        self.assertIn("tampered.ccpack", caught.exception.message)
        self.assertFalse(target.exists() and any(target.iterdir()), "a tampered restore left files")
        # Unsigned where a signature is required: the same class.
        unsigned = WORK / "unsigned.ccpack"
        ccpack.create(unsigned, **self.dirs)
        with self.assertRaises(ccpack.IntegrityError) as not_signed:
            ccpack.verify(unsigned, trust=f"{self.key}.pub")
        self.assertEqual(not_signed.exception.exit_code, 4)

    def test_usage_error(self) -> None:
        with self.assertRaises(ccpack.UsageError) as caught:
            ccpack.restore(self.signed, on_mismatch="maybe")  # type: ignore[arg-type]
        self.assertEqual(caught.exception.exit_code, 2)
        self.assertIn("--on-mismatch", caught.exception.message)
        with self.assertRaises(ccpack.Error) as missing:
            ccpack.verify(WORK / "no-such.ccpack", allow_unsigned=True)
        self.assertEqual(type(missing.exception), ccpack.Error)
        self.assertEqual(missing.exception.exit_code, 1)

    def test_only_ccpack_exceptions(self) -> None:
        # What stops the binary from starting is a ccpack exception too: a path past the system's limit on one
        # argument, a NUL in a path.
        with self.assertRaises(ccpack.UsageError) as too_long:
            ccpack.verify(WORK / ("x" * 300_000), allow_unsigned=True)
        self.assertEqual(too_long.exception.exit_code, 2)
        self.assertIn("too long for one command line", too_long.exception.message)
        with self.assertRaises(ccpack.UsageError) as nul:
            ccpack.restore(self.signed, inductor_dir=str(WORK / "a\0b"))
        self.assertEqual(nul.exception.exit_code, 2)
        self.assertIn("NUL byte", nul.exception.message)

    def test_python_m_ccpack(self) -> None:
        # python -m ccpack is the binary itself (exit code and error line), and a missing binary is one line too.
        m = subprocess.run([sys.executable, "-m", "ccpack", "creat"], capture_output=True, text=True)
        self.assertEqual((m.returncode, m.stderr), (2, "ccpack: error: unknown command 'creat'; did you mean 'create'?\n"))
        env = dict(os.environ, CCPACK_BINARY=str(WORK / "no-such-binary"))
        m = subprocess.run([sys.executable, "-m", "ccpack", "--version"], capture_output=True, text=True, env=env)
        self.assertEqual((m.returncode, m.stderr),
                         (1, f"ccpack: error: $CCPACK_BINARY names '{WORK / 'no-such-binary'}', which is not a file\n"))
        saved = os.environ.get("CCPACK_BINARY")
        os.environ["CCPACK_BINARY"] = str(WORK / "no-such-binary")
        try:
            with self.assertRaises(ccpack.Error) as missing:
                ccpack.fingerprint()
        finally:
            if saved is None:
                os.environ.pop("CCPACK_BINARY")
            else:
                os.environ["CCPACK_BINARY"] = saved
        self.assertEqual(missing.exception.exit_code, 1)
        self.assertIn("which is not a file", missing.exception.message)

    def test_fingerprint(self) -> None:
        r = ccpack.fingerprint(python=fake_python("pyfp", "2.7.1+cu126"))
        self.assertEqual(r["fields"]["torch.version"]["value"], "2.7.1+cu126")

    def test_status(self) -> None:
        # `ccpack status` is a newer command: a binary without it says so as a usage error.
        try:
            r = ccpack.status()
        except ccpack.UsageError as e:
            self.assertIn("unknown command 'status'", e.message)
        else:
            self.assertIsInstance(r, dict)
            self.assertIs(r["ok"], True)

    def test_settle_and_the_gate(self) -> None:
        """create(settle=N, command=...) settles the stand-in warm-up; a failing one raises CommandFailed; the
        status gate raises OverTheGate past max_compiled."""
        standin = [sys.executable, str(Path(__file__).resolve().parent.parent / "helpers" / "settle_standin.py")]
        work = WORK / "settle"
        work.mkdir()
        dirs = {"inductor_dir": work / "src" / "ind", "triton_dir": work / "src" / "tri"}
        os.environ["STANDIN_MODE"] = "converge"
        r = ccpack.create(work / "s.ccpack", settle=4, command=standin, **dirs)
        self.assertEqual((r["settle"]["settled"], r["settle"]["stopped"], r["settle"]["runs"]), (True, "fixed-point", 3))
        self.assertEqual([x["compiled"]["triton_kernels"] for x in r["settle"]["run_reports"][1:]], [2, 1, 0])
        os.environ["STANDIN_FAIL_AT"] = "4"
        with self.assertRaises(ccpack.CommandFailed) as failed:
            ccpack.create(work / "f.ccpack", settle=2, command=standin, inductor_dir=work / "f" / "ind", triton_dir=work / "f" / "tri")
        del os.environ["STANDIN_FAIL_AT"]
        self.assertEqual(failed.exception.exit_code, 6)
        self.assertEqual(failed.exception.message, "settle run 1 of '" + sys.executable + "' exited 7; nothing written")
        self.assertFalse((work / "f.ccpack").exists())
        with self.assertRaises(ccpack.UsageError):
            ccpack.create(work / "u.ccpack", settle=2)
        try:
            pod = {"inductor_dir": work / "pod" / "ind", "triton_dir": work / "pod" / "tri"}
            # A plain restore in a process without the settings create(settle=...) set for its runs is refused ...
            with self.assertRaises(ccpack.Refused) as lacking:
                ccpack.restore(work / "s.ccpack", allow_unsigned=True, **pod)
            self.assertIn("TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE=0 TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK=0", lacking.exception.message)
            # ... and activate() sets them in os.environ, then restores.
            r = ccpack.activate(work / "s.ccpack", allow_unsigned=True, **pod)
            self.assertEqual((r["env"]["TORCHINDUCTOR_CACHE_DIR"], r["env"]["TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK"]), (str(pod["inductor_dir"]), "0"))
            self.assertEqual(os.environ["TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE"], "0")
            self.assertEqual([c["status"] for c in r["components"]], ["restored", "restored"])
            gate = ["--inductor-dir", str(pod["inductor_dir"]), "--triton-dir", str(pod["triton_dir"])]
            self.assertEqual(ccpack.status(max_compiled=0, extra_args=gate)["triton_kernels_since_restore"], 0)
            os.environ.update(TORCHINDUCTOR_CACHE_DIR=str(pod["inductor_dir"]), TRITON_CACHE_DIR=str(pod["triton_dir"]), STANDIN_MODE="always")
            subprocess.run(standin, check=True, stdout=subprocess.DEVNULL)
            with self.assertRaises(ccpack.OverTheGate) as over:
                ccpack.status(max_compiled=0, extra_args=gate)
            self.assertEqual(over.exception.report["triton_kernels_since_restore"], 1)
        finally:
            for var in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR", "STANDIN_MODE", "TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE",
                        "TORCHINDUCTOR_DYNAMIC_SCALE_RBLOCK", "TRITON_PTXAS_PATH", "TORCHINDUCTOR_COMPILE_THREADS"):
                os.environ.pop(var, None)

    def test_registry_push_ls_pull_restore(self) -> None:
        """push, ls, pull and restore oci:// through the API's own arguments, against Debian's docker-registry on
        127.0.0.1 (stopped by its PID); an unsigned push raises IntegrityError, a mistyped select UsageError."""
        if not shutil.which("docker-registry"):
            self.skipTest("docker-registry is not installed (scripts/setup installs it)")
        with Registry(WORK / "registry") as reg:
            port = reg.port
            ref = f"oci://127.0.0.1:{port}/api/cache:v1"
            pushed = ccpack.push(self.signed, ref, index=True, plain_http=True)
            listing = ccpack.ls(ref, plain_http=True)
            self.assertEqual(len(listing["archives"]), 1)
            self.assertEqual(listing["archives"][0]["bytes"], self.signed.stat().st_size)
            self.assertEqual(pushed["layer_digest"], listing["archives"][0]["digest"])
            pulled = ccpack.pull(ref, WORK / "pulled.ccpack", plain_http=True)
            self.assertEqual(pulled["layer_digest"], pushed["layer_digest"])
            self.assertEqual((WORK / "pulled.ccpack").read_bytes(), self.signed.read_bytes())
            checked = ccpack.check(ref, plain_http=True, **self.dirs)
            self.assertEqual(checked["archive"], ref)
            # The registry's header judged as the file it came from is.
            self.assertEqual(checked["fingerprint"], ccpack.check(self.signed, **self.dirs)["fingerprint"])
            pod = WORK / "oci-pod"
            ccpack.restore(ref, trust=f"{self.key}.pub", plain_http=True, inductor_dir=pod / "inductor",
                           triton_dir=pod / "triton")
            self.assertEqual(same_tree(self.sample / "inductor_cache", pod / "inductor"), [])
            unsigned = WORK / "unsigned-push.ccpack"
            ccpack.create(unsigned, **self.dirs)
            with self.assertRaises(ccpack.IntegrityError) as caught:
                ccpack.push(unsigned, f"oci://127.0.0.1:{port}/api/unsigned:v1", plain_http=True)
            self.assertEqual(caught.exception.exit_code, 4)
        with self.assertRaises(ccpack.UsageError) as typo:
            ccpack.check(self.signed, select={"gpu.arch": "sm_9O"}, **self.dirs)
        self.assertIn("sm_90", str(typo.exception))

    def test_exit_codes_agree_with_the_binary(self) -> None:
        text = subprocess.run([ccpack.binary(), "--help"], check=True, capture_output=True, text=True).stdout
        table = dict(re.findall(r"^  ([0-9]+)  ([a-z ]+?)(?::| \()", text.split("Exit codes:", 1)[1], re.M))
        self.assertEqual(table.pop("0"), "done")
        self.assertEqual({int(code): kind for code, kind in table.items()},
                         {code: cls.kind for code, cls in ccpack.errors.EXCEPTIONS.items()})
        for cls in ccpack.errors.EXCEPTIONS.values():
            self.assertTrue(issubclass(cls, ccpack.Error))


if __name__ == "__main__":
    if DATA is None:
        sys.exit("usage: api_test.py PATH/TO/tests/data")
    finish(WORK)
