"""pytest suite of what the package does beyond np.load (issue 26): open() (views of a mapped
file), load's reads straight into the arrays, Validator in async code, spool() and scan().
Run by tests/run_all.py (pytest) in every environment make python-env set up.

Truth is np.load(f, allow_pickle=False) of the NumPy in the environment, and npzstream.load of
the same bytes (its verdicts, codes, offsets and rules)."""
import asyncio
import dataclasses
import io
import os
import pickle
import stat
import subprocess
import sys
import threading
import weakref

import numpy as np
import pytest

import npzstream

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import Alarm, through_socket  # noqa: E402
from pytest_load import REF, SAMPLE, same_array, same_result, truth  # noqa: E402
from pytest_load import real_files as real_files  # noqa: E402  (the fixture)


def stored_sample():
    b = io.BytesIO()
    dt = np.dtype([("a", "<i4"), ("b", [("c", "<f8", (2,)), ("d", "S3")])])
    x = np.zeros(5, dt)
    x["a"] = np.arange(5)
    np.savez(b, w=np.arange(300000, dtype="<f4").reshape(600, 500), f=np.asfortranarray(np.eye(7)),
             s=x, z=np.zeros((0, 3)), u=np.array(["a", "bcd"]), n=np.float64(3.5), big=np.arange(3 << 18, dtype="<i8"))
    return b.getvalue()


STORED = stored_sample()
STORED_REF = truth(STORED, {})[1]


@pytest.fixture()
def tmp(tmp_path):
    return str(tmp_path)


def write(d, name, data):
    p = os.path.join(d, name)
    with open(p, "wb") as f:
        f.write(data)
    return p


def base_of(a):
    while isinstance(a, np.ndarray) and a.base is not None:
        a = a.base
    return a


# ---- open(): views of a mapped file ------------------------------------------------------------

def test_open_gives_what_load_gives_for_every_real_file(real_files, tmp):  # noqa: F811
    opened = rejected = 0
    for path, _case in real_files:
        kw = {"max_total_bytes": 1 << 40}
        try:
            ref = npzstream.load(path, max_bytes=1 << 40, **kw)
        except npzstream.RejectedError as e:
            with open(path, "rb") as f:
                data = f.read()
            for source in (path, data):
                with pytest.raises(npzstream.RejectedError) as e2:
                    npzstream.open(source, max_bytes=1 << 40, **kw)
                assert (e2.value.code, e2.value.offset, e2.value.rule, e2.value.member) == (e.code, e.offset, e.rule,
                                                                                            e.member), path
            rejected += 1
            continue
        with open(path, "rb") as f:
            data = f.read()
        for source in (path, data):  # the file mapped, and its bytes in memory
            with npzstream.open(source, max_bytes=1 << 40, **kw) as z:
                if isinstance(ref, np.ndarray):
                    assert z.format == "npy"
                    same_array(z.array, ref)
                else:
                    assert z.format == "npz"
                    same_result(dict(z), ref)
                    assert list(z) == list(ref) and len(z) == len(ref)
                assert z.verify()
        opened += 1
    assert opened >= 50 and rejected >= 3, (opened, rejected)


def test_open_stored_members_are_views_of_the_mapping(tmp):
    p = write(tmp, "s.npz", STORED)
    with npzstream.open(p) as z:
        same_result(dict(z), STORED_REF)
        m = base_of(z["w"])
        assert type(m).__name__ == "Map" and len(m) == len(STORED)
        for k in z:
            a = z[k]
            assert not a.flags.writeable  # read-only: the file's pages, never written
            if a.nbytes:
                assert base_of(a) is m, k  # a view: no copy
                with pytest.raises(ValueError):
                    a.flags.writeable = True
                off = a.ctypes.data - np.frombuffer(m, np.uint8).ctypes.data
                member = next(x for x in z.members if x.key == k)
                assert member.offset < off < member.offset + member.csize + 200
                assert bytes(np.frombuffer(m, np.uint8)[off:off + a.nbytes]) == STORED_REF[k].tobytes(order="A")
        assert z["f"].flags.f_contiguous and not z["f"].flags.c_contiguous


