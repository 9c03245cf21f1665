#!/usr/bin/env python3
"""npzstream.scan's check on a Dask cluster: many .npy/.npz files validated on the workers, one
Report a file, in the input's order, over local paths or any fsspec filesystem (s3://, gs://,
http://, ...: the same code, the bytes streamed from the store, nothing downloaded first).

    pip install 'dask[distributed]' fsspec s3fs ./python      # s3fs for s3://
    python3 examples/python/dask_scan.py --scheduler tcp://scheduler:8786 s3://bucket/uploads/*.npz
    python3 examples/python/dask_scan.py --local 4 data/*.npz   # a LocalCluster of 4 processes

Prints one JSON line a file ({"path", "ok", "code", "rule", "member", "members"}); the exit status
is 1 when any file was rejected.  In a program:

    from dask.distributed import Client
    client = Client("tcp://scheduler:8786")
    for report in dask_scan(client, ["s3://bucket/a.npz", ...], policy={"allow_blobs": False}):
        ...  # npzstream.Report, report.path set

Every worker needs npzstream installed (and the fsspec backend of the store).  The policy is
checked here, before anything is sent (PolicyError), and goes to the workers as its JSON text.
"""
import argparse
import json
import sys

import fsspec

import npzstream


def check(path, fs, policy_text, limits):
    """On a worker: one file's Report (npzstream.check_file over the filesystem's open)."""
    return npzstream.check_file(path, policy_text, limits=limits, opener=None if fs is None else fs.open)


def dask_scan(client, paths, *, policy=None, storage_options=None, batch=1000, **limits):
    """Reports of paths (local paths or fsspec URLs of one filesystem), computed on the Dask
    cluster of client, yielded in the input's order.  At most `batch` files are in flight."""
    paths = list(paths)
    text = npzstream._scan._policy_text(policy)
    npzstream._limits._limits(dict(limits))  # a bad limit fails here, not on a worker
    fs = None
    if paths and "://" in paths[0]:
        fs, _ = fsspec.core.url_to_fs(paths[0], **(storage_options or {}))
    for i in range(0, len(paths), batch):
        futures = client.map(check, paths[i:i + batch], fs=fs, policy_text=text, limits=limits, pure=False)
        try:
            for f in futures:
                yield f.result()
        finally:
            client.cancel(futures)


def expand(patterns, storage_options):
    out = []
    for p in patterns:
        if "://" in p:
            fs, _ = fsspec.core.url_to_fs(p, **storage_options)
            proto = p.split("://", 1)[0]
            out += sorted(proto + "://" + x if "://" not in x else x for x in fs.glob(p))
        else:
            import glob
            out += sorted(glob.glob(p)) or [p]
    return out


def main():
    ap = argparse.ArgumentParser()
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--scheduler", help="a Dask scheduler's address, tcp://host:8786")
    g.add_argument("--local", type=int, metavar="N", help="a LocalCluster of N worker processes")
    ap.add_argument("--policy", help="a JSON policy file")
    ap.add_argument("paths", nargs="+")
    a = ap.parse_args()
    from dask.distributed import Client, LocalCluster
    if a.local:
        cluster = LocalCluster(n_workers=a.local, threads_per_worker=1, processes=True)
        client = Client(cluster)
    else:
        client = Client(a.scheduler)
    bad = 0
    try:
        for r in dask_scan(client, expand(a.paths, {}), policy=a.policy):
            e = r.error
            print(json.dumps({"path": r.path, "ok": r.ok, "code": e and e.code, "rule": e and e.rule,
                              "member": e and e.member, "members": len(r.members)}), flush=True)
            bad += not r
    finally:
        client.close()
        if a.local:
            cluster.close()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
