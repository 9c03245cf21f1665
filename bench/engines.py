#!/usr/bin/env python3
"""Issue 43's figures: npzstream.ray.read_npz against Ray Data's read_numpy on the same arrays,
and npzstream.dask.read_npz planning a graph of many files from their headers alone.

    make engines-env
    nice -n 10 .venv-engines/bin/python bench/engines.py                  # or: make bench-engines
    .venv-engines/bin/python bench/engines.py --files 64 --mib 4 --rounds 5 --plan-files 10000

1. Ray: FILES arrays of MIB MiB of float32 each, written twice: as stored .npz (np.savez, the
   member named "data") and as .npy (np.save).  ray.init(num_cpus=2); each round materializes
   read_numpy over the .npy files and npzstream.ray.read_npz over the .npz files (alternately
   first, after one round of each on two files that is not counted), from the local disk and
   from a bucket of moto's S3 server on 127.0.0.1 (pyarrow's S3 filesystem).  The medians are
   compared: npzstream validates every byte (CRC-32s, the END verdict) and must not be slower.
2. Dask: PLAN_FILES stored .npz files (two members each), planned by npzstream.dask.read_npz;
   the byte ranges the planner read (npzstream.dask.plan) are checked against every stored
   array's data range (tests/engines/files.py's data_ranges, from zipfile): none may overlap.

The machine's load average is printed with the figures (a shared machine gives noisy numbers).
--json FILE writes them."""
import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "engines"))
import files  # noqa: E402
import s3server  # noqa: E402

BUCKET = "bench"


def load():
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def write_arrays(d, n, mib):
    npz, npy = [], []
    rng = np.random.default_rng(0)
    for i in range(n):
        a = rng.random((mib << 18,), dtype=np.float32).reshape(-1, 256)  # MIB MiB, rows of 256
        npz.append(os.path.join(d, "npz", "a%04d.npz" % i))
        npy.append(os.path.join(d, "npy", "a%04d.npy" % i))
        np.savez(npz[-1], data=a)
        np.save(npy[-1], a)
    return npz, npy


def ray_rounds(ray, paths_npz, paths_npy, fs, rounds):
    import npzstream.ray
    times = {"read_numpy (.npy)": [], "npzstream.ray.read_npz (.npz)": []}
    rows = {}
    # a round not counted: the workers started and the modules imported for both readers
    ray.data.read_numpy(paths_npy[:2], filesystem=fs).materialize()
    npzstream.ray.read_npz(paths_npz[:2], filesystem=fs).materialize()
    for r in range(rounds):
        order = list(times) if r % 2 == 0 else list(reversed(list(times)))
        for what in order:
            t0 = time.perf_counter()
            if what.startswith("read_numpy"):
                ds = ray.data.read_numpy(paths_npy, filesystem=fs).materialize()
            else:
                ds = npzstream.ray.read_npz(paths_npz, filesystem=fs).materialize()
            times[what].append(time.perf_counter() - t0)
            rows[what] = ds.count()
            del ds
    if len(set(rows.values())) != 1:
        raise SystemExit("the two readers gave %r rows" % rows)
    return {k: statistics.median(v) for k, v in times.items()}, times


def bench_ray(a, d, out):
    import ray
    npz, npy = write_arrays(d, a.files, a.mib)
    total = sum(os.path.getsize(p) for p in npy)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    try:
        places = [("local disk", npz, npy, None)]
        server = None
        if not a.skip_s3:
            server = s3server.S3Server()
            server.upload(BUCKET, d, ("npz", "npy"))
            places.append(("S3 (moto, 127.0.0.1)", ["s3://%s/npz/%s" % (BUCKET, os.path.basename(p)) for p in npz],
                           ["s3://%s/npy/%s" % (BUCKET, os.path.basename(p)) for p in npy], server.arrow()))
        try:
            for where, pz, py, fs in places:
                med, raw = ray_rounds(ray, pz, py, fs, a.rounds)
                base = med["read_numpy (.npy)"]
                print("Ray, %s: %d files, %.0f MiB, %d rounds (%s)" % (where, a.files, total / 2**20, a.rounds, load()))
                for k, v in med.items():
                    print("  %-32s %7.3f s  %7.1f MB/s  %.2fx read_numpy's time" % (k, v, total / v / 1e6, v / base))
                out["ray"][where] = {"median_s": med, "runs_s": raw, "bytes": total}
        finally:
            if server is not None:
                server.stop()
    finally:
        ray.shutdown()


def bench_plan(a, d, out):
    import npzstream.dask
    pd = os.path.join(d, "plan")
    os.makedirs(pd)
    rng = np.random.default_rng(1)
    t0 = time.perf_counter()
    for i in range(a.plan_files):
        n = 8 + i % 8
        np.savez(os.path.join(pd, "f%05d.npz" % i), x=rng.random((n, 64), dtype=np.float32), y=np.arange(n))
    written = time.perf_counter() - t0
    pattern = os.path.join(pd, "*.npz")
    total = sum(os.path.getsize(os.path.join(pd, f)) for f in os.listdir(pd))
    t0 = time.perf_counter()
    x = npzstream.dask.read_npz(pattern, "x")
    graph_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    plans = npzstream.dask.plan(pattern)
    plan_s = time.perf_counter() - t0
    read = sum(end - start for pl in plans for start, end in pl.ranges)
    overlaps = 0
    for pl in plans:
        data = files.data_ranges(pl.path)
        overlaps += sum(1 for r in pl.ranges for dr in data if r[0] < dr[1] and dr[0] < r[1])
    print("Dask, a graph of %d files (written in %.1f s; %s):" % (a.plan_files, written, load()))
    print("  read_npz(pattern, 'x'): %.2f s (%d chunks, shape %s); plan() of both keys: %.2f s"
          % (graph_s, x.numblocks[0], x.shape, plan_s))
    print("  bytes read by the planner: %d of %d (%.1f%%), %.0f a file; ranges overlapping array data: %d"
          % (read, total, 100.0 * read / total, read / a.plan_files, overlaps))
    out["dask_plan"] = {"files": a.plan_files, "graph_s": graph_s, "plan_s": plan_s, "bytes_read": read,
                        "bytes_total": total, "data_overlaps": overlaps}
    if overlaps:
        raise SystemExit("the planner read array data")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=64)
    ap.add_argument("--mib", type=int, default=4, help="MiB of each array")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--plan-files", type=int, default=10000)
    ap.add_argument("--skip-s3", action="store_true")
    ap.add_argument("--skip-ray", action="store_true")
    ap.add_argument("--json")
    a = ap.parse_args()
    out = {"ray": {}, "load_before": os.getloadavg(), "nice": os.nice(0)}
    d = tempfile.mkdtemp(prefix="npzs-bench-engines-")
    try:
        os.makedirs(os.path.join(d, "npz"))
        os.makedirs(os.path.join(d, "npy"))
        if not a.skip_ray:
            bench_ray(a, d, out)
        if a.plan_files:
            bench_plan(a, d, out)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    out["load_after"] = os.getloadavg()
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