def test_open_bytes_gives_views_of_the_callers_bytes():
    for kind in (bytes, bytearray, memoryview):
        data = kind(STORED) if kind is not memoryview else memoryview(bytearray(STORED))
        with npzstream.open(data) as z:
            assert z.path is None and z.size == len(STORED) and z.format == "npz"
            same_result(dict(z), STORED_REF)
            start = np.frombuffer(data, np.uint8).ctypes.data
            for k in z:
                a = z[k]
                assert not a.flags.writeable, (kind, k)  # read-only, whatever the buffer
                if a.nbytes:  # a view into the caller's bytes: no copy
                    assert start <= a.ctypes.data < start + len(STORED), (kind, k)
                    with pytest.raises(ValueError):
                        a.flags.writeable = True
            assert z.verify() and z.verify().path is None
            w = z["w"]
        same_array(w, STORED_REF["w"])  # the arrays outlive close(), holding the bytes
    buf = bytearray(STORED)
    z = npzstream.open(buf, threads=2)
    w = z["w"]
    with pytest.raises(BufferError):  # resizing would move the bytes under the views
        buf.extend(b"x")
    i = STORED.index(STORED_REF["w"].tobytes()[4000:4016])
    buf[i] ^= 1  # the caller writes its own buffer: the view shows it, verify() finds it
    assert w.tobytes() != STORED_REF["w"].tobytes()
    r = z.verify()
    assert not r and r.error.code == "crc_mismatch" and r.error.member == 0 and r.error.rule
    buf[i] ^= 1
    assert z.verify()
    z.close()
    del z, w
    buf.extend(b"x")  # released with the last view (the failed report r holds nothing of it)


def test_a_rejected_report_does_not_hold_the_input():
    class Buf(bytearray):  # a bytes-like that weakref can follow
        pass
    bad = bytearray(STORED)
    bad[STORED.index(STORED_REF["w"].tobytes()[4000:4016])] ^= 1
    for threads in (1, 2):
        data = Buf(bad)
        gone = weakref.ref(data)
        r = npzstream.validate(data, threads=threads)
        assert not r and r.error.code == "crc_mismatch" and r.error.__traceback__ is None
        del data
        assert gone() is None, threads  # no traceback's frames keep the bytes


def test_open_bytes_deflated_and_npy(tmp):
    with npzstream.open(SAMPLE, threads=2) as z:
        same_result(dict(z), REF)
        lo = np.frombuffer(SAMPLE, np.uint8).ctypes.data
        for k in z:  # inflated: memory of their own
            a = z[k]
            if isinstance(a, np.ndarray) and a.nbytes:
                assert not lo <= a.ctypes.data < lo + len(SAMPLE), k
    b = io.BytesIO()
    np.save(b, np.arange(10, dtype=">i2"))
    with npzstream.open(b.getvalue(), digest=True) as z:
        same_array(z.array, np.arange(10, dtype=">i2"))
        assert z.sha256 is not None and z.verify()


def test_open_bytes_rejections_are_loads():
    bad = bytearray(STORED)
    i = STORED.index(STORED_REF["w"].tobytes()[4000:4016])
    bad[i] ^= 1
    for source in (bytes(bad), bad, memoryview(bad), b"", STORED[:-1]):
        with pytest.raises(npzstream.RejectedError) as e:
            npzstream.open(source)
        with pytest.raises(npzstream.RejectedError) as e2:
            npzstream.load(bytes(source))
        assert (e.value.code, e.value.offset, e.value.rule, e.value.member) == \
            (e2.value.code, e2.value.offset, e2.value.rule, e2.value.member) and e.value.rule
    bad.extend(b"x")  # nothing of a refused open holds the bytes
    with pytest.raises(npzstream.RejectedError) as e:
        npzstream.open(STORED, policy={"members": {"w": {"dtype": ["<f8"]}}})
    assert e.value.code == "policy" and e.value.rule == "POLICY.dtype"
    with pytest.raises(ValueError, match="not contiguous"):
        npzstream.open(memoryview(STORED)[::2])


def test_open_deflated_members_are_inflated_arrays(tmp):
    p = write(tmp, "d.npz", SAMPLE)
    with npzstream.open(p) as z:
        same_result(dict(z), REF)
        for k in z:
            assert type(base_of(z[k])).__name__ != "Map"  # memory of their own
    with npzstream.open(p, threads=2) as z:
        same_result(dict(z), REF)
    with pytest.raises(npzstream.RejectedError) as e:  # max_bytes caps the private memory
        npzstream.open(p, max_bytes=1000)
    assert e.value.rule == "LIMIT.max_bytes"
    with npzstream.open(write(tmp, "s.npz", STORED), max_bytes=0) as z:  # views cost none of it
        assert z["w"].shape == (600, 500)


