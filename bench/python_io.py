#!/usr/bin/env python3
"""make bench-python: the budgets of npzstream.open and of load's reads straight into the arrays
(issue 26), ratios measured in one run: every contender once a round, the rounds interleaved, the
median of each kept (the machine is shared and noisy).

usage: .venv-pkg/bin/python bench/python_io.py [--dir DIR] [--size 512] [--rounds 7]

DIR holds bench/gen.py's files (stored.npz, deflated.npz; written there with --size MiB when
missing).  Figures, each process's page cache warm (the file read once before the rounds):
  open     npzstream.open(stored.npz) + touching every array (one byte of every 4 KiB page of
           each) against npzstream.load(stored.npz) + the same touch; budget >= 1.5x
  memory   in a fresh process, open + touch: the peak of RssAnon (private memory, sampled every
           millisecond by a thread while the parser runs with the GIL released) above the
           imports; RssFile (the file's pages mapped: page cache) beside it; budget < 16 MiB
  direct   npzstream.load(stored.npz) against a bare readinto of the file's bytes into a fresh
           np.empty (the one-copy limit: the fastest of one readinto call and calls of 256 KiB
           and 1 MiB); budget >= 0.9x
  deflated npzstream.load(deflated.npz) against np.load + reading every member, single-threaded
           (budget >= 1.0x) and with threads=2 (budget >= 1.6x)
Last lines: a Markdown table (bench/README.md).
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

import numpy as np

import npzstream

HERE = os.path.dirname(os.path.abspath(__file__))


def touch(arrays):
    s = 0
    for a in arrays:
        if a.nbytes:
            s += int(a.reshape(-1, order="A").view(np.uint8)[::4096].sum())
    return s


def bare_one(path, size):
    a = np.empty(size, np.uint8)
    with open(path, "rb", buffering=0) as f:
        f.readinto(a)
    return a


def bare_pieces(path, size, piece):
    a = np.empty(size, np.uint8)
    mv = memoryview(a)
    with open(path, "rb", buffering=0) as f:
        o = 0
        while o < size:
            n = f.readinto(mv[o:o + piece])
            if not n:
                break
            o += n
    return a


def rounds(fns, n):
    """{name: median seconds}: every contender once a round, the order rotated round by round (what
    ran before matters here: NumPy asks for huge pages for large arrays, and the kernel may compact
    memory in the page faults of whatever comes after a pass that filled the page cache)."""
    return {k: t[0] for k, t in timed_rounds(fns, n).items()}


def timed_rounds(fns, n):
    """{name: (median wall seconds, median CPU seconds, median system seconds, median page faults)},
    rounds as rounds() runs them; the CPU time is the process's (user + system, every thread's: a
    contender's worker threads count), the system part beside it (page faults: where a loaded
    machine's noise is), and the minor page faults of a call (fresh memory touched)."""
    samples = {k: [] for k in fns}
    names = list(fns)
    for r in range(n):
        for k in names[r % len(names):] + names[:r % len(names)]:
            f = fns[k]
            t0, u0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
            x = f()
            t1, u1 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
            sys_s = u1.ru_stime - u0.ru_stime
            samples[k].append((t1 - t0, u1.ru_utime - u0.ru_utime + sys_s, sys_s, u1.ru_minflt - u0.ru_minflt))
            del x
    return {k: tuple(statistics.median(col) for col in zip(*v)) for k, v in samples.items()}


