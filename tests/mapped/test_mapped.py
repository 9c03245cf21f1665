"""npzstream.open() of a file twice the size of RAM: it maps, validates and its arrays read.

Two sparse files (holes read as zeros: they take almost no disk) with a few non-zero markers far
apart: a .npy of one float64 array, and an .npz with that array stored in a ZIP64 archive written
here record by record (its CRC-32 computed by combining the CRCs of the pieces, never by reading
the holes).  Each is opened in a fresh process with .venv-pkg's package: the pass reads every page
of the .npz (the CRC-32), the .npy's data is not read until touched; then the markers are read
back through the views and a page of every 64 MiB is touched.  Checked: the markers, the verdict,
verify(), and that the process's private memory (RssAnon) grew by less than 64 MiB: a load() of
the same file could not fit in RAM.  make test (--quick): both files of 3 GiB, verify() too;
make test-all: the .npz twice the size of RAM (its pass reads every page, for the CRC-32), the
.npy of 3 GiB.

A file system without sparse files, or a disk too small, is a skip with its reason; so is a
missing .venv-pkg (make python-env).
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MARKS = 7          # markers, spread over the data
ANON_LIMIT = 64 << 20


def ram():
    for line in open("/proc/meminfo"):
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) << 10
    raise RuntimeError("no MemTotal")


# ---- CRC-32 of a sparse layout: crc(A || B) = combine(crc(A), crc(B), len(B)) (zlib's algorithm) --
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import crc32_combine  # noqa: E402


def crc_zeros(n, cache={}):
    """CRC-32 of n zero bytes, by doubling."""
    if n in cache:
        return cache[n]
    if n <= 1 << 16:
        c = zlib.crc32(bytes(n))
    else:
        h = n // 2
        c = crc32_combine(crc_zeros(h), crc_zeros(n - h), n - h)
    cache[n] = c
    return c


def npy_header(n):
    d = ("{'descr': '<f8', 'fortran_order': False, 'shape': (%d,), }" % n).encode()
    pad = 64 - (10 + len(d) + 1) % 64
    d += b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d


def layout(data_bytes):
    """The markers: (byte offset in the data, 8 bytes), 8-aligned, far apart."""
    n = data_bytes // 8
    return [((n - 1) * i // (MARKS - 1) * 8, struct.pack("<d", 1.5 + i)) for i in range(MARKS)]


def write_sparse(path, prefix, data_bytes, marks, suffix=b""):
    """prefix, data_bytes of zeros with the markers in them, suffix; returns the data's CRC-32."""
    with open(path, "wb") as f:
        f.write(prefix)
        f.truncate(len(prefix) + data_bytes)
        for off, b in marks:
            f.seek(len(prefix) + off)
            f.write(b)
        f.seek(len(prefix) + data_bytes)
        f.write(suffix)
    crc, at = 0, 0
    for off, b in marks:
        crc = crc32_combine(crc, crc_zeros(off - at), off - at)
        crc = crc32_combine(crc, zlib.crc32(b), len(b))
        at = off + len(b)
    return crc32_combine(crc, crc_zeros(data_bytes - at), data_bytes - at)


def write_npz(path, data_bytes, marks):
    """An .npz of one stored member a.npy (ZIP64 local header, central entry, end records)."""
    name = b"a.npy"
    hdr = npy_header(data_bytes // 8)
    size = len(hdr) + data_bytes
    lfh_extra = struct.pack("<HHQQ", 1, 16, size, size)
    lfh = struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0, 0, 0, 0x21, 0, 0xFFFFFFFF, 0xFFFFFFFF, len(name),
                      len(lfh_extra)) + name + lfh_extra
    data_crc = write_sparse(path, lfh + hdr, data_bytes, marks)
    crc = crc32_combine(zlib.crc32(hdr), data_crc, data_bytes)
    with open(path, "r+b") as f:
        f.seek(14)
        f.write(struct.pack("<I", crc))
        f.seek(0, 2)
        cd_at = f.tell()
        cd_extra = struct.pack("<HHQQ", 1, 16, size, size)
        cdh = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, 0, 0, 0x21, crc, 0xFFFFFFFF, 0xFFFFFFFF,
                          len(name), len(cd_extra), 0, 0, 0, 0, 0) + name + cd_extra
        f.write(cdh)
        z64_at = f.tell()
        f.write(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, 1, 1, len(cdh), cd_at))
        f.write(struct.pack("<IIQI", 0x07064B50, 0, z64_at, 1))
        f.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(cdh), 0xFFFFFFFF, 0))