# zlib's stream starts counted: a library preloaded before libz with inflateInit2_ and inflateReset
# of its own, each counting and calling zlib's (the parser begins every deflated member with one
# of them, whichever decoder inflates it: src/zip/inflate.c); zlib's inflateInit2_ calls
# inflateReset itself, which is not counted again.  zlib's functions are looked up in its own
# library's handle: it may not be in the global scope (loaded with the extension alone), where
# RTLD_NEXT would look
COUNTING_ZLIB = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <zlib.h>
static unsigned long begun;
static __thread int in_init;
unsigned long npzs_test_streams_begun(void) { return begun; }
static void *zlib_fn(const char *name) {
    void *h = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
    return h ? dlsym(h, name) : NULL;
}
int inflateReset(z_streamp s) {
    static int (*real)(z_streamp);
    if (!real) *(void **)&real = zlib_fn("inflateReset");
    if (!in_init) __atomic_add_fetch(&begun, 1, __ATOMIC_RELAXED);
    return real(s);
}
int inflateInit2_(z_streamp s, int w, const char *v, int n) {
    static int (*real)(z_streamp, int, const char *, int);
    if (!real) *(void **)&real = zlib_fn("inflateInit2_");
    __atomic_add_fetch(&begun, 1, __ATOMIC_RELAXED);
    in_init = 1;
    int rc = real(s, w, v, n);
    in_init = 0;
    return rc;
}
"""

OPEN_COUNTED = r"""
import ctypes, sys, npzstream
begun = ctypes.CDLL(None).npzs_test_streams_begun
begun.restype = ctypes.c_ulong
for kw in ({}, {"inflate_zlib": True}):
    b0 = begun()
    with npzstream.open(sys.argv[1], **kw) as z:
        n = len(z)
    print(begun() - b0, n)
"""


def test_open_inflates_each_member_once(tmp, monkeypatch):
    """open() inflates every deflated member once, during its one pass, into the member's array:
    one zlib stream begun a deflated member with one thread (either decoder; a second pass, or the
    parser inflating a member a worker made, would begin a second), and with threads=2 every large
    member's output taken from a worker (the parser inflates none of them again)."""
    rng = np.random.default_rng(5)
    arrays = {k: rng.integers(0, 1000, 3 << 17).astype("<i8") for k in "abcd"}  # 3 MiB each
    arrays["small"] = np.arange(1000)  # below the helper's 1 MiB: the parser's own
    b = io.BytesIO()
    np.savez_compressed(b, **arrays)
    p = write(tmp, "five.npz", b.getvalue())
    shim = os.path.join(tmp, "counting_zlib.so")
    src = write(tmp, "counting_zlib.c", COUNTING_ZLIB.encode())
    r = subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", shim, src, "-ldl"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([sys.executable, "-c", OPEN_COUNTED, p], capture_output=True, text=True,
                       env=dict(os.environ, LD_PRELOAD=shim))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["5", "5", "5", "5"], r.stdout  # default decoder, zlib alone
    # threads=2: the four large members inflated by the workers, taken as they made them
    ahead = []
    real = npzstream._npzstream.Stream

    class Spy:
        def __init__(self, *args, **kw):
            self._s = real(*args, **kw)

        def __getattr__(self, name):
            return getattr(self._s, name)

        def release(self):
            ahead.append(self._s.inflated_ahead)
            return self._s.release()
    monkeypatch.setattr(npzstream._npzstream, "Stream", Spy)
    with npzstream.open(p, threads=2) as z:
        same_result(dict(z), arrays)
    assert ahead == [4], ahead


def test_open_npy_and_its_mapping_view(tmp):
    a = np.arange(24, dtype=">i4").reshape(2, 3, 4)
    b = io.BytesIO()
    np.save(b, a)
    with npzstream.open(write(tmp, "a.npy", b.getvalue())) as z:
        assert z.format == "npy"
        same_array(z.array, a)
        assert type(base_of(z.array)).__name__ == "Map"
        for f in (len, list, lambda z: z["x"]):
            with pytest.raises(TypeError, match="use .array"):
                f(z)
    with npzstream.open(write(tmp, "s.npz", STORED)) as z:
        with pytest.raises(TypeError):
            _ = z.array


def test_open_arrays_outlive_close(tmp):
    p = write(tmp, "s.npz", STORED)
    z = npzstream.open(p)
    w = z["w"]
    z.close()
    assert z.closed and "closed" in repr(z)
    with pytest.raises(ValueError, match="closed"):
        z["w"]
    with pytest.raises(ValueError, match="closed"):
        z.verify()
    del z
    import gc
    gc.collect()
    same_array(w, STORED_REF["w"])  # the mapping lives as long as its arrays
    with npzstream.open(p) as z:
        pass
    with pytest.raises(ValueError):
        len(z)


