#!/usr/bin/env python3
"""The documentation's code blocks, for tests/cli/suites/deploy_test.sh (and, through `blocks`, tests/cli/suites/docs_test.sh).

  deploy_check.py blocks DOC OUTDIR     writes each example block of DOC (fenced or indented) as OUTDIR/NN.LANG,
                                        and OUTDIR/index (see blocks below)
  deploy_check.py validate FILE.yaml    checks a YAML block: it parses (python3-yaml, else a minimal check of its
                                        shape) and, when it is a Pod or a Deployment, has every field a pod of the
                                        recipe needs (see REQUIRED below); prints what is wrong, exit 1
  deploy_check.py init FILE.yaml ROOT   prints the first init container of a Pod or Deployment as shell lines:
                                        its env (mount paths moved under ROOT), its command, and the local folders
                                        of its mounts ("MOUNT path local kind"), for the suite to run it; nothing
                                        when there is none
  deploy_check.py main FILE.yaml ROOT   the same for the first container (the server)
"""
import os
import re
import shlex
import sys

FENCE = re.compile(r"^```([A-Za-z0-9_-]*)\s*$")
LIST_ITEM = re.compile(r"^( *)([-*+]|[0-9]+[.)]) +")


def indent(line):
    return len(line) - len(line.lstrip(" "))


def blocks(doc, outdir):
    """Every example block of DOC, in order: the fenced ones (their language, "text" when none is named) and the
    indented ones of Markdown (4 spaces more than the list item they sit in, after a blank line; "indented").
    Writes OUTDIR/NN.LANG (NN from 01) and OUTDIR/index: a line "NN.LANG<TAB>line of DOC<TAB>first line" each."""
    os.makedirs(outdir, exist_ok=True)
    found = []  # (lang, first line number, lines)
    lang, lines, start = None, [], 0
    code, blank, base = None, True, 0  # the indented block being read, the line before was blank, list's column
    for n, raw in enumerate(open(doc, encoding="utf-8"), 1):
        line = raw.rstrip("\n")
        m = FENCE.match(line)
        if lang is not None:
            if line == "```":
                found.append((lang, start, lines))
                lang = None
            else:
                lines.append(raw)
            continue
        if code is not None:
            if not line.strip() or indent(line) >= base + 4:
                code[2].append(raw[base + 4:] if line.strip() else "\n")
                blank = not line.strip()
                continue
            while code[2] and code[2][-1] == "\n":
                code[2].pop()
            found.append(code)
            code = None
        if m:
            lang, lines, start = m.group(1) or "text", [], n + 1
            continue
        item = LIST_ITEM.match(line)
        if line.strip() and blank and indent(line) >= base + 4:
            code = ("indented", n, [raw[base + 4:]])
        elif item:
            base = len(item.group(0))
        elif line.strip() and blank and indent(line) < base:
            base = 0  # the list ended
        blank = not line.strip()
    if lang is not None:
        sys.exit("unterminated ``` block in %s" % doc)
    if code is not None:
        found.append(code)
    with open(os.path.join(outdir, "index"), "w", encoding="utf-8") as index:
        for i, (kind, first, text) in enumerate(found, 1):
            name = "%02d.%s" % (i, kind)
            with open(os.path.join(outdir, name), "w", encoding="utf-8") as f:
                f.write("".join(text))
            index.write("%s\t%d\t%s\n" % (name, first, (text[0].strip() if text else "")))


def load(path):
    text = open(path, encoding="utf-8").read()
    try:
        import yaml  # python3-yaml
    except ImportError:
        return minimal(text)
    return yaml.safe_load(text)


def minimal(text):
    """Without python3-yaml: no tabs, indentation in steps of two, and the top-level keys (enough for the checks
    that need only apiVersion and kind; the deep checks are skipped)."""
    top = {}
    for i, line in enumerate(text.splitlines(), 1):
        if "\t" in line:
            raise ValueError("line %d: a tab" % i)
        indent = len(line) - len(line.lstrip(" "))
        if line.strip() and indent % 2:
            raise ValueError("line %d: odd indentation" % i)
        m = re.match(r"^([A-Za-z]+):\s*(.*)$", line)
        if m:
            top[m.group(1)] = m.group(2) or {}
    return {"_minimal": True, **top}


def pod_spec(doc):
    if doc.get("kind") == "Pod":
        return doc.get("spec") or {}
    return ((doc.get("spec") or {}).get("template") or {}).get("spec") or {}