CHILD = r"""
import json, sys, time, numpy as np, npzstream
def status(k):
    for l in open('/proc/self/status'):
        if l.startswith(k):
            return int(l.split()[1]) << 10
path, marks = sys.argv[1], json.loads(sys.argv[2])
base = status('RssAnon')
t0 = time.time()
z = npzstream.open(path, max_total_bytes=1 << 50)
t_open = time.time() - t0
a = z.array if z.format == 'npy' else z['a']
got = [float(a[off // 8]) for off, v in marks]
step = (64 << 20) // 8
touched = float(a[::step].sum())
t1 = time.time()
ok = bool(z.verify()) if sys.argv[3] == '1' else True
t_verify = time.time() - t1
print(json.dumps({"format": z.format, "n": int(a.shape[0]), "got": got, "touched": touched,
                  "anon_grew": status('RssAnon') - base, "rss_file": status('RssFile'), "verify": ok,
                  "t_open": t_open, "t_verify": t_verify, "writeable": bool(a.flags.writeable)}))
"""


GIB = 1 << 30
PY = os.path.join(ROOT, ".venv-pkg", "bin", "python")


@pytest.fixture(scope="module")
def big_dir(tmp_path_factory):
    """A folder for the big files (NPZS_BIG_DIR, else pytest's): sparse, or with room for them."""
    if not os.access(PY, os.X_OK) or subprocess.run([PY, "-c", "import npzstream"], capture_output=True).returncode:
        pytest.skip(".venv-pkg is not set up (make python-env)")
    big = os.environ.get("NPZS_BIG_DIR")
    d = tempfile.mkdtemp(prefix="npzs-mapped-", dir=big) if big else str(tmp_path_factory.mktemp("mapped"))
    probe = os.path.join(d, "npzs-mapped-probe")
    with open(probe, "wb") as f:
        f.truncate(1 << 30)
    sparse = os.stat(probe).st_blocks * 512 < (1 << 20)
    os.unlink(probe)
    print("mapped: RAM %.1f GiB, sparse files: %s" % (ram() / GIB, sparse))
    yield d, sparse
    shutil.rmtree(d, ignore_errors=True)


# make test: a .npy and an .npz of 3 GiB, verify() too; make test-all: the .npz twice the size of RAM
# (the pass reads every page for its CRC-32; verify() would read them all again)
JOBS = [pytest.param("big.npy", lambda: 3 * GIB, True, id="npy-3GiB"),
        pytest.param("big.npz", lambda: 3 * GIB, True, id="npz-3GiB"),
        pytest.param("big.npz", lambda: (2 * ram() // (1 << 20) + 64) << 20, False, id="npz-twice-RAM", marks=pytest.mark.rest)]


@pytest.mark.parametrize("name,size,verify", JOBS)
def test_mapped(big_dir, name, size, verify):
    d, sparse = big_dir
    nbytes = size()
    free = os.statvfs(d).f_bavail * os.statvfs(d).f_frsize
    if not sparse and free < 2 * nbytes + (1 << 30):
        pytest.skip("%s has no sparse files and %.1f GiB free, %.1f GiB needed" % (d, free / GIB, 2 * nbytes / GIB))
    marks = layout(nbytes)
    path = os.path.join(d, name)
    try:
        if name.endswith(".npy"):
            write_sparse(path, npy_header(nbytes // 8), nbytes, marks)
        else:
            write_npz(path, nbytes, marks)
        want = [struct.unpack("<d", b)[0] for _, b in marks]
        t0 = time.time()
        r = subprocess.run([PY, "-c", CHILD, path, json.dumps([[o, 0] for o, _ in marks]), "1" if verify else "0"],
                           capture_output=True, text=True)
        dt = time.time() - t0
    finally:
        if os.path.exists(path):
            os.unlink(path)
    assert r.returncode == 0, "exit %d: %s" % (r.returncode, r.stderr[-3000:])
    out = json.loads(r.stdout)
    print("mapped: %s: %s, %.1f GiB: open %.1fs, verify %s, private memory +%.1f MiB, file pages resident %.1f GiB"
          " (%.1fs in all)" % (name, out["format"], nbytes / GIB, out["t_open"], "%.1fs" % out["t_verify"] if verify
                               else "not run", out["anon_grew"] / 2**20, out["rss_file"] / GIB, dt))
    assert out["got"] == want, "markers %r, want %r" % (out["got"], want)
    assert out["n"] == nbytes // 8, "shape %d" % out["n"]
    assert out["verify"], "verify() failed"
    assert out["anon_grew"] < ANON_LIMIT, "private memory grew %d bytes" % out["anon_grew"]
    assert not out["writeable"], "a writeable view"
