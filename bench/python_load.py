#!/usr/bin/env python3
"""make bench-python: npzstream.load against np.load, ratios measured in one run.

usage: .venv-pkg/bin/python bench/python_load.py [--mib 512] [--repeat 3] [--dir DIR]

Writes two archives of --mib MiB of arrays (four members): one with np.savez, one with
np.savez_compressed (smooth int16 signals and small integer labels, which deflate well, beside
float32 noise), then, best of --repeat, in this process:
  stored:      npzstream.load(path)  vs  np.load(path) + reading every member
  deflated:    the same on the savez_compressed file
  chunks:      npzstream.load of the stored bytes in 4 KiB memoryview chunks vs 1 MiB chunks
and in a fresh process per reader: the peak RSS of load(path) above the process's RSS once
numpy and npzstream are imported, against the arrays' size.
Targets (issue 15): stored >= 4x, deflated >= 1x, peak <= arrays + 8 MiB, 4 KiB >= 0.8x 1 MiB.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import npzstream


def arrays(mib):
    n = (mib << 20) // 4  # bytes / 4 per member
    rng = np.random.default_rng(7)
    t = np.arange(n // 2, dtype=np.float64)
    return {
        "noise": rng.standard_normal(n // 4, dtype=np.float32),            # n bytes
        "signal": (1000 * np.sin(t / 500)).astype(np.int16),                # n bytes
        "labels": rng.integers(0, 10, n // 8, dtype=np.int64).astype("<i8"),  # n bytes
        "weights": np.asfortranarray(rng.standard_normal((n // 8 // 64, 64)).astype(np.float64)),  # ~n bytes
    }


def best(stmt, setup, repeat):
    """Best of `repeat` runs of stmt, each measurement in a fresh process (the allocator's state
    after one large load changes the next one's page faults)."""
    code = ("import time, numpy as np, npzstream\n" + setup + "\n"
            "t0 = time.perf_counter()\n" + stmt + "\n"
            "print(time.perf_counter() - t0)\n")
    ts = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
          for _ in range(repeat)]
    return min(ts)


NP_TOUCH = ("with np.load(PATH, allow_pickle=False) as z:\n"
            "    for k in z.files:\n"
            "        z[k]")


def peak_rss(path, how):
    """The high-water mark of a fresh process's RSS (VmHWM: ru_maxrss would carry this
    process's own across fork and exec) above its mark once numpy and npzstream are imported."""
    code = ("import numpy, npzstream\n"
            "hwm = lambda: int([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1])\n"
            "base = hwm()\n"
            "r = %s\n"
            "n = sum(a.nbytes for a in r.values())\n"
            "print(base, hwm(), n)\n") % how
    out = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True, check=True).stdout.split()
    base, peak, n = (int(x) for x in out)
    return (peak - base) * 1024, n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=512)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", default=None)
    a = ap.parse_args()
    d = a.dir or tempfile.mkdtemp(prefix="npzs-bench-")
    os.makedirs(d, exist_ok=True)
    stored, deflated = os.path.join(d, "stored.npz"), os.path.join(d, "deflated.npz")
    arrs = arrays(a.mib)
    total = sum(x.nbytes for x in arrs.values())
    if not os.path.exists(stored):
        np.savez(stored, **arrs)
    if not os.path.exists(deflated):
        np.savez_compressed(deflated, **arrs)
    del arrs
    print("NumPy %s, Python %s, npzstream %s; arrays %.1f MiB; stored %.1f MiB, deflated %.1f MiB on disk"
          % (np.__version__, sys.version.split()[0], npzstream.library_version(), total / 2**20,
             os.path.getsize(stored) / 2**20, os.path.getsize(deflated) / 2**20))
    for p in (stored, deflated):  # warm the page cache
        with open(p, "rb") as f:
            while f.read(1 << 24):
                pass
    rows = []
    for label, path in (("stored (np.savez)", stored), ("deflated (np.savez_compressed)", deflated)):
        setup = "PATH = %r" % path
        ours = best("npzstream.load(PATH, max_bytes=1 << 40)", setup, a.repeat)
        theirs = best(NP_TOUCH, setup, a.repeat)
        rows.append((label, ours, theirs))
        print("%-32s npzstream.load %7.3f s (%6.0f MiB/s)   np.load + touch %7.3f s   ratio %.2fx"
              % (label, ours, total / 2**20 / ours, theirs, theirs / ours))
    chunks = ("data = open(%r, 'rb').read()\nmv = memoryview(data)\n"
              "ch = [mv[i:i + N] for i in range(0, len(mv), N)]  # the chunks as a server has them") % stored
    t4k = best("npzstream.load(ch, max_bytes=1 << 40)", "N = 4096\n" + chunks, a.repeat)
    t1m = best("npzstream.load(ch, max_bytes=1 << 40)", "N = 1 << 20\n" + chunks, a.repeat)
    print("%-32s 4 KiB chunks %7.3f s   1 MiB chunks %7.3f s   ratio %.2fx" % ("chunks (stored, from memory)",
                                                                             t4k, t1m, t1m / t4k))
    for label, path in (("stored", stored), ("deflated", deflated)):
        extra, n = peak_rss(path, "npzstream.load(__import__('sys').argv[1], max_bytes=1 << 40)")
        print("%-32s peak RSS of load above the imports %.1f MiB for %.1f MiB of arrays: +%.1f MiB"
              % ("memory (" + label + ")", extra / 2**20, n / 2**20, (extra - n) / 2**20))
        rows.append(("rss " + label, extra, n))


if __name__ == "__main__":
    main()
