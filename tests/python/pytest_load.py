"""pytest suite of the Python package (python/): run by tests/run_all.py (pytest) in every
environment it set up (make python-env), with the package installed there by pip.

Truth is np.load(f, allow_pickle=False) of the NumPy in the environment."""
import asyncio
import gc
import io
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import tracemalloc
import urllib.error
import urllib.request
import warnings
import weakref
import zipfile
import zlib

import numpy as np
import pytest

import npzstream

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "real"))
sys.path.insert(0, os.path.join(ROOT, "examples", "python"))
import gen  # noqa: E402  (tests/real/gen.py: files written by NumPy, zipfile and Info-ZIP)
sys.path.insert(0, os.path.join(ROOT, "tests"))
from common import npy_bytes, through_socket  # noqa: E402

warnings.simplefilter("ignore")
FLAG_KW = {"--max-header-size": "max_header_size", "--max-members": "max_members",
           "--max-total-bytes": "max_total_bytes", "--max-name-len": "max_name_len",
           "--max-extra-len": "max_extra_len", "--max-memory": "max_memory"}


def kw_of(args):
    kw, i = {}, 0
    while i < len(args):
        a = args[i]
        if a == "--lenient-npy-trailing":
            kw["lenient_npy_trailing"] = True
        elif a == "--lenient-header-newline":
            kw["lenient_header_newline"] = True
        else:
            kw[FLAG_KW[a]] = int(args[i + 1])
            i += 1
        i += 1
    return kw


def truth(data, load_kw):
    """What np.load gives: ("ok", ndarray or {key: ndarray|bytes}) or ("error", exception)."""
    try:
        r = np.load(io.BytesIO(data), allow_pickle=False, **load_kw)
        if isinstance(r, np.ndarray):
            return "ok", r
        with r:
            return "ok", {k: r[k] for k in r.files}
    except Exception as e:  # noqa: BLE001 -- any failure of NumPy's is a rejection
        return "error", e


def same_array(a, b):
    """Values, dtype, shape and memory order, byte for byte."""
    assert isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    assert a.dtype.descr == b.dtype.descr
    assert a.shape == b.shape
    assert a.flags.c_contiguous == b.flags.c_contiguous and a.flags.f_contiguous == b.flags.f_contiguous
    assert value_bytes(a) == value_bytes(b)


def value_bytes(a):
    """The bytes of the values: a structured array field by field (np.load assigns the fields of
    a struct one by one into an uninitialised array, so its padding bytes are whatever the
    allocator returned; npzstream's are the file's)."""
    if a.dtype.names:
        return b"".join(value_bytes(a[n]) for n in a.dtype.names)  # a subarray field: its elements
    return a.tobytes(order="A")


def same_result(got, ref):
    if isinstance(ref, np.ndarray):
        same_array(got, ref)
        return
    assert isinstance(got, dict)
    assert list(got) == list(ref)  # the same keys, in the same order
    for k in ref:
        if isinstance(ref[k], np.ndarray):
            same_array(got[k], ref[k])
        else:
            assert isinstance(got[k], bytes) and got[k] == ref[k]


# ---- every real and generated file -----------------------------------------------------------

@pytest.fixture(scope="session")
def real_files():
    d = tempfile.mkdtemp(prefix="npzs-py-")
    cases = gen.generate(d, quick=True)
    files = [(os.path.join(d, c["file"]), c) for c in cases]
    peers = os.path.join(ROOT, "corpus", "peers")
    for base, _, names in os.walk(peers):
        for n in sorted(names):
            if n.endswith((".npy", ".npz")):
                files.append((os.path.join(base, n), {"file": os.path.relpath(os.path.join(base, n), ROOT),
                                                      "args": [], "load": {}}))
    return files


def test_real_files_load_as_numpy_does(real_files):
    both = rejected_both = strict = 0
    for path, case in real_files:
        data = open(path, "rb").read()
        kw = kw_of(case.get("args", []))
        state, ref = truth(data, case.get("load", {}))
        try:
            got = npzstream.load(data, max_bytes=1 << 40, **kw)
        except npzstream.RejectedError as e:
            if state == "ok":  # NumPy loads it: only a strict rule may refuse it
                assert e.rule and (e.rule.startswith("S-") or e.rule.startswith("LIMIT.")), (case["file"], e)
                strict += 1
            else:
                rejected_both += 1
            continue
        assert state == "ok", "%s: npzstream loads what np.load refuses (%r)" % (case["file"], ref)
        same_result(got, ref)
        both += 1
    assert both >= 50 and rejected_both >= 3, (both, rejected_both, strict)