def test_open_rejections_are_loads(tmp):
    bad = bytearray(STORED)
    i = STORED.index(STORED_REF["w"].tobytes()[4000:4016])
    bad[i] ^= 1
    p = write(tmp, "bad.npz", bytes(bad))
    with pytest.raises(npzstream.RejectedError) as e:
        npzstream.open(p)
    with pytest.raises(npzstream.RejectedError) as e2:
        npzstream.load(bytes(bad))
    assert e.value.code == "crc_mismatch" and e.value == e2.value
    with pytest.raises(npzstream.RejectedError) as e:
        npzstream.open(write(tmp, "empty.npz", b""))
    assert e.value.code == "truncated"
    with pytest.raises(npzstream.RejectedError) as e:
        npzstream.open(write(tmp, "s.npz", STORED), policy={"members": {"w": {"dtype": ["<f8"]}}})
    assert e.value.code == "policy" and e.value.rule == "POLICY.dtype"
    r, w = os.pipe()
    try:
        with pytest.raises(ValueError, match="not a regular file"):
            npzstream.open("/dev/fd/%d" % r)
    finally:
        os.close(r)
        os.close(w)
    with pytest.raises(FileNotFoundError):
        npzstream.open(os.path.join(tmp, "missing.npz"))


def test_verify_sees_a_rewritten_or_truncated_file(tmp):
    p = write(tmp, "s.npz", STORED)
    z = npzstream.open(p)
    assert z.verify() and z.verify().path == p
    w = z["w"]
    i = STORED.index(STORED_REF["w"].tobytes()[4000:4016])
    fd = os.open(p, os.O_WRONLY)
    os.pwrite(fd, bytes([STORED[i] ^ 0xFF]), i)  # someone else rewrites a byte in place
    os.close(fd)
    # what a mapping cannot promise: the page nobody wrote follows the file
    assert np.frombuffer(w.tobytes(), np.uint8)[i - (w.ctypes.data - np.frombuffer(base_of(w), np.uint8).ctypes.data)] \
        == STORED[i] ^ 0xFF
    r = z.verify()
    assert not r and r.error.code == "crc_mismatch" and r.error.member == 0
    fd = os.open(p, os.O_WRONLY)
    os.pwrite(fd, bytes([STORED[i]]), i)
    os.close(fd)
    assert z.verify()
    os.truncate(p, len(STORED) - 10)
    r = z.verify()  # checked before a page past the end is read (that would be SIGBUS)
    assert not r and r.error.code == "changed" and r.error.rule == "OPEN.changed"
    z.close()
    # the same size, another valid archive: the members differ
    other = io.BytesIO()
    np.savez(other, w=np.zeros((600, 500), "<f4"), f=np.asfortranarray(np.eye(7)))
    data = other.getvalue()
    p2 = write(tmp, "o.npz", data)
    z = npzstream.open(p2)
    other2 = io.BytesIO()
    np.savez(other2, w=np.ones((600, 500), "<f4"), f=np.asfortranarray(np.eye(7)))
    assert len(other2.getvalue()) == len(data)
    with open(p2, "r+b") as f:
        f.write(other2.getvalue())
    r = z.verify()
    assert not r and r.error.code == "changed" and r.error.member == 0
    z.close()


def test_open_large_stored_file_touches_no_private_memory(tmp):
    a = np.arange(64 << 20 >> 3, dtype="<i8")  # 64 MiB
    b = io.BytesIO()
    np.savez(b, a=a, b=a[::-1].copy())
    p = write(tmp, "l.npz", b.getvalue())
    del b
    code = ("import numpy as np, npzstream, sys\n"
            "anon = lambda: int([l for l in open('/proc/self/status') if l.startswith('RssAnon')][0].split()[1])\n"
            "base = anon()\n"
            "z = npzstream.open(sys.argv[1])\n"
            "s = int(z['a'][-1]) + int(z['b'][0]) + sum(int(x.view(np.uint8)[::4096].sum()) for x in z.values())\n"
            "print(anon() - base, s)\n")
    import subprocess
    if not os.path.exists("/proc/self/status"):
        pytest.skip("no /proc/self/status to read RssAnon from")
    out = subprocess.run([sys.executable, "-c", code, p], capture_output=True, text=True, check=True).stdout.split()
    grew = int(out[0])
    assert grew < 8 * 1024, "open + touching 128 MiB of views grew private memory by %d KiB" % grew
    assert int(out[1]) > 0


# ---- load: stored data read straight into the arrays -------------------------------------------

class Recorder(io.RawIOBase):
    """A raw file that records where each readinto wrote, and returns at most `most` bytes."""

    def __init__(self, data, most=1 << 30):
        self.f = io.BytesIO(data)
        self.most = most
        self.targets = []

    def readable(self):
        return True

    def readinto(self, b):
        mv = memoryview(b).cast("B")
        n = min(len(mv), self.most)
        self.targets.append((np.frombuffer(mv, np.uint8).ctypes.data if len(mv) else 0, n))
        return self.f.readinto(mv[:n])


