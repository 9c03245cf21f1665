#!/usr/bin/python3
"""Write the benchmark datasets (Debian's python3-numpy) into DIR.

    gen.py DIR SIZE_MIB

stored.npz   np.savez, 8 float32 arrays, SIZE MiB of data (ZIP64 extras, sizes in the headers)
pipe.npz     the same arrays, np.savez written to a pipe (data descriptors)
big.npy      np.save, one float32 array of SIZE MiB
deflated.npz np.savez_compressed of SIZE/2 MiB of compressible float32 data (~3.3x)
many.npz     np.savez of 20,000 members of 16 float32 each
mixed.npz    np.savez of 20,000 members of 16 values each, in four shapes and two dtypes in
             turn (no header repeats the one before it)
tiny.npz     np.savez of one 4-element array (process start-up cost)
"""
import os, subprocess, sys

import numpy as np


def arrays(size_mib, seed):
    rng = np.random.default_rng(seed)
    n = size_mib * (1 << 20) // 4 // 8
    return {"a%d" % i: rng.random(n, dtype=np.float32).reshape(-1, 256) for i in range(8)}


def compressible(size_mib, rng):
    """SIZE/2 MiB of small random integers stored as float32, in four arrays (deflates ~3.3x)."""
    n = size_mib * (1 << 20) // 2 // 4 // 4
    return {"c%d" % i: rng.integers(0, 64, n).astype(np.float32).reshape(-1, 128) for i in range(4)}


def big_npy(path, size_mib, rng):
    """big.npy: np.save of one float32 array of SIZE MiB."""
    np.save(path, rng.random(size_mib * (1 << 20) // 4, dtype=np.float32).reshape(-1, 1024))


def small_ones(d):
    """many.npz (20,000 members of 16 float32), mixed.npz (the same count, no header like the one
    before) and tiny.npz (one 4-element array): the per-member and start-up sets, whatever SIZE."""
    M = {"m%05d" % i: np.full(16, i, dtype=np.float32) for i in range(20000)}
    np.savez(os.path.join(d, "many.npz"), **M)
    shapes = [(16,), (4, 4), (2, 8), (8, 2)]
    X = {"m%05d" % i: np.full(shapes[i % 4], i, dtype=np.float32 if i % 8 < 4 else np.int32) for i in range(20000)}
    np.savez(os.path.join(d, "mixed.npz"), **X)
    np.savez(os.path.join(d, "tiny.npz"), t=np.arange(4, dtype=np.float32))


def main():
    d, size = sys.argv[1], int(sys.argv[2])
    os.makedirs(d, exist_ok=True)
    A = arrays(size, 1)
    np.savez(os.path.join(d, "stored.npz"), **A)
    del A
    # a real pipe: zipfile cannot seek back, so it writes data descriptors
    child = ("import sys, numpy as np; sys.path.insert(0, %r); import gen; "
             "np.savez(sys.stdout.buffer, **gen.arrays(%d, 1))" % (os.path.dirname(os.path.abspath(__file__)), size))
    with open(os.path.join(d, "pipe.npz"), "wb") as f:
        p1 = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE)
        p2 = subprocess.Popen(["cat"], stdin=p1.stdout, stdout=f)
        p1.stdout.close()
        if p2.wait() or p1.wait():
            sys.exit("pipe.npz: writer failed")
    rng = np.random.default_rng(2)
    big_npy(os.path.join(d, "big.npy"), size, rng)
    C = compressible(size, rng)
    np.savez_compressed(os.path.join(d, "deflated.npz"), **C)
    del C
    small_ones(d)


if __name__ == "__main__":
    main()
