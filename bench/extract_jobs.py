#!/usr/bin/python3
"""extract -j 2 of one member of gen.py's stored.npz and deflated.npz (written to /dev/null, the
whole archive read to its verdict), for each binary given, in interleaved rounds; medians.

    bench/extract_jobs.py --dir DIR [--rounds 7] BIN...    (DIR: bench/gen.py's datasets)

Written to compare the command line before and after extract stopped mapping the rest of the
file under -j N (it reads it: bench/README.md, "extract -j 2 reads")."""
import argparse, os, statistics, subprocess, time

ap = argparse.ArgumentParser()
ap.add_argument("--dir", required=True)
ap.add_argument("--rounds", type=int, default=7)
ap.add_argument("bins", nargs="+")
a = ap.parse_args()
cases = [("stored.npz", "a0"), ("deflated.npz", "c0")]
times = {(b, f): [] for b in a.bins for f, _ in cases}
for r in range(a.rounds):
    order = a.bins[r % len(a.bins):] + a.bins[:r % len(a.bins)]  # rotated round by round
    for b in order:
        for f, key in cases:
            with open(os.devnull, "wb") as null:
                t = time.perf_counter()
                rc = subprocess.run([b, "extract", key, "-j", "2", os.path.join(a.dir, f)], stdout=null).returncode
                times[(b, f)].append(time.perf_counter() - t)
            if rc:
                raise SystemExit("%s extract %s: exit %d" % (b, f, rc))
for f, _ in cases:
    for b in a.bins:
        v = times[(b, f)]
        print("%-14s %-40s median %.3f s  (%.3f ... %.3f)" % (f, b, statistics.median(v), min(v), max(v)))