def test_every_split_gives_the_same_arrays(real_files):
    rng = random.Random(5)
    small = [(p, c) for p, c in real_files if os.path.getsize(p) < 200_000][:60]
    for path, case in small:
        data = open(path, "rb").read()
        kw = kw_of(case.get("args", []))
        try:
            whole = npzstream.load(data, **kw)
        except npzstream.RejectedError as e:
            for n in (1, 7, 4096):
                with pytest.raises(npzstream.RejectedError) as e2:
                    npzstream.load([data[i:i + n] for i in range(0, len(data), n)], **kw)
                assert (e2.value.code, e2.value.offset, e2.value.rule) == (e.code, e.offset, e.rule)
            continue
        for n in (1, 7, 4096, rng.randrange(1, 100)):
            same_result(npzstream.load((data[i:i + n] for i in range(0, len(data), n)), **kw), whole)


# ---- every kind of source -----------------------------------------------------------------------

def sample():
    b = io.BytesIO()
    dt = np.dtype([("a", "<i4"), (("title", "b"), [("c", "<f8", (2,)), ("d", "S3")]), ("e", "<u2", (2, 3))])
    x = np.zeros(5, dt)
    x["a"] = np.arange(5)
    np.savez_compressed(b, w=np.arange(300000, dtype="<f4").reshape(600, 500), f=np.asfortranarray(np.eye(7)),
                        s=x, z=np.zeros((0, 3)), u=np.array(["a", "bcd"]), bf=np.zeros(4, "V2"), n=np.float64(3.5))
    return b.getvalue()


SAMPLE = sample()
REF = truth(SAMPLE, {})[1]


def test_bytes_bytearray_memoryview_path():
    same_result(npzstream.load(SAMPLE), REF)
    same_result(npzstream.load(bytearray(SAMPLE)), REF)
    same_result(npzstream.load(memoryview(SAMPLE)), REF)
    with tempfile.NamedTemporaryFile(suffix=".npz") as f:
        f.write(SAMPLE)
        f.flush()
        same_result(npzstream.load(f.name), REF)
        from pathlib import Path
        same_result(npzstream.load(Path(f.name)), REF)
        with open(f.name, "rb") as fh:
            same_result(npzstream.load(fh), REF)
        with open(f.name, "rb", buffering=0) as fh:
            same_result(npzstream.load(fh), REF)


class ReadOnly:
    """A file object with read() only (no readinto, no seek)."""
    def __init__(self, data, n):
        self.data, self.n, self.pos = data, n, 0

    def read(self, k):
        k = min(k, self.n)
        b = self.data[self.pos:self.pos + k]
        self.pos += len(b)
        return b


def test_read_only_file_and_iterables():
    same_result(npzstream.load(ReadOnly(SAMPLE, 1000)), REF)
    same_result(npzstream.load(io.BytesIO(SAMPLE)), REF)
    same_result(npzstream.load(iter([SAMPLE[:10], b"", SAMPLE[10:]])), REF)
    same_result(npzstream.load([SAMPLE[i:i + 4096] for i in range(0, len(SAMPLE), 4096)]), REF)


def test_pipe_and_subprocess():
    r, w = os.pipe()

    def writer():
        with os.fdopen(w, "wb") as f:
            for i in range(0, len(SAMPLE), 3000):
                f.write(SAMPLE[i:i + 3000])
    t = threading.Thread(target=writer)
    t.start()
    with os.fdopen(r, "rb", buffering=0) as f:
        same_result(npzstream.load(f), REF)
    t.join()
    p = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    threading.Thread(target=lambda: (p.stdin.write(SAMPLE), p.stdin.close())).start()
    same_result(npzstream.load(p.stdout), REF)
    p.wait()