def test_load_reads_stored_data_into_the_arrays():
    rec = Recorder(STORED)
    got = npzstream.load(rec)
    same_result(got, STORED_REF)
    for k in ("w", "big"):  # a read went straight into each large array's memory
        a = got[k]
        lo, hi = a.ctypes.data, a.ctypes.data + a.nbytes
        assert any(lo <= t < hi for t, _ in rec.targets), k
    direct = sum(n for t, n in rec.targets if any(got[k].ctypes.data <= t < got[k].ctypes.data + got[k].nbytes
                                                  for k in ("w", "big")))
    # only what came with the records in one small read went through the buffer
    assert direct >= got["w"].nbytes + got["big"].nbytes - 2 * (64 << 10)
    assert npzstream.load(Recorder(STORED, most=999)).keys() == got.keys()  # short reads
    same_result(npzstream.load(Recorder(STORED, most=999)), STORED_REF)


def test_direct_reads_give_what_bytes_give(real_files, tmp):  # noqa: F811
    n = 0
    for path, _case in real_files:
        data = open(path, "rb").read()
        try:
            ref = npzstream.load(data, max_bytes=1 << 40, max_total_bytes=1 << 40)
        except npzstream.RejectedError as e:
            for src in (path, Recorder(data, most=4097)):
                with pytest.raises(npzstream.RejectedError) as e2:
                    npzstream.load(src, max_bytes=1 << 40, max_total_bytes=1 << 40)
                assert e2.value == e, path
            continue
        same_result(npzstream.load(path, max_bytes=1 << 40, max_total_bytes=1 << 40), ref)
        same_result(npzstream.load(Recorder(data, most=4097), max_bytes=1 << 40, max_total_bytes=1 << 40), ref)
        n += 1
    assert n >= 50


def test_direct_reads_reject_as_bytes_do(tmp):
    i = STORED.index(STORED_REF["big"].tobytes()[1 << 20:(1 << 20) + 16])
    bad = bytearray(STORED)
    bad[i] ^= 4
    for data in (bytes(bad), STORED[:i], STORED[:-1], STORED + b"x"):
        with pytest.raises(npzstream.RejectedError) as e:
            npzstream.load(data)
        for src in (write(tmp, "x.npz", data), Recorder(data), Recorder(data, most=333)):
            with pytest.raises(npzstream.RejectedError) as e2:
                npzstream.load(src)
            assert e2.value == e.value
    pol = {"members": {"big": {"range": [0, 1000]}}}  # a value check on data read in place
    with pytest.raises(npzstream.RejectedError) as e:
        npzstream.load(STORED, policy=pol)
    with pytest.raises(npzstream.RejectedError) as e2:
        npzstream.load(write(tmp, "x.npz", STORED), policy=pol)
    assert e.value.rule == "POLICY.range" and e2.value == e.value


def test_direct_reads_from_a_socket_and_a_npy():
    same_result(through_socket(STORED, npzstream.load), STORED_REF)
    big = np.asfortranarray(np.arange(1 << 20, dtype="<f8").reshape(1024, 1024))
    buf = io.BytesIO()
    np.save(buf, big)
    rec = Recorder(buf.getvalue())
    got = npzstream.load(rec)
    same_array(got, big)
    assert any(got.ctypes.data <= t < got.ctypes.data + got.nbytes for t, _ in rec.targets)


# ---- Validator in async code --------------------------------------------------------------------

def test_validator_async_feed():
    async def body(data, n):
        for i in range(0, len(data), n):
            await asyncio.sleep(0)
            yield data[i:i + n]

    async def main():
        v = npzstream.Validator()
        ticks = 0

        async def ticker():  # the event loop keeps running while large chunks are checked
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)
        t = asyncio.ensure_future(ticker())
        async for chunk in body(SAMPLE, 1 << 18):
            await v.afeed(chunk)
        r = v.finish()
        t.cancel()
        assert r and bool(r) is True and [m.key for m in r.members] == list(REF) and ticks > 0
        v = npzstream.Validator()
        fed = 0
        async for chunk in body(SAMPLE[:2000] + b"\x00" * 100 + SAMPLE[2100:], 500):
            await v.afeed(chunk)
            fed += len(chunk)
            if v.error:  # the verdict is known: stop reading
                break
        r = v.finish()
        assert not r and bool(r) is False and "REJECTED" in repr(r) and fed < len(SAMPLE)
        with pytest.raises(npzstream.RejectedError):
            r.raise_for_error()
    asyncio.run(main())