MEM_CODE = r"""
import sys, threading, time, numpy as np, npzstream
def anon():
    for l in open('/proc/self/status'):
        if l.startswith('RssAnon'):
            return int(l.split()[1]) << 10
def rssfile():
    for l in open('/proc/self/status'):
        if l.startswith('RssFile'):
            return int(l.split()[1]) << 10
base = anon()
peak = [base]
stop = False
def sample():
    while not stop:
        peak[0] = max(peak[0], anon())
        time.sleep(0.001)
t = threading.Thread(target=sample)
t.start()
z = npzstream.open(sys.argv[1], max_total_bytes="64Gi")
s = 0
for a in z.values():
    s += int(a.reshape(-1, order="A").view(np.uint8)[::4096].sum())
stop = True
t.join()
peak[0] = max(peak[0], anon())
print(peak[0] - base, rssfile(), sum(a.nbytes for a in z.values()))
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="/tmp/npzs-bench-python")
    ap.add_argument("--size", type=int, default=512)
    ap.add_argument("--rounds", type=int, default=7)
    a = ap.parse_args()
    stored, deflated = os.path.join(a.dir, "stored.npz"), os.path.join(a.dir, "deflated.npz")
    if not (os.path.exists(stored) and os.path.exists(deflated)):
        subprocess.run([sys.executable, os.path.join(HERE, "gen.py"), a.dir, str(a.size)], check=True)
    size = os.path.getsize(stored)
    lim = {"max_total_bytes": "64Gi", "max_bytes": "64Gi"}
    for p in (stored, deflated):  # warm the page cache
        with open(p, "rb") as f:
            while f.read(1 << 24):
                pass
    print("bench: %s (%.0f MiB), %s (%.0f MiB); NumPy %s, Python %s, npzstream %s; %d rounds"
          % (stored, size / 2**20, deflated, os.path.getsize(deflated) / 2**20, np.__version__,
             sys.version.split()[0], npzstream.__version__, a.rounds), flush=True)

    def np_load(path):
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}

    def open_touch():
        z = npzstream.open(stored, **lim)
        touch(z.values())
        return z

    def load_touch():
        r = npzstream.load(stored, **lim)
        touch(r.values())
        return r

    t = rounds({"open": open_touch, "load": load_touch,
                "bare": lambda: bare_one(stored, size),
                "bare256k": lambda: bare_pieces(stored, size, 256 << 10),
                "bare1m": lambda: bare_pieces(stored, size, 1 << 20),
                "loadonly": lambda: npzstream.load(stored, **lim)}, a.rounds)
    bare = min(t["bare"], t["bare256k"], t["bare1m"])
    d = rounds({"np": lambda: np_load(deflated),
                "load1": lambda: npzstream.load(deflated, **lim),
                "load2": lambda: npzstream.load(deflated, threads=2, **lim)}, a.rounds)
    r = subprocess.run([sys.executable, "-c", MEM_CODE, stored], capture_output=True, text=True, check=True)
    anon, rfile, nbytes = (int(x) for x in r.stdout.split())
    rows = [
        ("`open` + touch vs `load` + touch (stored, %d MiB)" % (size >> 20),
         "%.3f s" % t["open"], "%.3f s" % t["load"], t["load"] / t["open"], 1.5),
        ("private memory of `open` + touch (peak RssAnon above the imports)",
         "%.1f MiB" % (anon / 2**20), "RssFile %.0f MiB (the page cache, mapped)" % (rfile / 2**20), None, None),
        ("`load` (stored) vs bare `readinto` into `np.empty`",
         "%.3f s" % t["loadonly"],
         "%.3f s (one call %.3f, 256 KiB %.3f, 1 MiB %.3f)" % (bare, t["bare"], t["bare256k"], t["bare1m"]),
         bare / t["loadonly"], 0.9),
        ("`load` (deflated) vs `np.load` + read", "%.3f s" % d["load1"], "%.3f s" % d["np"], d["np"] / d["load1"], 1.0),
        ("`load(threads=2)` (deflated) vs `np.load` + read", "%.3f s" % d["load2"], "%.3f s" % d["np"],
         d["np"] / d["load2"], 1.6),
    ]
    print()
    print("| figure | npzstream | reference | ratio | budget | |")
    print("|---|---:|---:|---:|---:|---|")
    for name, ours, ref, ratio, budget in rows:
        if ratio is None:
            ok = anon < 16 << 20
            print("| %s | %s | %s | | < 16 MiB | %s |" % (name, ours, ref, "met" if ok else "NOT met"))
        else:
            print("| %s | %s | %s | **%.2fx** | %.1fx | %s |" % (name, ours, ref, ratio, budget,
                                                              "met" if ratio >= budget else "NOT met"))


if __name__ == "__main__":
    main()
