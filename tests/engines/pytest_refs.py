"""npzstream.refs, the header planner of npzstream.dask (npzstream._plan) and the chunk check of
its tasks, and the readers' modules without Ray and Dask: in the package environments (make
python-env), run by tests/run_all.py (pytest; NPZSTREAM_BIN, the command line to compare with: tests/conftest.py
sets it from --bin).
"""
import io
import json
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import npzstream
from npzstream import _plan

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import files  # noqa: E402

BIN = os.environ.get("NPZSTREAM_BIN", os.path.join(os.path.dirname(__file__), "..", "..", "build", "npzstream"))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("engines"))
    good = files.good(d)
    npy, _ = files.npy(d)
    zoo, reasons = files.zoo(d)
    return {"dir": d, "good": good, "npy": npy, "zoo": zoo, "reasons": reasons, "bad": files.bad(d),
            "comment": files.with_comment(d)}


def accepted(c):
    return list(c["good"]) + [c["npy"], c["zoo"], c["comment"]]


def cli_refs(path, *args):
    r = subprocess.run([BIN, "refs"] + list(args) + [path], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_refs_are_the_command_lines(corpus):
    for p in accepted(corpus):
        out = cli_refs(p)
        refs = npzstream.refs(p)
        assert refs == json.loads(out), p
        # the same text, byte for byte (compact JSON, UTF-8 kept)
        assert json.dumps(refs, separators=(",", ":"), ensure_ascii=False) + "\n" == out, p
        assert npzstream.refs(p, url="s3://b/k.npz") == json.loads(cli_refs(p, "--url", "s3://b/k.npz"))


def test_refs_of_the_zoo_give_each_reason(corpus):
    refs = npzstream.refs(corpus["zoo"])["refs"]
    listed = json.loads(refs[".zattrs"])["npzstream"]["members"]
    assert {m["key"]: m.get("reason") for m in listed} == corpus["reasons"]
    loaded = np.load(corpus["zoo"])
    with open(corpus["zoo"], "rb") as f:
        data = f.read()
    for k, why in corpus["reasons"].items():
        if why is not None:
            assert k + "/.zarray" not in refs
            continue
        a = loaded[k]
        z = json.loads(refs[k + "/.zarray"])
        assert (z["dtype"], z["shape"]) == (a.dtype.str, list(a.shape))
        chunk = k + "/" + (".".join("0" for _ in a.shape) or "0")
        if a.nbytes:
            url, off, n = refs[chunk]
            assert data[off:off + n] == a.tobytes(order="F" if z["order"] == "F" else "C")


def test_rejected_files_raise_naming_the_file(corpus):
    for p, (code, rule) in corpus["bad"].items():
        if code == "policy":
            npzstream.refs(p)  # accepted without the policy
            with pytest.raises(npzstream.RejectedError) as e:
                npzstream.refs(p, policy=files.POLICY)
        else:
            with pytest.raises(npzstream.RejectedError) as e:
                npzstream.refs(p)
        err = e.value
        assert err.path == p and err.code == code and err.rule.startswith(rule), str(err)
        assert str(err).startswith(p + ": ")
        again = pickle.loads(pickle.dumps(err))
        assert type(again) is type(err) and again == err and again.path == p


def test_refs_take_the_policy_and_limits(corpus):
    good = list(corpus["good"])
    assert npzstream.refs(good[0], policy=files.POLICY) == npzstream.refs(good[0])
    assert npzstream.refs(good[0], policy=npzstream.Policy.from_dict(files.POLICY)) == npzstream.refs(good[0])
    with pytest.raises(npzstream.PolicyError):
        npzstream.refs(good[0], policy={"members": 3})
    with pytest.raises(TypeError):
        npzstream.refs(good[0], no_such_limit=3)
    with pytest.raises(npzstream.RejectedError) as e:
        npzstream.refs(good[0], max_total_bytes=100)
    assert e.value.rule.startswith("LIMIT.max_total_bytes")
    with pytest.raises(FileNotFoundError):
        npzstream.refs(os.path.join(corpus["dir"], "missing.npz"))


def test_readers_import_without_their_engines():
    import npzstream.dask
    import npzstream.ray
    for mod, engine, extra in ((npzstream.ray, "ray", "npzstream[ray]"), (npzstream.dask, "dask", "npzstream[dask]")):
        try:
            __import__(engine)
            continue  # installed here: tests/engines/pytest_engines.py runs it
        except ImportError:
            pass
        with pytest.raises(ImportError) as e:
            mod.read_npz(["x.npz"])
        assert extra in str(e.value)


# ---- the planner --------------------------------------------------------------------------------

def plan(path, keys=None, **limits):
    with open(path, "rb") as f:
        return _plan.plan_file(path, f, os.path.getsize(path), keys, limits)


def fortran(a):
    return a.ndim > 1 and a.flags.f_contiguous and not a.flags.c_contiguous


def overlaps(ranges, data):
    return [(r, d) for r in ranges for d in data if r[0] < d[1] and d[0] < r[1]]


def test_plans_say_what_np_load_finds_and_read_no_data(corpus):
    for p in accepted(corpus):
        loaded = np.load(p)
        arrays = {None: loaded} if isinstance(loaded, np.ndarray) else {k: loaded[k] for k in loaded.files}
        pl = plan(p)
        assert list(pl.arrays) + list(pl.others) == [k for k in arrays if k in pl.arrays or k in pl.others]
        assert set(pl.arrays) | set(pl.others) == set(arrays), p
        for k, h in pl.arrays.items():
            a = arrays[k]
            assert (h.dtype, h.shape, h.fortran_order) == (a.dtype.str, a.shape, fortran(a)), (p, k)
            assert np.dtype(h.descr) == a.dtype
        assert not overlaps(pl.ranges, files.data_ranges(p)), p


def test_plans_of_deflated_members_read_their_first_bytes_only(tmp_path):
    p = str(tmp_path / "big-deflated.npz")
    with open(p, "wb") as f:
        f.write(files.savez_bytes("deflated", {"x": np.random.default_rng(0).random((400, 300))}))
    size = os.path.getsize(p)
    pl = plan(p)
    assert pl.arrays["x"].shape == (400, 300) and pl.arrays["x"].method == "deflated"
    assert sum(b - a for a, b in pl.ranges) < 2048 < size


def test_plans_of_zip64_end_records_and_one_key(tmp_path):
    p = files.many_members(str(tmp_path))
    pl = plan(p, ["m65540"])
    assert list(pl.arrays) == ["m65540"] and pl.arrays["m65540"].shape == (2,)
    assert not overlaps(pl.ranges, files.data_ranges(p))


@pytest.mark.parametrize("version", [(1, 0), (2, 0), (3, 0)])
def test_plans_of_each_npy_version(tmp_path, version):
    p = str(tmp_path / "v.npy")
    a = np.arange(24, dtype=">i4").reshape(2, 3, 4)
    with open(p, "wb") as f:
        np.lib.format.write_array(f, a, version=version)
    h = plan(p).arrays[None]
    assert (h.dtype, h.shape) == (">i4", (2, 3, 4))
    assert not overlaps(plan(p).ranges, files.data_ranges(p))


def test_plans_of_bad_files_fail(corpus):
    bad = {code: p for p, (code, _) in corpus["bad"].items()}
    with pytest.raises(_plan.PlanError):
        plan(bad["truncated"])
    with pytest.raises(_plan.PlanError, match="PICKLE.object"):  # the library's reading of the header
        plan(bad["pickle"])
    with pytest.raises(KeyError, match="no member 'nope'"):
        plan(list(corpus["good"])[0], ["nope"])
    with pytest.raises(_plan.PlanError):
        plan(list(corpus["good"])[0], max_header_size=10)  # the limits are the library's
    with pytest.raises(_plan.PlanError, match="neither"):
        plan(os.path.abspath(__file__))


def test_chunk_tasks_compare_with_the_plan(corpus, tmp_path):
    import npzstream.dask as nd
    p = str(tmp_path / "x.npz")
    with open(p, "wb") as f:
        f.write(files.savez_bytes("stored", files.arrays(4, 1)))
    pl = plan(p)
    planned = {k: (h.dtype, h.shape) for k, h in pl.arrays.items()}

    class Local:
        open = staticmethod(io.open)
    got = nd._load(p, Local(), planned, None, {})
    assert got["labels"].shape == (4,)
    with open(p, "wb") as f:  # the file changes after the graph was made
        f.write(files.savez_bytes("stored", files.arrays(5, 1)))
    with pytest.raises(npzstream.RejectedError) as e:
        nd._load(p, Local(), planned, None, {})
    assert (e.value.code, e.value.rule, e.value.path) == ("changed", "PLAN.changed", p)
    with open(p, "wb") as f:
        f.write(files.savez_bytes("stored", files.arrays(5, 1))[:-3])
    with pytest.raises(npzstream.RejectedError) as e:
        nd._load(p, Local(), planned, None, {})
    assert e.value.code == "truncated" and e.value.path == p


# ---- mutated archives: the planner against the library ---------------------------------------------

def mutants(seed, n):
    """n archives a byte or a few away from good ones (stored, deflated, written to a pipe)."""
    rng = np.random.default_rng(seed)
    bases = [files.savez_bytes(how, files.arrays(3 + i, i)) for i, how in enumerate(("stored", "deflated", "pipe"))]
    for i in range(n):
        b = bytearray(bases[i % len(bases)])
        for _ in range(int(rng.integers(1, 4))):
            at = int(rng.integers(0, len(b)))
            if rng.random() < 0.2:
                del b[at:at + int(rng.integers(1, 9))]
            else:
                b[at] = int(rng.integers(0, 256))
        yield bytes(b)


def test_plans_of_mutants_agree_with_the_library(tmp_path):
    """Whatever the bytes: the planner raises PlanError (or KeyError) or plans; when the library
    accepts the file, the plan is the library's reading of it (every array, its dtype, shape and
    order) and no range it read holds stored array data."""
    p = str(tmp_path / "m.npz")
    planned = accepted_ = 0
    for data in mutants(43, 1500):
        with open(p, "wb") as f:
            f.write(data)
        try:
            pl = plan(p)
        except (_plan.PlanError, KeyError):
            pl = None
        report = npzstream.validate(p)
        if not report:
            continue
        accepted_ += 1
        assert pl is not None, "the library accepts what the planner cannot read"
        planned += 1
        arrays = {m.key: m for m in report.members if m.kind == "array"}
        assert set(pl.arrays) == set(arrays) and set(pl.others) == {m.key for m in report.members if m.kind != "array"}
        for k, h in pl.arrays.items():
            m = arrays[k]
            assert (h.dtype, h.shape, h.fortran_order, h.method) == (m.dtype, m.shape, m.fortran_order, m.method)
        assert not overlaps(pl.ranges, files.data_ranges(p))
    assert accepted_ >= 20 and planned == accepted_, (accepted_, planned)
