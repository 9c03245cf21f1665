"""scan over 5,000 files against check on the same files (issue 42's budget: scan <= 1.1x check).

The tree: 5,000 files in 50 folders, like a shell user's sweep (np.save, np.savez,
np.savez_compressed; 100 of them broken: truncated, an object array, a pickle member).  Each
command runs --runs times, one file list, one process; the median wall and CPU times are compared.
Run it on an idle machine: make bench-scan (writes under build/bench-scan).

--callgrind counts instructions instead (valgrind --tool=callgrind, one run of each command): a
count a loaded machine does not change, the ratio bench/README.md records (make bench-scan-cg:
500 mixed files and 5,000 np.savez files).  --plain makes every file an np.savez archive."""
import argparse
import io
import os
import pickle
import re
import resource
import statistics
import subprocess
import sys
import time
import zipfile

import numpy as np


def make_tree(root, n, plain=False):
    rng = np.random.default_rng(42)
    files = []
    for i in range(n):
        d = os.path.join(root, "run%02d" % (i % 50))
        os.makedirs(d, exist_ok=True)
        a = rng.standard_normal(int(rng.integers(10, 2000))).astype("<f4")
        kind = 1 if plain else i % 3
        p = os.path.join(d, "f%05d.%s" % (i, "npy" if kind == 0 else "npz"))
        if kind == 0:
            np.save(p, a)
        elif kind == 1:
            np.savez(p, w=a, b=a[:10])
        else:
            np.savez_compressed(p, w=a)
        if plain:
            files.append(p)
            continue
        if i % 50 == 7:  # broken ones
            with open(p, "rb+") as f:
                f.truncate(os.path.getsize(p) // 2)
        if i % 50 == 13:
            with zipfile.ZipFile(p if kind else p + ".npz", "a" if kind else "w") as z:
                z.writestr("opt.pkl", pickle.dumps({"lr": 0.1}))
        files.append(p)
    return files


def timed(cmd, stdin):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def instructions(cmd, stdin, out):
    """The instructions cmd runs (callgrind's total), its profile kept in out."""
    r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out] + cmd, input=stdin,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    m = re.search(rb"Collected : (\d+)", r.stderr)
    if not m:
        sys.exit("bench/scan.py: valgrind gave no count: %s" % r.stderr[-500:].decode(errors="replace"))
    return int(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/npzstream")
    ap.add_argument("--dir", default="build/bench-scan")
    ap.add_argument("--files", type=int, default=5000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--plain", action="store_true", help="every file an np.savez archive")
    ap.add_argument("--callgrind", action="store_true", help="count instructions (valgrind) instead of timing")
    a = ap.parse_args()
    tree = os.path.join(a.dir, "tree-%d%s" % (a.files, "-plain" if a.plain else ""))
    if not os.path.isdir(tree):
        make_tree(tree, a.files, a.plain)
    names = sorted(os.path.join(dp, f) for dp, _, fs in os.walk(tree) for f in fs)
    arg = "\0".join(names).encode() + b"\0"
    commands = (("check --jsonl", [a.bin, "check", "--jsonl", "--files-from", "-", "-0"], arg),
                ("scan -r --jsonl", [a.bin, "scan", "-r", "--jsonl", tree], None))
    if a.callgrind:
        # valgrind cannot run a confined process: both unconfined here (the sandbox's own cost is
        # make bench-sandbox's; timed runs below are both confined, the default)
        commands = tuple((label, cmd + ["--no-sandbox"], stdin) for label, cmd, stdin in commands)
        counts = [instructions(cmd, stdin, os.path.join(a.dir, "callgrind.%s.%s" % (label.split()[0], os.path.basename(tree))))
                  for label, cmd, stdin in commands]
        for (label, _, _), n in zip(commands, counts):
            print("%-16s %d files: %d instructions" % (label, len(names), n))
        print("scan / check: %.3fx instructions (budget 1.10x)" % (counts[1] / counts[0]))
        return 0 if counts[1] <= 1.10 * counts[0] else 1
    rows = {}
    for label, cmd, stdin in commands:
        walls, cpus = zip(*(timed(cmd, stdin) for _ in range(a.runs)))
        rows[label] = (statistics.median(walls), statistics.median(cpus))
        print("%-16s %d files: wall %.3f s, cpu %.3f s (median of %d)" % (label, len(names), *rows[label], a.runs))
    w = rows["scan -r --jsonl"][0] / rows["check --jsonl"][0]
    c = rows["scan -r --jsonl"][1] / rows["check --jsonl"][1]
    print("scan / check: wall %.2fx, cpu %.2fx (budget 1.10x); load average %.2f" % (w, c, os.getloadavg()[0]))
    return 0 if c <= 1.10 else 1


if __name__ == "__main__":
    sys.exit(main())