def problems(doc):
    out = []
    if not isinstance(doc, dict):
        return ["not a mapping"]
    if doc.get("_minimal"):
        return [] if doc.get("kind") in (None, "Pod", "Deployment") else ["unknown kind %r" % doc.get("kind")]
    kind = doc.get("kind")
    if kind is None:
        return []  # a fragment: it parses, nothing more to check
    need = {"Pod": "v1", "Deployment": "apps/v1"}
    if kind not in need:
        return ["unknown kind %r" % kind]
    if doc.get("apiVersion") != need[kind]:
        out.append("apiVersion %r for a %s" % (doc.get("apiVersion"), kind))
    if not (doc.get("metadata") or {}).get("name"):
        out.append("no metadata.name")
    if kind == "Deployment":
        spec = doc.get("spec") or {}
        labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        match = (spec.get("selector") or {}).get("matchLabels") or {}
        if not match or any(labels.get(k) != v for k, v in match.items()):
            out.append("spec.selector.matchLabels does not select the template's labels")
    spec = pod_spec(doc)
    sc = spec.get("securityContext") or {}
    for key in ("runAsUser", "fsGroup"):
        if not isinstance(sc.get(key), int):
            out.append("no securityContext.%s" % key)
    volumes = {v.get("name"): v for v in spec.get("volumes") or []}
    if not any("emptyDir" in v for v in volumes.values()):
        out.append("no emptyDir volume for the cache")
    inits, mains = spec.get("initContainers") or [], spec.get("containers") or []
    if not mains:
        out.append("no container")
    for c in inits + mains:
        name = c.get("name") or "?"
        for key in ("name", "image"):
            if not c.get(key):
                out.append("container %s: no %s" % (name, key))
        if not (c.get("resources") or {}).get("limits"):
            out.append("container %s: no resources.limits" % name)
        for e in c.get("env") or []:
            if not e.get("name") or "value" not in e and "valueFrom" not in e:
                out.append("container %s: env entry %r" % (name, e))
        for m in c.get("volumeMounts") or []:
            if m.get("name") not in volumes:
                out.append("container %s: mount of unknown volume %r" % (name, m.get("name")))
            if not str(m.get("mountPath", "")).startswith("/"):
                out.append("container %s: mountPath %r" % (name, m.get("mountPath")))
    runners = [c for c in inits + mains if re.search(r"(^|[\s;&|])ccpack(\s|$)", " ".join(map(str, c.get("command") or [])))]
    if not runners:
        out.append("no container runs ccpack")
    for c in inits:
        if not c.get("command"):
            out.append("init container %s: no command" % c.get("name"))
    for c in runners:
        keys = [m for m in c.get("volumeMounts") or [] if m.get("mountPath") == "/etc/ccpack/trusted.d"]
        if not keys or not any(k in volumes.get(keys[0].get("name"), {}) for k in ("configMap", "secret")):
            out.append("container %s: no trusted key mounted into /etc/ccpack/trusted.d from a ConfigMap or Secret"
                       % c.get("name"))
    return out


def validate(path):
    try:
        doc = load(path)
    except Exception as e:  # any parse error is the finding
        print("%s: does not parse: %s" % (path, e))
        return 1
    found = problems(doc)
    for p in found:
        print("%s: %s" % (path, p))
    return 1 if found else 0


def plan(path, root, which):
    doc = load(path)
    spec = pod_spec(doc)
    found = spec.get("initContainers" if which == "init" else "containers") or []
    if not found:
        return
    c = found[0]
    volumes = {v["name"]: v for v in spec.get("volumes") or []}
    mounts = []
    for m in c.get("volumeMounts") or []:
        v = volumes[m["name"]]
        kind = next(k for k in ("emptyDir", "configMap", "secret", "hostPath") if k in v)
        mounts.append((m["mountPath"], os.path.join(root, m["name"]), kind, (v.get(kind) or {}).get("name", "")))

    def local(text):
        for path_in_pod, here, _, _ in sorted(mounts, key=lambda t: -len(t[0])):
            text = text.replace(path_in_pod, here)
        return text

    for path_in_pod, here, kind, name in mounts:
        print("MOUNT %s %s %s %s" % (shlex.quote(path_in_pod), shlex.quote(here), kind, shlex.quote(name or "-")))
    for e in c.get("env") or []:
        print("ENV %s=%s" % (e["name"], shlex.quote(local(str(e["value"])))))
    print("COMMAND %s" % " ".join(shlex.quote(local(a)) for a in c["command"]))
    print("SECURITY %s %s" % (spec["securityContext"]["runAsUser"], spec["securityContext"]["fsGroup"]))


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    if what == "blocks" and len(sys.argv) == 4:
        blocks(sys.argv[2], sys.argv[3])
    elif what == "validate" and len(sys.argv) == 3:
        sys.exit(validate(sys.argv[2]))
    elif what in ("init", "main") and len(sys.argv) == 4:
        plan(sys.argv[2], sys.argv[3], what)
    else:
        sys.exit(__doc__)