# ---- spool(): validate while writing, move into place on ok -------------------------------------

def test_spool_accepts_and_moves_into_place(tmp):
    dest = os.path.join(tmp, "up.npz")
    sp = npzstream.spool(dest)
    for i in range(0, len(SAMPLE), 3000):
        sp.feed(SAMPLE[i:i + 3000])
        assert not os.path.exists(dest)  # nothing at dest before the verdict
    assert os.path.exists(sp.temp) and os.path.dirname(sp.temp) == tmp
    r = sp.finish()
    assert r and r.path == dest and not os.path.exists(sp.temp)
    assert open(dest, "rb").read() == SAMPLE
    assert stat.S_IMODE(os.stat(dest).st_mode) == 0o644 & ~_umask()
    assert sp.finish() is r
    assert os.listdir(tmp) == ["up.npz"]


def _umask():
    u = os.umask(0)
    os.umask(u)
    return u


def test_spool_rejection_deletes_at_once(tmp):
    dest = os.path.join(tmp, "up.npz")
    write(tmp, "up.npz", b"old")
    sp = npzstream.spool(dest)
    bad = SAMPLE[:2000] + b"\x00" * 100 + SAMPLE[2100:]
    fed = 0
    for i in range(0, len(bad), 1000):
        sp.feed(bad[i:i + 1000])
        fed += 1000
        if sp.error:
            break
    assert sp.error is not None and fed < len(bad)
    assert not os.path.exists(sp.temp)  # deleted as soon as the verdict is known
    sp.feed(b"more")  # ignored after the rejection
    r = sp.finish()
    assert not r and r.error == sp.error and r.path is None
    assert open(dest, "rb").read() == b"old" and os.listdir(tmp) == ["up.npz"]
    sp = npzstream.spool(dest)  # truncated: known at finish
    sp.feed(SAMPLE[:-1])
    r = sp.finish()
    assert not r and r.error.code == "truncated" and not os.path.exists(sp.temp)
    assert open(dest, "rb").read() == b"old"


def test_spool_abort_overwrite_and_policy(tmp):
    dest = os.path.join(tmp, "up.npz")
    with pytest.raises(RuntimeError):
        with npzstream.spool(dest) as sp:
            sp.feed(SAMPLE[:100])
            raise RuntimeError("client went away")
    assert os.listdir(tmp) == []
    write(tmp, "up.npz", b"old")
    sp = npzstream.spool(dest, overwrite=False, mode=0o600)
    sp.feed(SAMPLE)
    with pytest.raises(FileExistsError):
        sp.finish()
    assert open(dest, "rb").read() == b"old" and os.listdir(tmp) == ["up.npz"]
    os.unlink(dest)
    sp = npzstream.spool(dest, overwrite=False, mode=0o600)
    sp.feed(SAMPLE)
    assert sp.finish() and stat.S_IMODE(os.stat(dest).st_mode) == 0o600
    os.unlink(dest)
    sp = npzstream.spool(dest, policy={"members": {"w": {"dtype": ["<f8"]}}})
    sp.feed(SAMPLE)
    r = sp.finish()
    assert not r and r.error.rule == "POLICY.dtype" and os.listdir(tmp) == []


def test_spool_async(tmp):
    dest = os.path.join(tmp, "up.npz")

    async def main():
        sp = npzstream.spool(dest)
        for i in range(0, len(SAMPLE), 1 << 18):
            await sp.afeed(SAMPLE[i:i + (1 << 18)])
        return sp.finish()
    assert asyncio.run(main())
    assert open(dest, "rb").read() == SAMPLE


# ---- scan(): many files in a process pool -------------------------------------------------------

def scan_files(d):
    files = [write(d, "ok.npz", SAMPLE), write(d, "trunc.npz", SAMPLE[:-7]), write(d, "s.npz", STORED)]
    b = io.BytesIO()
    np.save(b, np.arange(5))
    files.append(write(d, "a.npy", b.getvalue()))
    files.append(os.path.join(d, "missing.npz"))
    files.append(write(d, "junk.npz", b"PK\x03\x04junk"))
    return files * 3