def test_socket_pair():
    same_result(through_socket(SAMPLE, npzstream.load), REF)
    same_result(through_socket(SAMPLE, lambda b: npzstream.load(b.makefile("rb"))), REF)  # and as a file object


def test_async_sources():
    async def chunks():
        for i in range(0, len(SAMPLE), 5000):
            await asyncio.sleep(0)
            yield SAMPLE[i:i + 5000]

    class Reader:  # aiohttp's StreamReader shape: async read(n)
        def __init__(self):
            self.pos = 0

        async def read(self, n):
            b = SAMPLE[self.pos:self.pos + min(n, 70000)]
            self.pos += len(b)
            return b

    async def main():
        same_result(await npzstream.aload(chunks()), REF)
        same_result(await npzstream.aload(Reader()), REF)
        big = [SAMPLE]  # one chunk large enough to be parsed in a worker thread
        same_result(await npzstream.aload(big), REF)
        rep = await npzstream.avalidate(chunks())
        assert rep.ok and [m.key for m in rep.members] == list(REF)
        with pytest.raises(npzstream.RejectedError):
            async def bad():
                yield SAMPLE[:-5]
            await npzstream.aload(bad())
    asyncio.run(main())


def test_loader_feed_finish_and_provisional_nothing():
    ld = npzstream.Loader()
    for i in range(0, len(SAMPLE), 777):
        ld.feed(SAMPLE[i:i + 777])
    same_result(ld.finish(), REF)
    assert ld.consumed == len(SAMPLE)
    ld = npzstream.Loader()
    ld.feed(SAMPLE[:-1])
    with pytest.raises(npzstream.RejectedError) as e:
        ld.finish()  # nothing is handed out without the verdict
    assert e.value.code == "truncated" and e.value.offset == len(SAMPLE) - 1


# ---- rejections ---------------------------------------------------------------------------------

