#!/usr/bin/env python3
"""Many .npy/.npz files validated on a Dask cluster: npzstream.dask.reports, one Report a file,
in the input's order, over local paths or any fsspec filesystem (s3://, gs://, http://, ...: the
bytes streamed from the store to the workers, nothing downloaded first).

    pip install 'npzstream[dask]' 'dask[distributed]' s3fs     # s3fs for s3://
    python3 examples/python/dask_scan.py --scheduler tcp://scheduler:8786 's3://bucket/uploads/*.npz'
    python3 examples/python/dask_scan.py --local 4 data/*.npz    # a LocalCluster of 4 processes

Prints one JSON line a file ({"path", "ok", "code", "rule", "member", "members"}); the exit status
is 1 when any file was rejected.  In a program:

    from dask.distributed import Client
    client = Client("tcp://scheduler:8786")
    for report in dask_scan(client, ["s3://bucket/a.npz", ...], policy={"allow_blobs": False}):
        ...  # npzstream.Report, report.path set

Every worker needs npzstream installed (and the fsspec backend of the store).  The policy and
the limits are checked here, before anything is sent (PolicyError).  To read the arrays
themselves, validated, as dask arrays: npzstream.dask.read_npz.
"""
import argparse
import json
import sys

import npzstream
import npzstream.dask


def dask_scan(client, paths, *, policy=None, storage_options=None, **limits):
    """Reports of paths (local paths or fsspec URLs of one filesystem; globs expanded), computed
    on the Dask cluster of client, yielded in the input's order, a partition at a time."""
    bag = npzstream.dask.reports(paths, storage_options=storage_options, policy=policy, **limits)
    futures = client.compute(bag.to_delayed())
    try:
        for part in futures:
            yield from part.result()
    finally:
        client.cancel(futures)


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
        for r in dask_scan(client, a.paths, policy=a.policy):
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