def test_scan_in_order_and_the_same_as_serial(tmp):
    files = scan_files(tmp)
    serial = list(npzstream.scan(files, workers=0))
    par = list(npzstream.scan(files, workers=2))
    assert [r.path for r in par] == files == [r.path for r in serial]
    assert par == serial  # every field, the errors included
    for r, f in zip(par, files):
        assert r == dataclasses.replace(npzstream.validate(f), path=f) if os.path.exists(f) else \
            (not r and r.error.code == "io")
    assert [bool(r) for r in par[:6]] == [True, False, True, True, False, False]
    pol = {"members": {"w": {"dtype": ["<f4"]}}}
    assert list(npzstream.scan(files[:3], workers=2, policy=pol)) == list(npzstream.scan(files[:3], workers=0,
                                                                                        policy=pol))
    with pytest.raises(npzstream.PolicyError):
        list(npzstream.scan(files, workers=2, policy={"members": {"w": {"dtype": 5}}}))
    with pytest.raises(TypeError):
        list(npzstream.scan(files, workers=2, max_nonsense=3))


def test_reports_and_rejections_pickle(tmp):
    for r in npzstream.scan(scan_files(tmp)[:6], workers=0, hash=npzstream.SHA256):
        r2 = pickle.loads(pickle.dumps(r))
        assert r2 == r and bool(r2) == bool(r) and repr(r2) == repr(r)
        if r.error is not None:
            e = pickle.loads(pickle.dumps(r.error))
            assert e == r.error and str(e) == str(r.error) and isinstance(e, ValueError)
    e = npzstream.RejectedError("m", code="policy", offset=3, member=1, name=b"w.npy", rule="POLICY.dtype",
                                content_offset=7, detail="d", hint="h")
    assert pickle.loads(pickle.dumps(e)) == e and hash(pickle.loads(pickle.dumps(e))) == hash(e)


def test_version_is_the_library_s():
    assert npzstream.__version__ == npzstream.library_version()
    import re
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    h = open(os.path.join(root, "include", "npzstream.h")).read()
    assert npzstream.__version__ == re.search(r'#define NPZS_VERSION "([^"]+)"', h).group(1)


# ---- paths that are not regular files: refused, never waited on ------------------------------------

def test_open_and_scan_refuse_what_is_not_a_regular_file(tmp):
    fifo = os.path.join(tmp, "f.npz")
    os.mkfifo(fifo)  # nobody writes it: opening it for reading the usual way waits forever
    good = write(tmp, "s.npz", STORED)
    for path, kind in ((fifo, "a FIFO"), ("/dev/zero", "a character device"), (tmp, "a directory")):
        with Alarm(10), pytest.raises(ValueError, match="%s, not a regular file" % kind):
            npzstream.open(path)
        with Alarm(10):
            r = npzstream.check_file(path)
        assert not r and (r.error.code, r.error.offset, r.error.member) == ("io", 0, None) and r.path == path
        assert kind in r.error.message
        with Alarm(30):
            reports = list(npzstream.scan([good, path, good], workers=2))
        assert [bool(x) for x in reports] == [True, False, True] and reports[1] == r
    with Alarm(10):
        assert [bool(x) for x in npzstream.scan([fifo, good], workers=0)] == [False, True]


def test_load_reads_a_path_as_a_stream(tmp):
    """load and validate read the path they are given as a stream: a FIFO is a pipe (its writer
    is waited for), a device is read until the parser refuses its bytes."""
    r = npzstream.validate("/dev/zero")
    assert not r and r.error.offset == 0 and r.consumed <= 1 << 20
    fifo = os.path.join(tmp, "f.npz")
    os.mkfifo(fifo)

    def writer():
        with open(fifo, "wb") as f:
            f.write(STORED)
    t = threading.Thread(target=writer)
    t.start()
    with Alarm(30):
        same_result(npzstream.load(fifo), STORED_REF)
    t.join()


# ---- verify(): what a CRC-32 can and cannot tell ----------------------------------------------------