def test_object_arrays_are_refused():
    data = npy_bytes(np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    with pytest.raises(npzstream.RejectedError) as e:
        npzstream.load(data)
    assert e.value.code == "pickle" and e.value.rule
    b = io.BytesIO()
    np.savez(b, ok=np.arange(3), bad=np.array([1, "x"], dtype=object))
    with pytest.raises(npzstream.RejectedError) as e:
        npzstream.load(b.getvalue())
    assert e.value.code == "pickle" and e.value.member == 1 and e.value.name == b"bad.npy"


def test_truncation_at_every_length():
    data = npy_bytes(np.arange(6, dtype="<i2"))
    for n in range(len(data)):
        with pytest.raises(npzstream.RejectedError) as e:
            npzstream.load(data[:n])
        assert e.value.code == "truncated" and e.value.offset == n, n
    b = io.BytesIO()
    np.savez_compressed(b, a=np.arange(50))
    z = b.getvalue()
    for n in range(0, len(z), 17):
        with pytest.raises(npzstream.RejectedError) as e:
            npzstream.load(z[:n])
        assert e.value.code == "truncated" and e.value.offset == n


def test_corrupt_crc_and_trailing_bytes():
    b = io.BytesIO()
    np.savez(b, a=np.arange(10, dtype="<i8"))
    z = bytearray(b.getvalue())
    i = z.index(b"\x93NUMPY")
    data_at = i + 10 + int.from_bytes(z[i + 8:i + 10], "little")
    z[data_at + 8] ^= 0xFF  # the second element
    with pytest.raises(npzstream.RejectedError) as e:
        npzstream.load(bytes(z))
    assert e.value.code == "crc_mismatch" and e.value.rule and e.value.member == 0, e.value
    with pytest.raises(npzstream.RejectedError) as e:
        npzstream.load(npy_bytes(np.arange(3)) + b"x")
    assert e.value.code == "trailing_data"
    arr = npzstream.load(npy_bytes(np.arange(3)) + b"x", lenient_npy_trailing=True)
    assert list(arr) == [0, 1, 2]


def overlong_member(n_declared, n_real):
    """An .npz whose member declares a small array and inflates to n_real bytes: np.load reads
    the array and ignores the rest (a strict rule here, S-ZIP-MEMBER-TRAIL)."""
    hdr = io.BytesIO()
    np.save(hdr, np.zeros(n_declared, np.uint8))
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("a.npy", hdr.getvalue() + bytes(n_real - n_declared))
    return b.getvalue()


def test_bombs_and_declared_sizes():
    bomb = overlong_member(10, 50 << 20)
    with pytest.raises(npzstream.RejectedError) as e:
        npzstream.load(bomb)
    assert e.value.code == "trailing_data" and e.value.rule.startswith("S-ZIP-MEMBER-TRAIL"), e.value
    assert e.value.content_offset == 128 + 10  # refused at the first byte past the array
    # a 200-byte file declaring 64 GiB: refused before anything is allocated
    h = "{'descr': '<f8', 'fortran_order': False, 'shape': (8589934592,), }"
    h += " " * ((-(10 + len(h) + 1)) % 64) + "\n"
    data = b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h.encode() + bytes(16)
    tracemalloc.start()
    with pytest.raises(npzstream.RejectedError) as e:
        npzstream.load(data)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # the library's default (1 GiB in all) refuses it at its header; with that raised, load's own
    # max_bytes (also 1 GiB) does
    assert e.value.code == "limit" and e.value.rule == "LIMIT.max_total_bytes.array" and peak < (1 << 20), (e.value, peak)
    with pytest.raises(npzstream.RejectedError) as e:
        npzstream.load(data, max_total_bytes=1 << 40)
    assert e.value.code == "limit" and e.value.rule == "LIMIT.max_bytes", e.value
    small = data.replace(b"(8589934592,)", b"(1048576,   )")  # 8 MiB declared, 16 bytes there
    with pytest.raises(npzstream.RejectedError) as e:
        npzstream.load(small)
    assert e.value.code == "truncated" and e.value.offset == len(small)
    # the cap counts every member
    b = io.BytesIO()
    np.savez(b, a=np.zeros(600, np.uint8), b=np.zeros(600, np.uint8))
    with pytest.raises(npzstream.RejectedError) as e:
        npzstream.load(b.getvalue(), max_bytes=1000)
    assert e.value.rule == "LIMIT.max_bytes" and e.value.member == 1
    assert npzstream.load(b.getvalue(), max_bytes=1200)["b"].size == 600


def test_limits_range_checked_never_wrapped():
    for kw in ({"max_total_bytes": -1}, {"max_members": 2 ** 32 + 1}, {"max_ndim": 2 ** 32}, {"max_memory": 2 ** 64},
               {"max_ndim": 65}, {"max_depth": 1001}, {"inflate_window": 0}, {"max_header_size": 0}):
        with pytest.raises(ValueError) as e:
            npzstream.load(SAMPLE, **kw)
        assert list(kw)[0] in str(e.value) and not isinstance(e.value, npzstream.RejectedError)
    for kw in ({"max_ndim": True}, {"max_ndim": "3"}, {"max_ndim": 3.0}, {"no_such_limit": 1},
               {"lenient_npy_trailing": 1}):
        with pytest.raises(TypeError):
            npzstream.load(SAMPLE, **kw)
    with pytest.raises(ValueError):
        npzstream.load(SAMPLE, max_bytes=-1)
    with pytest.raises(npzstream.RejectedError) as e:  # a real limit: the members
        npzstream.load(SAMPLE, max_members=3)
    assert e.value.code == "limit" and e.value.rule == "LIMIT.max_members"


def test_fast_inflate_loads_the_same():
    if not npzstream.FAST_INFLATE:
        with pytest.raises(ValueError):
            npzstream.load(SAMPLE, lenient_fast_inflate=True)
        pytest.skip("this build has no ISA-L")
    same_result(npzstream.load(SAMPLE, lenient_fast_inflate=True), REF)
    same_result(npzstream.load([SAMPLE[i:i + 999] for i in range(0, len(SAMPLE), 999)], lenient_fast_inflate=True), REF)


def outcome(data, **kw):
    """The arrays load gives, or the rejection's code, offset and rule."""
    try:
        return "ok", npzstream.load(data, **kw)
    except npzstream.RejectedError as e:
        return "rejected", (e.code, e.offset, e.rule, e.member)


def test_inflate_zlib_loads_the_same():
    """inflate_zlib=True (zlib alone) against the default decoder: the same arrays, and the same
    rejection (code, offset, rule, member) for damaged deflate data, whole and in pieces."""
    with pytest.raises(TypeError):
        npzstream.load(SAMPLE, inflate_zlib=1)
    rng = np.random.default_rng(11)
    b = io.BytesIO()
    np.savez_compressed(b, f=rng.standard_normal(30_000).astype("<f4"), q=rng.integers(-8, 8, 50_000).astype("i1"),
                        i=rng.integers(0, 1000, 20_000))
    good = b.getvalue()
    datas = [good, SAMPLE]
    for zi in zipfile.ZipFile(io.BytesIO(good)).infolist():  # a byte of each stream changed: its start, middle, end
        start = zi.header_offset + 30 + int.from_bytes(good[zi.header_offset + 26:zi.header_offset + 28], "little") + \
            int.from_bytes(good[zi.header_offset + 28:zi.header_offset + 30], "little")
        for at in (start + 2, start + zi.compress_size // 2, start + zi.compress_size - 3):
            for x in (0x01, 0x80, 0x5A):
                bad = bytearray(good)
                bad[at] ^= x
                datas.append(bytes(bad))
    datas.append(good[:len(good) // 2])
    for data in datas:
        for n in (None, 4096, 999):
            src = data if n is None else [data[i:i + n] for i in range(0, len(data), n)]
            a, z = outcome(src), outcome(src, inflate_zlib=True)
            assert a[0] == z[0], (a[0], z[0])
            if a[0] == "ok":
                same_result(a[1], z[1])
            else:
                assert a[1] == z[1], (a[1], z[1])
    assert any(outcome(d)[0] == "rejected" and outcome(d)[1][2] == "S-ZIP-LOCAL.inflate" for d in datas)


def test_threads_load_the_same(real_files):
    """threads > 1 (deflated members inflated by workers while the stream goes on): the same
    arrays, the same rejections, whatever the split and the file."""
    rng = np.random.default_rng(7)
    b = io.BytesIO()
    np.savez_compressed(b, a=rng.integers(0, 9, 400_000).astype("<f4"), s=np.arange(10), c=rng.random(150_000),
                        d=rng.integers(0, 3, (300, 700)).astype("u1"))
    big = b.getvalue()
    ref = truth(big, {})[1]
    ld = npzstream.Loader(threads=2)
    ld.feed(big)
    same_result(ld.finish(), ref)
    # every deflated member of 1 MiB or more uncompressed is handed over (s and d are too small)
    ahead = sum(m.method == "deflated" and m.size >= 1 << 20 for m in npzstream.validate(big).members)
    assert ahead >= 2 and ld.inflated_ahead == ahead, (ld.inflated_ahead, ahead)
    # and its array is made over the worker's output (no copy): writable, aligned, its memory the
    # array's own to keep after the loader is gone
    ld = npzstream.Loader(threads=2)
    ld.feed(big)
    got = ld.finish()
    del ld
    gc.collect()
    over = [k for k, a in got.items() if type(a.base).__name__ == "Block"]
    assert len(over) == ahead, (over, ahead)
    for k in over:
        a = got[k]
        assert a.flags.writeable and a.flags.aligned and a.base.__class__.__module__.startswith("npzstream")
        same_array(a, ref[k])
        a[...] = 0  # the caller's memory
    same_result({k: got[k] for k in got if k not in over}, {k: ref[k] for k in ref if k not in over})
    for data, r in ((big, ref), (SAMPLE, REF)):
        for n in (None, 1 << 20, 4096, 777):
            src = data if n is None else [data[i:i + n] for i in range(0, len(data), n)]
            same_result(npzstream.load(src, threads=2), r)
            same_result(npzstream.load(src, threads=3, lenient_fast_inflate=False), r)
    # a damaged deflate stream inside the third member, a cut archive, a bad CRC: the same verdicts
    members = npzstream.validate(big).members
    names = [m.name for m in members]
    bad = bytearray(big)
    bad[members[3].offset - members[2].csize // 2] ^= 0x5A  # inside the third member's data
    for data in (bytes(bad), big[:len(big) * 2 // 3], big[:-10]):
        a = outcome(data)
        assert a[0] == "rejected", names
        for n in (None, 4096, 100_000):
            src = data if n is None else [data[i:i + n] for i in range(0, len(data), n)]
            assert outcome(src, threads=2) == a
    # every real file: what threads=2 gives is what one thread gives
    for path, case in real_files:
        data = open(path, "rb").read()
        kw = kw_of(case.get("args", []))
        a, b2 = outcome(data, max_bytes=1 << 40, **kw), outcome(data, max_bytes=1 << 40, threads=2, **kw)
        assert a[0] == b2[0], case["file"]
        if a[0] == "ok":
            same_result(b2[1], a[1])
        else:
            assert a[1] == b2[1], case["file"]
    # validate with workers (they keep only each member's header): the same report
    for data in (big, bytes(bad), big[:len(big) * 2 // 3]):
        a, b3 = npzstream.validate(data), npzstream.validate(data, threads=2)
        err = lambda r: (r.error.code, r.error.offset, r.error.rule, r.error.member) if r.error else None  # noqa: E731
        assert (a.ok, a.members, err(a)) == (b3.ok, b3.members, err(b3))
    for bad_threads in (0, 65, True, 2.0):
        with pytest.raises(ValueError):
            npzstream.load(big, threads=bad_threads)
        with pytest.raises(ValueError):
            npzstream.validate(big, threads=bad_threads)


class HelperSpy:
    """_npzstream.Stream with the bytes its helper holds recorded when the input ends (finish():
    every byte was pushed; a job's pieces of input, once freed, stay in its cache): held[-1]."""
    held = []

    def __init__(self, *args, **kw):
        self._s = REAL_STREAM(*args, **kw)

    def __getattr__(self, name):
        return getattr(self._s, name)

    def finish(self):
        HelperSpy.held.append(self._s.helper_memory)
        return self._s.finish()


REAL_STREAM = npzstream._npzstream.Stream


def test_threads_read_bytes_in_place(monkeypatch, tmp_path):
    """load(bytes, threads=2), open(path, threads=2) and validate(bytes, threads=2): the workers
    read the caller's bytes (or the mapping) where they are.  The helper holds no copy of the
    compressed bytes -- on an archive of one member, where no second worker has anything to do,
    that copy (and its page faults) is what made threads=2 slower than one thread -- only the
    output, and the buffers are given back when the call returns, accepted or rejected."""
    rng = np.random.default_rng(3)
    arrays = {"one": {"a": rng.integers(0, 1000, 1 << 19).astype("<i8")},
              "three": {k: rng.integers(0, 1000, 1 << 18).astype("<i8") for k in "abc"}}
    monkeypatch.setattr(npzstream._npzstream, "Stream", HelperSpy)
    for name, arrs in arrays.items():
        b = io.BytesIO()
        np.savez_compressed(b, **arrs)
        data = b.getvalue()
        members = npzstream.validate(data).members
        usize, csize = sum(m.size for m in members), sum(m.csize for m in members)
        path = tmp_path / (name + ".npz")
        path.write_bytes(data)
        calls = [("load", lambda src: npzstream.load(src, threads=2), (data, bytearray(data), memoryview(data))),
                 ("open", lambda p: dict(npzstream.open(p, threads=2).items()), (path,))]
        for how, call, sources in calls:
            for src in sources:
                got = call(src)
                held = HelperSpy.held[-1]
                # at most every output (its size + 1, taken or cached) and a few small records; a
                # copy of the compressed bytes would add csize
                assert held < usize + csize // 4, (name, how, type(src), held, usize, csize)
                same_result(got, arrs)
                if how == "load":
                    assert all(type(got[k].base).__name__ == "Block" for k in arrs), name  # a worker's output
        # validate: the workers keep a member's header only: what they hold is small
        assert npzstream.validate(data, threads=2) and HelperSpy.held[-1] < csize // 4, (name, HelperSpy.held[-1])
        # the caller's buffer is free again (a bytearray with an export cannot be resized)
        src = bytearray(data)
        npzstream.load(src, threads=2)
        src += b"x"
        src[len(src) // 2] ^= 0x55  # inside the deflated data, or an extra byte after the end record
        with pytest.raises(npzstream.RejectedError):
            npzstream.load(src, threads=2)
        src += b"x"
        assert npzstream.validate(src, threads=2).ok is False
        src += b"x"


def test_validate_report():
    rep = npzstream.validate(SAMPLE)
    assert rep.ok and rep.format == "npz" and rep.error is None and rep.consumed == len(SAMPLE)
    assert [m.key for m in rep.members] == list(REF)
    for m in rep.members:
        a = REF[m.key]
        assert m.kind == "array" and m.dtype == a.dtype.str and m.shape == a.shape
        assert m.fortran_order == (a.flags.f_contiguous and not a.flags.c_contiguous)
        assert m.nbytes == a.nbytes and m.method == "deflated"
        assert np.dtype(m.descr) == a.dtype
        assert m.data_crc32 == zlib.crc32(a.tobytes(order="A"))
    bad = npzstream.validate(SAMPLE[:-3])
    assert not bad.ok and bad.error.code == "truncated" and bad.error.offset == len(SAMPLE) - 3
    assert len(bad.members) == len(REF)  # all completed before the end records
    rep = npzstream.validate(npy_bytes(np.arange(4.0)))
    assert rep.ok and rep.format == "npy" and rep.members[0].key is None and rep.members[0].shape == (4,)


def test_rejected_error_is_a_value_error_and_picklable():
    import pickle
    try:
        npzstream.load(b"PK\x03\x04")
    except ValueError as e:
        assert isinstance(e, npzstream.RejectedError)
        e2 = pickle.loads(pickle.dumps(e))
        assert (e2.code, e2.offset, e2.rule, str(e2)) == (e.code, e.offset, e.rule, str(e))


def test_blobs_load_as_numpy_does():
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w") as zf:
        zf.writestr("notes.txt", b"hello")
        with zf.open("a.npy", "w") as f:
            np.save(f, np.arange(3))
    got = npzstream.load(b.getvalue())
    same_result(got, truth(b.getvalue(), {})[1])
    assert got["notes.txt"] == b"hello"


# ---- the upload server example, over real HTTP --------------------------------------------------

def test_upload_server_example():
    import upload_server
    srv = upload_server.serve(0)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    url = "http://127.0.0.1:%d/upload" % srv.server_address[1]
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=SAMPLE, method="POST")) as r:
            got = json.loads(r.read())
        assert got["ok"] and sorted(got["members"]) == sorted(REF)
        assert got["members"]["w"]["shape"] == [600, 500] and got["members"]["w"]["sum"] == float(REF["w"].sum())

        def chunked():  # chunked transfer encoding: the body as it comes
            for i in range(0, len(SAMPLE), 10000):
                yield SAMPLE[i:i + 10000]
        req = urllib.request.Request(url, data=chunked(), method="POST", headers={"Transfer-Encoding": "chunked"})
        with urllib.request.urlopen(req) as r:
            assert json.loads(r.read())["ok"]
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(urllib.request.Request(url, data=SAMPLE[:-100], method="POST"))
        body = json.loads(e.value.read())
        assert e.value.code == 400 and body["code"] == "truncated" and body["offset"] == len(SAMPLE) - 100
    finally:
        srv.shutdown()
        srv.server_close()


def test_destination_not_collected_before_its_stream():
    """The collector never sees the array's destination through the stream that writes it: it could
    clear a memoryview the stream still holds an export of, and the stream's release then crashed
    (a segmentation fault in gc.collect(), found with the suites in one process).  The stream's
    cycle through on_header is still collected, and the destination released with it."""
    b = io.BytesIO()
    np.save(b, np.arange(1000, dtype="<f8"))
    data = b.getvalue()
    mv = memoryview(bytearray(8000))
    s = npzstream._npzstream.Stream(None, lambda m: mv)
    s.feed(data[:len(data) // 2])  # the header is in: the destination is held, half written
    assert not any(r is mv for r in gc.get_referents(s)), "the destination is visited"
    ld = npzstream.Loader()
    ld.feed(data[:len(data) // 2])
    gone = weakref.ref(ld)
    del ld
    gc.collect()
    assert gone() is None, "the loader's cycle was not collected"
