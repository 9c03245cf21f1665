"""npzstream.ray, npzstream.dask and npzstream.refs against a real object store: moto's S3 server
(started here, on 127.0.0.1), pyarrow's and s3fs's S3 filesystems pointed at it, a Ray local
cluster (two CPUs) and a Dask LocalCluster (two worker processes); and the Dask recipe
(examples/python/dask_scan.py, a user of npzstream.dask).  Run by tests/run_all.py (pytest,
make test-all) in .venv-engines (make engines-env).

The bucket holds the archives of tests/engines/files.py: good ones (stored, deflated, written to
a pipe) whose arrays must come back exactly as np.load gives them, and bad ones (a pickle-bearing
member, a truncated archive, a policy-breaking one, a wrong CRC-32 in the last member) each of
which must be raised (or skipped and recorded) with its URL, code and rule, no array of it handed
out."""
import dataclasses
import functools
import http.server
import json
import os
import shutil
import sys
import threading

import numpy as np
import pytest

import npzstream
import npzstream.dask
import npzstream.ray

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "examples", "python"))
import files  # noqa: E402
import s3server  # noqa: E402

BUCKET = "engines"
os.environ.update(AWS_ACCESS_KEY_ID=s3server.KEY, AWS_SECRET_ACCESS_KEY=s3server.SECRET, AWS_DEFAULT_REGION=s3server.REGION,
                  NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost", RAY_USAGE_STATS_ENABLED="0")


# ---- the store, the clusters ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("corpus"))
    good = files.good(os.path.join(d, "good"))
    bad = files.bad(os.path.join(d, "bad"))
    mixed = os.path.join(d, "mixed")
    os.makedirs(mixed)
    for p in list(good) + list(bad):
        shutil.copy(p, mixed)
    return {"dir": d, "good": good, "bad": bad, "mixed": mixed}


@pytest.fixture(scope="module")
def s3(corpus):
    """moto's S3 server on 127.0.0.1 (a process of its own), the corpus uploaded: good/, bad/
    and mixed/ (both)."""
    srv = s3server.S3Server()
    try:
        srv.upload(BUCKET, corpus["dir"], ("good", "bad", "mixed"))
        yield srv
    finally:
        srv.stop()


def s3fs_fs(s3):
    import s3fs
    return s3fs.S3FileSystem(**s3.storage_options())


def url(sub, path):
    return "s3://%s/%s/%s" % (BUCKET, sub, os.path.basename(path))


@pytest.fixture(scope="module")
def ray_local():
    import ray
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    ctx = ray.data.DataContext.get_current()
    ctx.execution_options.preserve_order = True  # each file's rows in order, files in order
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def client():
    from dask.distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


def expected(good, key):
    return np.concatenate([arrs[key] for _, (_, arrs) in sorted(good.items())])


def rows_by_file(ds):
    """{path: {column: stacked rows}} of a dataset read with include_paths=True."""
    out = {}
    for batch in ds.iter_batches(batch_size=None, batch_format="numpy"):
        for i, p in enumerate(batch["path"]):
            out.setdefault(p, {k: [] for k in batch if k != "path"})
            for k in batch:
                if k != "path":
                    out[p][k].append(batch[k][i])
    return {p: {k: np.stack(v) for k, v in cols.items()} for p, cols in out.items()}


def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


# ---- Ray --------------------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["local", "s3-pyarrow", "s3-fsspec"])
def test_ray_gives_np_load_arrays(ray_local, corpus, s3, where):
    good = corpus["good"]
    if where == "local":
        paths, fs, name = sorted(good), None, lambda p: p
    else:  # Ray's path column names an object bucket/key, as read_numpy's does
        paths = [url("good", p) for p in sorted(good)]
        fs = s3.arrow() if where == "s3-pyarrow" else s3fs_fs(s3)
        name = lambda p: url("good", p)[len("s3://"):]  # noqa: E731
    ds = npzstream.ray.read_npz(paths, filesystem=fs, policy=files.POLICY, include_paths=True)
    got = rows_by_file(ds)
    assert sorted(got) == sorted(name(p) for p in good), sorted(got)
    for p, (_, arrs) in good.items():
        for k, a in arrs.items():
            assert same(got[name(p)][k], a), (where, p, k)
    assert ds.count() == sum(len(a["labels"]) for _, a in good.values())


def test_ray_reads_a_npy_as_read_numpy_does(ray_local, corpus):
    p, a = files.npy(corpus["dir"])
    ds = npzstream.ray.read_npz(p)
    assert ds.columns() == ["data"]
    assert same(np.stack([r["data"] for r in ds.take_all()]), a)
    assert same(np.stack([r["data"] for r in npzstream.ray.read_npz(p).take_all()]),
                np.stack([r["data"] for r in ray_local.data.read_numpy(p).take_all()]))


def test_ray_raises_the_first_rejected_file(ray_local, corpus, s3):
    with pytest.raises(npzstream.RejectedError) as e:
        npzstream.ray.read_npz("s3://%s/mixed/" % BUCKET, filesystem=s3.arrow(), policy=files.POLICY).materialize()
    err = e.value
    by_url = {url("mixed", p): v for p, v in corpus["bad"].items()}
    assert err.path in by_url, err.path
    code, rule = by_url[err.path]
    assert err.code == code and err.rule.startswith(rule), str(err)
    assert err.path in str(err) and err.rule in str(err) and err.code in str(err)


@pytest.mark.parametrize("where", ["s3-pyarrow", "local"])
def test_ray_skips_and_records_rejected_files(ray_local, corpus, s3, tmp_path, where):
    rejects = str(tmp_path / "rejects.jsonl")
    if where == "local":
        src, fs, name = corpus["mixed"], None, lambda p: os.path.join(corpus["mixed"], os.path.basename(p))
        column = name
    else:  # the rejections name the object's URL; Ray's path column its bucket/key
        src, fs, name = "s3://%s/mixed/" % BUCKET, s3.arrow(), lambda p: url("mixed", p)
        column = lambda p: url("mixed", p)[len("s3://"):]  # noqa: E731
    ds = npzstream.ray.read_npz(src, filesystem=fs, policy=files.POLICY, on_error="skip", rejects=rejects,
                                include_paths=True)
    got = rows_by_file(ds)
    # only the good files' rows, every one of them, exactly; nothing of a rejected file
    assert sorted(got) == sorted(column(p) for p in corpus["good"])
    for p, (_, arrs) in corpus["good"].items():
        assert all(same(got[column(p)][k], a) for k, a in arrs.items())
    with open(rejects) as f:
        recs = [json.loads(line) for line in f]
    assert sorted(r["path"] for r in recs) == sorted(name(p) for p in corpus["bad"])
    for r in recs:
        code, rule = next(v for p, v in corpus["bad"].items() if name(p) == r["path"])
        assert r["code"] == code and r["rule"].startswith(rule) and r["message"], r


def test_ray_rejects_to_a_callable(ray_local, corpus, tmp_path):
    out = str(tmp_path / "called.jsonl")

    def note(rec, out=out):  # runs in the recorder actor, on this node
        with open(out, "a") as f:
            f.write(json.dumps(rec) + "\n")
    ds = npzstream.ray.read_npz(corpus["mixed"], policy=files.POLICY, on_error="skip", rejects=note)
    assert ds.count() == sum(len(a["labels"]) for _, a in corpus["good"].values())
    with open(out) as f:
        assert sorted(json.loads(line)["path"] for line in f) == sorted(os.path.join(corpus["mixed"], os.path.basename(p))
                                                                        for p in corpus["bad"])


def test_ray_rows_and_their_errors(ray_local, corpus, tmp_path):
    d = tmp_path / "rows"
    d.mkdir()
    odd = str(d / "odd.npz")
    np.savez(odd, a=np.arange(3), b=np.arange(4))  # first axes differ
    scalar = str(d / "scalar.npz")
    np.savez(scalar, s=np.float64(2.0))
    with pytest.raises(npzstream.ray.RowsError) as e:
        npzstream.ray.read_npz(odd).materialize()
    assert e.value.path == odd and "first axes differ" in str(e.value)
    rejects = str(tmp_path / "rows.jsonl")
    assert npzstream.ray.read_npz(str(d), on_error="skip", rejects=rejects).count() == 0
    with open(rejects) as f:
        recs = [json.loads(line) for line in f]
    assert sorted((r["path"], r["code"]) for r in recs) == [(odd, "rows"), (scalar, "rows")]
    # rows="file": one row a file, each key's whole array in its cell
    one = npzstream.ray.read_npz(odd, rows="file").take_all()
    assert len(one) == 1 and same(one[0]["a"], np.arange(3)) and same(one[0]["b"], np.arange(4))
    good = sorted(corpus["good"])[:2]
    rows = npzstream.ray.read_npz(good, rows="file").take_all()
    assert len(rows) == 2 and all(same(r["labels"], corpus["good"][p][1]["labels"]) for r, p in zip(rows, good))


def test_ray_limits_and_arguments(ray_local, corpus, tmp_path):
    p = sorted(corpus["good"])[0]
    with pytest.raises(npzstream.RejectedError) as e:
        npzstream.ray.read_npz(p, max_bytes=64).materialize()
    assert e.value.rule == "LIMIT.max_bytes" and e.value.path == p
    with pytest.raises(TypeError):
        npzstream.ray.read_npz(p, no_such_limit=1)
    with pytest.raises(npzstream.PolicyError):
        npzstream.ray.read_npz(p, policy={"members": 3})
    with pytest.raises(ValueError):
        npzstream.ray.read_npz(p, on_error="ignore")
    with pytest.raises(ValueError):
        npzstream.ray.read_npz(p, rejects="x.jsonl")  # rejects go with on_error="skip"
    bare = str(tmp_path / "no-extension")
    shutil.copy(p, bare)
    with pytest.raises(ValueError, match="extensions"):  # as read_numpy: the extensions are npz and npy
        npzstream.ray.read_npz(bare)
    assert npzstream.ray.read_npz(bare, file_extensions=None).count() == len(corpus["good"][p][1]["labels"])


# ---- Dask -------------------------------------------------------------------------------------

def test_dask_arrays_are_np_load_arrays(client, corpus, s3):
    so = s3.storage_options()
    images = npzstream.dask.read_npz("s3://%s/good/*.npz" % BUCKET, "images", storage_options=so, policy=files.POLICY)
    ns = tuple(len(arrs["labels"]) for _, (_, arrs) in sorted(corpus["good"].items()))
    assert images.chunks == (ns, (4,), (3,)) and images.dtype == np.float32
    assert same(client.compute(images).result(), expected(corpus["good"], "images"))
    both = npzstream.dask.read_npz("s3://%s/good/*.npz" % BUCKET, storage_options=so)
    assert list(both) == ["images", "labels"]
    got = client.compute(list(both.values()), sync=True)
    assert same(got[0], expected(corpus["good"], "images")) and same(got[1], expected(corpus["good"], "labels"))


def test_dask_stacks_and_reads_npy_files(corpus, tmp_path):
    for i in range(3):
        np.save(str(tmp_path / ("s%d.npy" % i)), np.full((2, 3), i, dtype=">i2"))
    stacked = npzstream.dask.read_npz(str(tmp_path / "s*.npy"), combine="stack")
    assert stacked.shape == (3, 2, 3) and stacked.dtype == np.dtype(">i2")
    assert same(stacked.compute(scheduler="sync"), np.stack([np.full((2, 3), i, ">i2") for i in range(3)]).astype(">i2"))
    flat = npzstream.dask.read_npz(str(tmp_path / "s*.npy"))
    assert flat.shape == (6, 3)
    with pytest.raises(ValueError, match="no keys"):
        npzstream.dask.read_npz(str(tmp_path / "s*.npy"), "x")


def test_dask_plans_read_no_data(corpus, s3):
    so = s3.storage_options()
    plans = npzstream.dask.plan(["s3://%s/good/%s" % (BUCKET, os.path.basename(p)) for p in sorted(corpus["good"])],
                                storage_options=so)
    for pl, p in zip(plans, sorted(corpus["good"])):
        data = files.data_ranges(p)
        assert not [r for r in pl.ranges for d in data if r[0] < d[1] and d[0] < r[1]], (p, pl.ranges, data)
        assert sum(b - a for a, b in pl.ranges) < os.path.getsize(p)


def test_dask_rejected_files_raise_with_url_code_rule(client, corpus, s3):
    so = s3.storage_options()
    for p, (code, rule) in corpus["bad"].items():
        u = url("bad", p)
        with pytest.raises(npzstream.RejectedError) as e:  # at graph time, or when the chunk is computed
            client.compute(npzstream.dask.read_npz(u, "images", storage_options=so, policy=files.POLICY)).result()
        assert (e.value.path, e.value.code) == (u, code) and e.value.rule.startswith(rule), str(e.value)
    # every member planned: the pickle-bearing header is refused while the graph is made, by the library
    pickle_url = url("bad", next(p for p, v in corpus["bad"].items() if v[0] == "pickle"))
    with pytest.raises(npzstream.RejectedError) as e:
        npzstream.dask.read_npz(pickle_url, storage_options=so)
    assert (e.value.code, e.value.rule) == ("pickle", "PICKLE.object")


def test_dask_chunk_changed_since_the_plan(corpus, s3):
    c = s3.client()
    key = "changing/x.npz"
    c.put_object(Bucket=BUCKET, Key=key, Body=files.savez_bytes("stored", files.arrays(4, 7)))
    u = "s3://%s/%s" % (BUCKET, key)
    arr = npzstream.dask.read_npz(u, "labels", storage_options=s3.storage_options())
    c.put_object(Bucket=BUCKET, Key=key, Body=files.savez_bytes("stored", files.arrays(5, 7)))
    with pytest.raises(npzstream.RejectedError) as e:
        arr.compute(scheduler="sync")
    assert (e.value.path, e.value.code, e.value.rule) == (u, "changed", "PLAN.changed")


def test_dask_reports_are_the_serial_scans(client, corpus, s3):
    so = s3.storage_options()
    bag = npzstream.dask.reports("s3://%s/mixed/*" % BUCKET, storage_options=so, policy=files.POLICY)
    got = client.compute(bag).result()
    serial = list(npzstream.scan(sorted(os.path.join(corpus["mixed"], n) for n in os.listdir(corpus["mixed"])),
                                 workers=0, policy=files.POLICY))
    assert [dataclasses.replace(r, path=None) for r in got] == [dataclasses.replace(r, path=None) for r in serial]
    assert sum(bool(r) for r in got) == len(corpus["good"]) and sum(not r for r in got) == len(corpus["bad"])


# ---- references -------------------------------------------------------------------------------

def open_refs(refs, s3=None):
    """zarr over fsspec's reference filesystem: local files, or objects of the S3 endpoint (an
    asynchronous filesystem, as zarr's FsspecStore wants)."""
    import fsspec
    import zarr
    if s3 is None:
        return zarr.open(fsspec.filesystem("reference", fo=refs).get_mapper(""), mode="r", zarr_format=2)
    fs = fsspec.filesystem("reference", fo=refs, remote_protocol="s3", asynchronous=True,
                           remote_options=dict(s3.storage_options(), asynchronous=True))
    return zarr.open(zarr.storage.FsspecStore(fs, read_only=True, path=""), mode="r", zarr_format=2)


def test_references_round_trip_through_zarr(corpus, s3):
    so = s3.storage_options()
    for p, (how, arrs) in sorted(corpus["good"].items()):
        u = url("good", p)
        refs = npzstream.refs(u, storage_options=so)
        assert refs == npzstream.refs(p, url=u)  # the same set, from the store or from the disk
        group = open_refs(refs, s3)
        listed = {m["key"]: m for m in json.loads(refs["refs"][".zattrs"])["npzstream"]["members"]}
        for k, a in arrs.items():
            if how == "deflated":
                assert not listed[k]["referenced"] and listed[k]["reason"] == "deflated" and k not in group
            else:
                assert same(group[k][...], a), (p, k)


def test_references_of_the_dtype_zoo(corpus, tmp_path):
    p, reasons = files.zoo(str(tmp_path))
    group = open_refs(npzstream.refs(p))
    loaded = np.load(p)
    for k, why in reasons.items():
        if why is None:
            assert same(group[k][...], loaded[k]), k
        else:
            assert k not in group, k
    one, a = files.npy(str(tmp_path))
    assert same(open_refs(npzstream.refs(one))[...], a)  # a .npy is the root array


def test_kerchunks_own_tools_read_the_references(corpus):
    import kerchunk.utils
    import zarr
    for p, (how, arrs) in sorted(corpus["good"].items()):
        if how == "deflated":
            continue
        refs = npzstream.refs(p)
        group = zarr.open(kerchunk.utils.refs_as_store(refs), mode="r", zarr_format=2)
        assert all(same(group[k][...], a) for k, a in arrs.items()), p
        # one chunk, no codec: kerchunk can cut it into a chunk a row
        n = len(arrs["images"])
        split = zarr.open(kerchunk.utils.refs_as_store(kerchunk.utils.subchunk(refs, "images", n)), mode="r",
                          zarr_format=2)
        assert split["images"].chunks == (1, 4, 3) and same(split["images"][...], arrs["images"])


def test_no_references_for_a_rejected_archive(corpus, s3):
    so = s3.storage_options()
    for p, (code, rule) in corpus["bad"].items():
        with pytest.raises(npzstream.RejectedError) as e:
            npzstream.refs(url("bad", p), storage_options=so, policy=files.POLICY)
        assert (e.value.path, e.value.code) == (url("bad", p), code) and e.value.rule.startswith(rule)


# ---- the Dask recipe (examples/python/dask_scan.py) --------------------------------------------

def scan_files(d):
    out = []
    rng = np.random.default_rng(3)
    for i in range(12):
        arrays = {"w": rng.random((20 + i, 7), dtype=np.float32), "n": np.arange(i)}
        data = files.savez_bytes("deflated" if i % 2 else "stored", arrays)
        if i % 4 == 3:
            data = data[:-5]                          # truncated
        elif i % 6 == 5:
            data = data[:100] + b"\xff" + data[101:]  # broken in member 0
        p = os.path.join(d, "f%02d.npz" % i)
        with open(p, "wb") as f:
            f.write(data)
        out.append(p)
    out.append(os.path.join(d, "missing.npz"))
    return out


def test_recipe_local_paths_same_as_serial(client, tmp_path):
    import dask_scan
    paths = scan_files(str(tmp_path))
    got = list(dask_scan.dask_scan(client, paths))
    assert [r.path for r in got] == paths
    assert got == list(npzstream.scan(paths, workers=0))  # every field of every report
    assert sum(bool(r) for r in got) >= 4 and sum(not r for r in got) >= 4
    assert got[-1].error.code == "io"
    pol = {"members": {"w": {"dtype": ["<f4"], "shape": ["*", 7]}}, "allow_other_members": False}
    assert list(dask_scan.dask_scan(client, paths, policy=pol)) == list(npzstream.scan(paths, workers=0, policy=pol))
    with pytest.raises(npzstream.PolicyError):
        list(dask_scan.dask_scan(client, paths, policy={"members": 3}))


def test_recipe_over_fsspec_http_same_as_serial(client, tmp_path):
    import dask_scan
    paths = scan_files(str(tmp_path))[:-1]
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
        assert [dataclasses.replace(r, path=None) for r in got] == [dataclasses.replace(r, path=None) for r in serial]
        missing = list(dask_scan.dask_scan(client, [base + "missing.npz"]))
        assert not missing[0] and missing[0].error.code == "io"
    finally:
        srv.shutdown()
        srv.server_close()
