#!/usr/bin/python3
"""What the sandbox costs (issue 42; SECURITY.md, "The sandbox"): `check` confined (the default)
against `check --no-sandbox`, CPU time (user + system, medians of interleaved runs, so that a
loaded machine slows both alike; callgrind cannot run a confined process: valgrind's JIT maps
executable memory, which the filter refuses):

  start    one tiny .npz: the fixed cost (the filter compiled and loaded, the ruleset made)
  many     N small .npz files by --files-from: the list read in, one Landlock rule a file
  many-P   the same with -P 4 (threads inherit the filter)
  big      one .npy of SIZE MiB: the filter on every read() (a system call a 128 KiB read)

usage: make bench-sandbox [SIZE=64] [BENCH_ARGS="--rounds 10 --files 5000"]
  (bench/sandbox.py --bin build/npzstream --size 64)
Prints a Markdown table for bench/README.md.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from budgets import cpu_times, load  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/npzstream")
    ap.add_argument("--size", type=int, default=64, help="MiB of the big .npy")
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--keep", help="a folder for the inputs (kept)")
    a = ap.parse_args()
    d = a.keep or tempfile.mkdtemp(prefix="npzs-sandbox-")
    os.makedirs(d, exist_ok=True)
    tiny = os.path.join(d, "tiny.npz")
    np.savez(tiny, a=np.arange(4, dtype="<f4"))
    many = os.path.join(d, "many")
    os.makedirs(many, exist_ok=True)
    names = []
    for i in range(a.files):
        p = os.path.join(many, "f%05d.npz" % i)
        if not os.path.exists(p):
            np.savez(p, a=np.arange(16, dtype="<f4") + i, b=np.ones((2, 2)))
        names.append(p)
    lst = os.path.join(d, "list")
    with open(lst, "w") as f:
        f.write("\n".join(names) + "\n")
    big = os.path.join(d, "big.npy")
    if not os.path.exists(big) or os.path.getsize(big) < a.size << 20:
        np.save(big, np.zeros(a.size << 18, dtype="<f4"))
    b = os.path.abspath(a.bin)
    rows = [("start", "%s check -q %s" % (b, tiny)), ("many", "%s check -q --files-from %s" % (b, lst)),
            ("many-P", "%s check -q -P 4 --files-from %s" % (b, lst)), ("big", "%s check -q %s" % (b, big))]
    print("load average before: %s" % load(), file=sys.stderr)
    print("| run | confined CPU s | --no-sandbox CPU s | ratio |")
    print("|---|---:|---:|---:|")
    for name, cmd in rows:
        t = cpu_times([("on", cmd), ("off", cmd.replace(" check ", " check --no-sandbox "))], a.rounds)
        print("| %s | %.4f | %.4f | %.3f |" % (name, t["on"], t["off"], t["on"] / t["off"] if t["off"] else 0))
    print("load average after: %s" % load(), file=sys.stderr)
    if not a.keep:
        shutil.rmtree(d)


if __name__ == "__main__":
    main()
