#!/usr/bin/python3
"""The fast decoder (src/fastinf.c) against zlib: single-threaded deflated loads of
np.savez_compressed archives of three kinds of data, SIZE MiB of array data each, written by
Debian's NumPy:

  floats  float32 from a normal distribution (deflate keeps ~92%: nearly all literals)
  quant   quantised weights: float32 of 16 levels (~20%: short literal codes)
  ints    int64 from [0, 1000) (~25%: a match every element)

Commands, each timed in the same run, interleaved round by round (median of each):
  check               npzstream check FILE (the default decoder)
  check --inflate-zlib   the same with zlib alone
  bare zlib loop      bench/limit inflate: walk the local headers, zlib raw inflate into a 256 KiB
                      window, CRC-32 of the output (no checks): the reference, ratio 1.00
  bare decoder loop   bench/limit inflate-fast: the same walk with the fast decoder
  bare ISA-L loop     bench/limit inflate-isal (the lenient opt-in; where built)
  load()              with --python PY: npzstream.load(bytes) in PY, the file read before the clock
The CPU time (user + system) of each run is what is compared (the machine may be shared); the
wall time is shown too, with the load average before and after the run.

usage: make bench-fastinf [FASTINF_SIZE=64] [BENCH_ARGS="--rounds 9 --python .venv-pkg/bin/python"]
       (bench/fastinf.py --bin build/npzstream --limit build/bench/limit --size 64)
Prints a Markdown table for bench/README.md.
"""
import argparse, os, resource, shutil, statistics, subprocess, sys, tempfile, time

GEN = r"""
import sys, numpy as np
d, mib = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(7)
n = mib << 20
np.savez_compressed(d + "/floats.npz", a=rng.standard_normal(n // 4).astype(np.float32))
w = np.clip(np.round(rng.standard_normal(n // 4) * 3), -8, 7).astype(np.float32) * np.float32(0.0123)
np.savez_compressed(d + "/quant.npz", w=w)
np.savez_compressed(d + "/ints.npz", i=rng.integers(0, 1000, n // 8).astype(np.int64))
"""

LOAD = r"""
import sys, time, npzstream
data = open(sys.argv[1], "rb").read()
t = time.process_time()
npzstream.load(data)
print(time.process_time() - t)
"""


def run(cmd):
    """(CPU seconds, wall seconds) of one run of cmd (a list); exit status 0 or 1 (a verdict)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.communicate()
    wall = time.perf_counter() - t0
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode not in (0, 1):
        sys.exit("bench: %s failed: %s" % (" ".join(cmd), err[-500:]))
    return out, wall, ru


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/npzstream")
    ap.add_argument("--limit", default="build/bench/limit")
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--python", help="a Python with the npzstream package, for the load() rows")
    ap.add_argument("--keep", help="keep the datasets in this folder (made once)")
    a = ap.parse_args()
    d = a.keep or tempfile.mkdtemp(prefix="npzs-fastinf-")
    os.makedirs(d, exist_ok=True)
    if not os.path.exists(os.path.join(d, "ints.npz")):
        subprocess.run(["/usr/bin/python3", "-c", GEN, d, str(a.size)], check=True)
    has_isal = subprocess.run([a.limit, "inflate-isal", os.devnull], capture_output=True).returncode == 0
    load0 = os.getloadavg()
    rows = []
    for name in ("floats", "quant", "ints"):
        f = os.path.join(d, name + ".npz")
        cmds = {"check": [a.bin, "check", f], "check --inflate-zlib": [a.bin, "check", "--inflate-zlib", f],
                "bare zlib loop": [a.limit, "inflate", f], "bare decoder loop": [a.limit, "inflate-fast", f]}
        if has_isal:
            cmds["bare ISA-L loop (lenient)"] = [a.limit, "inflate-isal", f]
        if a.python:
            cmds["load() in Python"] = [a.python, "-c", LOAD, f]
            cmds["load(inflate_zlib=True)"] = [a.python, "-c", LOAD.replace("load(data)", "load(data, inflate_zlib=True)"), f]
        cpu = {k: [] for k in cmds}
        wall = {k: [] for k in cmds}
        for _ in range(a.rounds):
            for k, c in cmds.items():
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                out, w, after = run(c)
                used = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
                if k.startswith("load"):  # the process's own clock around load() alone
                    used = float(out.split()[-1])
                cpu[k].append(used)
                wall[k].append(w)
        ref = statistics.median(cpu["bare zlib loop"])
        for k in cmds:
            c, w = statistics.median(cpu[k]), statistics.median(wall[k])
            rows.append((name, k, c, w, ref / c if c else 0.0))
    load1 = os.getloadavg()
    size = {n: os.path.getsize(os.path.join(d, n + ".npz")) for n in ("floats", "quant", "ints")}
    print("Datasets: %d MiB of array data each (np.savez_compressed): %s" %
          (a.size, ", ".join("%s %.1f MB" % (n, size[n] / 1e6) for n in size)))
    print("Load average before %.2f %.2f %.2f, after %.2f %.2f %.2f; %d rounds, medians" % (load0 + load1 + (a.rounds,)))
    print()
    print("| dataset | command | CPU (ms) | wall (ms) | x bare zlib loop (CPU) |")
    print("|---|---|---:|---:|---:|")
    for name, k, c, w, r in rows:
        print("| %s | %s | %.1f | %.1f | %s |" % (name, k, c * 1e3, w * 1e3, "**%.2f**" % r if k == "check" else "%.2f" % r))
    if not a.keep:
        shutil.rmtree(d)


if __name__ == "__main__":
    main()