def crc_keeping_patch(data, lo, hi, at, flip):
    """data with the bytes at `flip` changed and four bytes at `at` set so that the CRC-32 of
    data[lo:hi] (and so of any range around it) stays the same: CRC-32 is linear over GF(2)."""
    import zlib
    n = hi - lo
    zero = zlib.crc32(bytes(n))

    def delta(positions):  # the CRC-32 change a change of those bits (offset, bit) makes
        d = bytearray(n)
        for off, bit in positions:
            d[off - lo] ^= 1 << bit
        return zlib.crc32(bytes(d)) ^ zero
    want = delta([(i, b) for i, x in flip.items() for b in range(8) if (data[i] ^ x) >> b & 1])
    # solve sum(c_k * delta(bit k of the patch)) == want over GF(2), by elimination
    rows = [(delta([(at + k // 8, k % 8)]), 1 << k) for k in range(32)]
    basis = {}
    for v, m in rows:
        for top in sorted(basis, reverse=True):
            if v >> top & 1:
                v ^= basis[top][0]
                m ^= basis[top][1]
        if v:
            basis[v.bit_length() - 1] = (v, m)
    v, m = want, 0
    for top in sorted(basis, reverse=True):
        if v >> top & 1:
            v ^= basis[top][0]
            m ^= basis[top][1]
    assert v == 0
    out = bytearray(data)
    for i, x in flip.items():
        out[i] = x
    for k in range(32):
        if m >> k & 1:
            out[at + k // 8] ^= 1 << (k % 8)
    assert zlib.crc32(bytes(out[lo:hi])) == zlib.crc32(bytes(data[lo:hi]))
    return bytes(out)


def test_verify_is_no_digest_unless_asked(tmp):
    """A rewrite that keeps every CRC-32 passes verify() (as its docstring and SECURITY.md say);
    with digest=True it does not."""
    w = STORED_REF["w"]
    lo = STORED.index(w.tobytes()[:64])
    hi = lo + w.nbytes
    i = lo + 4000
    forged = crc_keeping_patch(STORED, lo, hi, at=lo + 8000, flip={i: STORED[i] ^ 0x40})
    assert forged != STORED and len(forged) == len(STORED)
    got = npzstream.load(forged)  # a valid file: the same CRC-32s, other values
    assert not np.array_equal(got["w"], w)
    for digest in (False, True):
        p = write(tmp, "d%d.npz" % digest, STORED)
        z = npzstream.open(p, digest=digest)
        assert z.verify()
        assert (z.sha256 is not None) == digest
        with open(p, "r+b") as f:
            f.write(forged)
        assert not np.array_equal(z["w"], w)  # the view follows the file
        r = z.verify()
        if digest:
            assert not r and (r.error.code, r.error.rule, r.error.offset) == ("changed", "OPEN.changed", 0)
            assert "SHA-256" in r.error.message and r.members == []
        else:
            assert r  # every CRC-32 is the same: verify() cannot tell
        with open(p, "r+b") as f:
            f.write(STORED)
        assert z.verify()
        z.close()
    import hashlib
    with npzstream.open(write(tmp, "h.npz", STORED), digest=True) as z:
        assert z.sha256 == hashlib.sha256(STORED).hexdigest()
    assert "no digest" in npzstream.Mapped.verify.__doc__ and "digest=True" in npzstream.open.__doc__


# ---- scan() from a script --------------------------------------------------------------------------

def test_scan_in_an_unguarded_script_says_why(tmp):
    files = [write(tmp, "a%d.npz" % i, STORED) for i in range(3)]
    body = "import npzstream\nprint([bool(r) for r in npzstream.scan(%r, workers=2)])\n" % files
    script = write(tmp, "unguarded.py", body.encode())
    r = subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=120, cwd=tmp)
    last = r.stderr.strip().splitlines()[-1]
    assert r.returncode != 0 and last.startswith("RuntimeError: npzstream.scan") and '__name__ == "__main__"' in last, \
        r.stderr[-3000:]
    guarded = write(tmp, "guarded.py", ("if __name__ == '__main__':\n" + "".join("    " + x + "\n" for x in
                                                                               body.splitlines())).encode())
    r = subprocess.run([sys.executable, guarded], capture_output=True, text=True, timeout=120, cwd=tmp)
    assert r.returncode == 0 and r.stdout.strip() == "[True, True, True]", r.stderr[-3000:]


def test_gc_of_a_stream_holding_a_destination():
    """A stream collected with the memoryview it writes into (an array's, mid-member): the
    collector once cleared the memoryview first, and the stream's release of it then crashed."""
    code = ("import gc, io, numpy as np, npzstream\n"
            "from npzstream import _npzstream\n"
            "b = io.BytesIO(); np.save(b, np.arange(100000, dtype='<f8')); data = b.getvalue()\n"
            "class Holder:\n"
            "    pass\n"
            "for i in range(20):\n"
            "    mv = memoryview(bytearray(800000))  # tracked before the rest of the cycle: cleared first\n"
            "    h = Holder()\n"
            "    h.mv = mv\n"
            "    h.s = _npzstream.Stream(npzstream._limits._limits({}), lambda m, h=h: h.mv, True, 1 << 40, 1, None)\n"
            "    h.s.feed(data[:len(data) // 2])  # the stream holds an export of mv\n"
            "    del h, mv\n"
            "    gc.collect()\n"
            "    ld = npzstream.Loader()  # the same through the public API, in a cycle of its own\n"
            "    ld.feed(data[:len(data) // 2])\n"
            "    ld.me = ld\n"
            "    del ld\n"
            "    gc.collect()\n"
            "print('ok')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout == "ok\n", (r.returncode, r.stderr[-2000:])
