"""examples/python/dask_scan.py on a dask.distributed LocalCluster (two worker processes): the
same reports as npzstream.scan's serial run, in the input's order, over local paths and over an
fsspec filesystem (HTTP, served from a local directory: what an object store looks like to
fsspec)."""
import dataclasses
import functools
import http.server
import io
import os
import sys
import threading

import numpy as np
import pytest

import npzstream

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "examples", "python"))
import dask_scan  # noqa: E402


def files(d):
    out = []
    rng = np.random.default_rng(3)
    for i in range(12):
        b = io.BytesIO()
        arrays = {"w": rng.random((20 + i, 7), dtype=np.float32), "n": np.arange(i)}
        (np.savez_compressed if i % 2 else np.savez)(b, **arrays)
        data = b.getvalue()
        if i % 4 == 3:
            data = data[:-5]                       # truncated
        elif i % 6 == 5:
            data = data[:100] + b"\xff" + data[101:]  # broken in member 0
        p = os.path.join(d, "f%02d.npz" % i)
        with open(p, "wb") as f:
            f.write(data)
        out.append(p)
    out.append(os.path.join(d, "missing.npz"))
    return out


@pytest.fixture(scope="module")
def client():
    from dask.distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


def strip(r):
    return dataclasses.replace(r, path=None)


def test_local_paths_same_as_serial(client, tmp_path):
    paths = files(str(tmp_path))
    serial = list(npzstream.scan(paths, workers=0))
    got = list(dask_scan.dask_scan(client, paths))
    assert [r.path for r in got] == paths
    assert got == serial  # every field of every report
    assert len(client.scheduler_info()["workers"]) == 2
    assert sum(bool(r) for r in got) >= 4 and sum(not r for r in got) >= 4
    assert got[-1].error.code == "io"
    pol = {"members": {"w": {"dtype": ["<f4"], "shape": ["*", 7]}}, "allow_other_members": False}
    assert list(dask_scan.dask_scan(client, paths, policy=pol)) == list(npzstream.scan(paths, workers=0, policy=pol))
    with pytest.raises(npzstream.PolicyError):
        list(dask_scan.dask_scan(client, paths, policy={"members": 3}))


def test_fsspec_http_same_as_serial(client, tmp_path):
    paths = files(str(tmp_path))[:-1]
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    handler.log_message = lambda *a: None
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        base = "http://127.0.0.1:%d/" % srv.server_address[1]
        urls = [base + os.path.basename(p) for p in paths]
        got = list(dask_scan.dask_scan(client, urls))
        assert [r.path for r in got] == urls
        serial = list(npzstream.scan(paths, workers=0))
        assert [strip(r) for r in got] == [strip(r) for r in serial]
        missing = list(dask_scan.dask_scan(client, [base + "missing.npz"]))
        assert not missing[0] and missing[0].error.code == "io"
    finally:
        srv.shutdown()
        srv.server_close()


def test_process_pool_scan_same_as_serial(tmp_path):
    paths = files(str(tmp_path))
    assert list(npzstream.scan(paths, workers=2)) == list(npzstream.scan(paths, workers=0))
