#!/usr/bin/env python3
"""The documentation's examples, for tests/cli/suites/docs_test.sh (the blocks come from deploy_check.py's `blocks`, the
one reader of a page's blocks).

  docs_check.py blocks DOC OUTDIR          as deploy_check.py blocks
  docs_check.py script BLOCK WHERE [TRUST] a bash script that runs the shell block BLOCK line by line, as written:
                                           after each command line, its exit status is compared with the one the
                                           line expects (0, or N where its comment says "# exits N"), and a
                                           mismatch is written to fd 3 as "WHERE+k: exit R, expected E: LINE"
                                           (WHERE is "DOC:LINE" of the block's first line). After each
                                           `ccpack keygen --out NAME` line, SECRET_PEM (the CI's secret) holds
                                           NAME's text, and with TRUST (a folder) NAME.pub is copied there: the
                                           block's own words put it into the trusted folder of the pod.
  docs_check.py keys SAMPLE REAL [OPAQUE...]
                                           the keys a JSON sample of the docs names (SAMPLE; it may be a sketch:
                                           `"a" | null` alternatives, `{"k1", "k2"}` key lists, `...`, `<...>`
                                           placeholders) against the keys of a real --json report (REAL), at every
                                           depth, the subtrees under the OPAQUE keys ("K", or "K/*" for an object
                                           whose keys are names, "<name>" in the sample) and the keys every report
                                           has (ok, threads, threads_from) aside; prints each difference, exit 1
  docs_check.py synopsis BLOCK HELPDIR     each `ccpack CMD [--option ...]` of a synopsis block against
                                           HELPDIR/CMD (that command's --help): prints each option --help lacks
"""
import json
import os
import re
import shlex
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from deploy_check import blocks  # noqa: E402  (the one owner of block extraction)

EXITS = re.compile(r"#.*\bexits (\d+)\b")
KEYGEN = re.compile(r"^ccpack keygen --out (\S+)")


def script(block, where, trust=None):
    doc, first = where.rsplit(":", 1)
    out = []
    pending, start = "", None
    for k, raw in enumerate(open(block, encoding="utf-8").read().splitlines()):
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        start = k if not pending else start
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        m = EXITS.search(line)
        want = int(m.group(1)) if m else 0
        out.append(raw if start == k else line)
        here = "%s:%d" % (doc, int(first) + start)
        out.append('rc=$?; [ "$rc" -eq %d ] || printf "%%s: exit %%s, expected %%s: %%s\\n" %s "$rc" %d %s >&3'
                   % (want, shlex.quote(here), want, shlex.quote(line)))
        g = KEYGEN.match(line)
        if g:  # the CI's secret holds the key the page made; with TRUST, its .pub is trusted where the pod restores
            out.append('export SECRET_PEM="$(cat %s)"' % g.group(1))
            if trust:
                out.append("mkdir -p %s && cp %s.pub %s/keygen-%s.pub"
                           % (shlex.quote(trust), g.group(1), shlex.quote(trust), os.path.basename(g.group(1))))
    print("\n".join(out))


ALTERNATIVE = re.compile(r'\s*\|\s*("(?:[^"\\]|\\.)*"|null|true|false|-?\d+|\[[^\[\]]*\]|\{[^{}]*\})')
STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')


def sample_keys(text):
    """The key names a sketch of JSON names: a string followed by ':', or standing alone in an object (after '{' or
    ',' and before ',' or '}')."""
    text = re.sub(r"//[^\n]*", "", text)
    text = ALTERNATIVE.sub("", text)
    keys = set()
    for m in STRING.finditer(text):
        before = text[:m.start()].rstrip()[-1:]
        after = text[m.end():].lstrip()[:1]
        if after == ":" or (before in "{," and after in ",}"):
            keys.add(m.group(1))
    return keys


def real_keys(value, opaque, into=None):
    """The keys of a report at every depth; under a key OPAQUE names, nothing ("K"), or only what is below the
    keys of its object, which are names, not keys ("K/*": the doc writes them "<name>")."""
    into = set() if into is None else into
    if isinstance(value, dict):
        for k, v in value.items():
            into.add(k)
            if k + "/*" in opaque and isinstance(v, dict):
                for inner in v.values():
                    real_keys(inner, opaque, into)
            elif k not in opaque:
                real_keys(v, opaque, into)
    elif isinstance(value, list):
        for v in value:
            real_keys(v, opaque, into)
    return into


def keys(sample, real, opaque):
    common = {"ok", "threads", "threads_from"}  # every --json report has them (README)
    # "<name>" and "gpu.arch" are names (of fields), not keys
    doc = {k for k in sample_keys(open(sample, encoding="utf-8").read()) if not k.startswith("<") and "." not in k}
    doc -= common
    seen = real_keys(json.load(open(real, encoding="utf-8")), set(opaque)) - common
    bad = 0
    for k in sorted(seen - doc):
        print("the report has key %r, which the docs' sample does not name" % k)
        bad = 1
    for k in sorted(doc - seen):
        print("the docs' sample names key %r, which the report does not have" % k)
        bad = 1
    return bad


def synopsis(block, helpdir):
    bad = 0
    command = None
    for line in open(block, encoding="utf-8"):
        m = re.match(r"^ccpack (\w+) ", line)
        if m:
            command = m.group(1)
        for option in re.findall(r"(--[a-z][a-z-]*)", line):
            if command and not re.search(r"(^|[\s,\[])%s([\s=,\]]|$)" % re.escape(option),
                                         open(os.path.join(helpdir, command), encoding="utf-8").read(), re.M):
                print("ccpack %s --help does not list %s" % (command, option))
                bad = 1
    return bad


if __name__ == "__main__":
    a = sys.argv[1:]
    if a[:1] == ["blocks"] and len(a) == 3:
        blocks(a[1], a[2])
    elif a[:1] == ["script"] and len(a) in (3, 4):
        script(*a[1:])
    elif a[:1] == ["keys"] and len(a) >= 3:
        sys.exit(keys(a[1], a[2], a[3:]))
    elif a[:1] == ["synopsis"] and len(a) == 3:
        sys.exit(synopsis(a[1], a[2]))
    else:
        sys.exit(__doc__)
