#!/usr/bin/env python3
"""A stand-in warm-up for `ccpack create --settle` tests: writes cache files as a torch.compile run would, into the
folders TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR name (exit 9 when either is unset), fewer new ones each run.

Each run counts the Triton kernel folders already in TRITON_CACHE_DIR (n) and adds kernels by STANDIN_MODE:
  converge  n=0 -> 4 kernels, 4 -> 2, 6 -> 1, 7 -> none (a fixed point at the fourth run)
  always    one more kernel every run (never settles)
A run that adds kernels also adds one FX-graph entry (a pickle naming a generated .py file by absolute path, as
Inductor's do) and one .best_config. Everything is derived from n and the folders, so the same runs in the same
folders write the same bytes.
  STANDIN_FAIL_AT=N   when n == N: write one stray file, then exit 7
  STANDIN_SLEEP_AT=N  when n == N: touch $STANDIN_STATE/ready, then sleep 60 s
  STANDIN_ENVLOG=FILE  each run appends one JSON line: its arguments and the TORCHINDUCTOR_*/TRITON_* variables
                       it got (arguments are otherwise ignored, so a warm-up's own flags can be passed)
  STANDIN_EXIT=N       exit N after the run's work (0 when unset)
SIGINT/SIGTERM: the signal's name is written to $STANDIN_STATE/signal, then exit 1.
"""
import hashlib
import json
import os
import pickle
import signal
import sys
import time

STEPS = {0: 4, 4: 2, 6: 1}


def caught(sig, _frame):
    state = os.environ.get("STANDIN_STATE")
    if state:
        with open(os.path.join(state, "signal"), "w") as f:
            f.write(signal.Signals(sig).name)
    sys.exit(1)


def key(text, n=52):
    import base64
    return base64.b32encode(hashlib.sha256(text.encode()).digest()).decode().rstrip("=")[:n]


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def add_kernel(tri, i):
    name = "triton_poi_fused_add_%d" % i
    folder = os.path.join(tri, key("kernel-%d" % i))
    write(os.path.join(folder, name + ".cubin"), hashlib.sha256(name.encode()).digest() * 8)
    write(os.path.join(folder, name + ".json"), json.dumps({"name": name, "num_warps": 4}))
    children = {f: os.path.join(folder, f) for f in (name + ".cubin", name + ".json")}
    write(os.path.join(folder, "__grp__" + name + ".json"), json.dumps({"child_paths": children}, separators=(",", ":")))


def add_graph(ind, n):
    code = key("code-%d" % n).lower()
    py = os.path.join(ind, code[:2], "c" + code + ".py")
    write(py, "# generated kernel code %d\n" % n)
    write(os.path.join(ind, code[:2], key("tune-%d" % n).lower() + ".best_config"), json.dumps({"XBLOCK": 128, "num_warps": 4}))
    entry = pickle.dumps({"filename": py, "n": n}, protocol=4)
    fx = key("fx-%d" % n).lower()
    write(os.path.join(ind, "fxgraph", fx[:2], "f" + fx, "entry"), entry)


def main():
    signal.signal(signal.SIGINT, caught)
    signal.signal(signal.SIGTERM, caught)
    ind, tri = os.environ.get("TORCHINDUCTOR_CACHE_DIR"), os.environ.get("TRITON_CACHE_DIR")
    if os.environ.get("STANDIN_ENVLOG"):
        seen = {k: v for k, v in os.environ.items() if k.startswith(("TORCHINDUCTOR_", "TRITON_"))}
        with open(os.environ["STANDIN_ENVLOG"], "a") as f:
            f.write(json.dumps({"argv": sys.argv[1:], "env": seen}, sort_keys=True) + "\n")
    if not ind or not tri:
        print("standin: TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR must be set", file=sys.stderr)
        return 9
    os.makedirs(ind, exist_ok=True)
    os.makedirs(tri, exist_ok=True)
    n = sum(1 for e in os.listdir(tri) if os.path.isdir(os.path.join(tri, e)))
    if os.environ.get("STANDIN_FAIL_AT") == str(n):
        write(os.path.join(tri, "stray", "partial.json"), "{}")
        print("standin: failing as asked at n=%d" % n, file=sys.stderr)
        return 7
    if os.environ.get("STANDIN_SLEEP_AT") == str(n):
        write(os.path.join(os.environ["STANDIN_STATE"], "ready"), "")
        time.sleep(60)
    add = 1 if os.environ.get("STANDIN_MODE") == "always" else STEPS.get(n, 0)
    for i in range(n, n + add):
        add_kernel(tri, i)
    if add:
        add_graph(ind, n)
    print("standin: %d kernels there, %d added" % (n, add))
    return int(os.environ.get("STANDIN_EXIT", "0"))


if __name__ == "__main__":
    sys.exit(main())
